/* Authors: The dpsk developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * ChaCha20 block function (RFC 8439 section 2.3, 8/4/1 blocks side by side) and the
 * fast-key-erasure generator of dpsk._core._random.SecureBitGenerator; the module
 * docstring of dpsk/_core/_random.pyx describes the construction.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <windows.h>
#include <bcrypt.h>
#pragma comment(lib, "bcrypt")
#else
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#if defined(__APPLE__)
#include <sys/random.h>
#endif
#endif

#include "chacha20.h"

/* Advanced in every forked child (pthread_atfork); compared on every draw. */
static volatile uint64_t dpsk_fork_epoch = 0;

static void dpsk_fork_child(void) { dpsk_fork_epoch++; }

int dpsk_register_fork_handler(void) {
#if defined(_WIN32)
    return 0;  /* no fork on Windows */
#else
    return pthread_atfork(NULL, NULL, dpsk_fork_child);
#endif
}

/* Zeroing that the compiler may not drop as a dead store. */
void dpsk_wipe(void *p, size_t n) {
#if defined(__GNUC__) || defined(__clang__)
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
#else
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (n--) *v++ = 0;
#endif
}

static int dpsk_os_entropy(void *buf, size_t len) {  /* len <= 256 */
#if defined(_WIN32)
    return BCryptGenRandom(NULL, (PUCHAR)buf, (ULONG)len,
                           BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0 ? 0 : -1;
#elif defined(__linux__) && defined(SYS_getrandom)
    /* getrandom(2) directly: getentropy() needs glibc >= 2.25 (manylinux2014 has 2.17). */
    uint8_t *p = (uint8_t *)buf;
    while (len > 0) {
        long got = syscall(SYS_getrandom, p, len, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += got;
        len -= (size_t)got;
    }
    return 0;
#else
    return getentropy(buf, len);
#endif
}

/* RFC 8439 section 2.3, on NL blocks at once: each of the 16 state words is a
   vector holding that word for NL consecutive block counters (VT is a vector type
   of NL uint32 lanes, or plain uint32_t for NL == 1). Writes NL blocks serialised
   little-endian. */
#define DPSK_ROTL(v, c) (((v) << (c)) | ((v) >> (32 - (c))))
#define DPSK_QR(a, b, c, d) \
    a += b; d ^= a; d = DPSK_ROTL(d, 16); c += d; b ^= c; b = DPSK_ROTL(b, 12); \
    a += b; d ^= a; d = DPSK_ROTL(d, 8); c += d; b ^= c; b = DPSK_ROTL(b, 7);
#define DPSK_CHACHA20_LANES(NAME, ATTR, VT, NL) \
ATTR static void NAME(const uint32_t key[8], uint32_t counter, \
                      const uint32_t nonce[3], uint8_t *out) { \
    static const uint32_t sigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u}; \
    VT in[16], x[16]; \
    uint32_t lane[NL]; \
    int i, j, r; \
    for (i = 0; i < 16; i++) { \
        uint32_t w = i < 4 ? sigma[i] : i < 12 ? key[i - 4] : i == 12 ? 0 : nonce[i - 13]; \
        for (j = 0; j < NL; j++) lane[j] = w; \
        if (i == 12) for (j = 0; j < NL; j++) lane[j] = counter + (uint32_t)j; \
        memcpy(&in[i], lane, sizeof(lane)); \
        x[i] = in[i]; \
    } \
    for (r = 0; r < 10; r++) { \
        DPSK_QR(x[0], x[4], x[8], x[12]) DPSK_QR(x[1], x[5], x[9], x[13]) \
        DPSK_QR(x[2], x[6], x[10], x[14]) DPSK_QR(x[3], x[7], x[11], x[15]) \
        DPSK_QR(x[0], x[5], x[10], x[15]) DPSK_QR(x[1], x[6], x[11], x[12]) \
        DPSK_QR(x[2], x[7], x[8], x[13]) DPSK_QR(x[3], x[4], x[9], x[14]) \
    } \
    for (i = 0; i < 16; i++) { \
        x[i] += in[i]; \
        memcpy(lane, &x[i], sizeof(lane)); \
        for (j = 0; j < NL; j++) { \
            uint8_t *o = out + 64 * j + 4 * i; \
            o[0] = (uint8_t)lane[j]; o[1] = (uint8_t)(lane[j] >> 8); \
            o[2] = (uint8_t)(lane[j] >> 16); o[3] = (uint8_t)(lane[j] >> 24); \
        } \
    } \
    dpsk_wipe(x, sizeof(x)); dpsk_wipe(in, sizeof(in)); dpsk_wipe(lane, sizeof(lane)); \
}

#if defined(__GNUC__) || defined(__clang__)
/* GCC/Clang vector extensions: 4 lanes in SSE2/NEON registers everywhere, and 8 lanes
   in AVX2 registers when the CPU has them (selected at run time). */
typedef uint32_t dpsk_u32x4 __attribute__((vector_size(16)));
DPSK_CHACHA20_LANES(dpsk_chacha20_x4, , dpsk_u32x4, 4)
#if defined(__x86_64__) || defined(__i386__)
#define DPSK_HAVE_AVX2_PATH 1
typedef uint32_t dpsk_u32x8 __attribute__((vector_size(32)));
DPSK_CHACHA20_LANES(dpsk_chacha20_x8, __attribute__((target("avx2"))), dpsk_u32x8, 8)
#endif
#else
DPSK_CHACHA20_LANES(dpsk_chacha20_x1, , uint32_t, 1)
#endif

int dpsk_chacha_portable_only = 0;

/* `nblocks` (a multiple of DPSK_CC_LANES) ChaCha20 blocks with counters counter0,
   counter0 + 1, ..., serialised little-endian into `out`. */
void dpsk_chacha20_blocks(const uint32_t key[8], uint32_t counter0,
                          const uint32_t nonce[3], int nblocks, uint8_t *out) {
    int b;
#if defined(DPSK_HAVE_AVX2_PATH)
    static int use_avx2 = -1;
    if (use_avx2 < 0) use_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (use_avx2 && !dpsk_chacha_portable_only) {
        for (b = 0; b < nblocks; b += 8)
            dpsk_chacha20_x8(key, counter0 + (uint32_t)b, nonce, out + 64 * (size_t)b);
        return;
    }
#endif
#if defined(__GNUC__) || defined(__clang__)
    for (b = 0; b < nblocks; b += 4)
        dpsk_chacha20_x4(key, counter0 + (uint32_t)b, nonce, out + 64 * (size_t)b);
#else
    for (b = 0; b < nblocks; b++)
        dpsk_chacha20_x1(key, counter0 + (uint32_t)b, nonce, out + 64 * (size_t)b);
#endif
}

uint32_t dpsk_load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16)
           | ((uint32_t)p[3] << 24);
}

/* XOR fresh OS entropy into the key; abort if the OS has none to give. */
static void dpsk_secure_reseed(dpsk_secure_state *s) {
    uint32_t fresh[8];
    int i;
    if (dpsk_os_entropy(fresh, sizeof(fresh)) != 0) {
        fputs("dpsk: the operating system's random source failed; aborting rather "
              "than producing predictable noise\n", stderr);
        abort();
    }
    for (i = 0; i < 8; i++) s->key[i] ^= fresh[i];
    dpsk_wipe(fresh, sizeof(fresh));
    s->refills = 0;
    s->epoch = dpsk_fork_epoch;
    s->has_uint32 = 0;
}

/* Fast key erasure: one batch of key stream per key; its first 32 bytes are the
   next key, the rest is output. */
static void dpsk_secure_refill(dpsk_secure_state *s) {
    static const uint32_t zero_nonce[3] = {0, 0, 0};
    uint8_t stream[DPSK_CC_BLOCKS * 64];
    int i;
    if (s->epoch != dpsk_fork_epoch || s->refills >= DPSK_CC_RESEED_REFILLS)
        dpsk_secure_reseed(s);
    dpsk_chacha20_blocks(s->key, 0, zero_nonce, DPSK_CC_BLOCKS, stream);
    for (i = 0; i < 8; i++) s->key[i] = dpsk_load_le32(stream + 4 * i);
    memcpy(s->buf, stream + 32, sizeof(s->buf));
    dpsk_wipe(stream, sizeof(stream));
    s->pos = 0;
    s->refills++;
}

void dpsk_secure_init(dpsk_secure_state *s) {
    memset(s, 0, sizeof(*s));
    dpsk_secure_reseed(s);
    dpsk_secure_refill(s);
}

uint64_t dpsk_secure_next_uint64(void *st) {
    dpsk_secure_state *s = (dpsk_secure_state *)st;
    uint64_t v;
    if (s->pos >= DPSK_CC_WORDS || s->epoch != dpsk_fork_epoch) dpsk_secure_refill(s);
    v = s->buf[s->pos];
    s->buf[s->pos++] = 0;
    return v;
}

uint32_t dpsk_secure_next_uint32(void *st) {
    dpsk_secure_state *s = (dpsk_secure_state *)st;
    uint64_t v;
    if (s->has_uint32 && s->epoch == dpsk_fork_epoch) {
        s->has_uint32 = 0;
        return s->uinteger;
    }
    v = dpsk_secure_next_uint64(st);
    s->has_uint32 = 1;
    s->uinteger = (uint32_t)(v >> 32);
    return (uint32_t)v;
}

double dpsk_secure_next_double(void *st) {
    return (double)(dpsk_secure_next_uint64(st) >> 11) * (1.0 / 9007199254740992.0);
}
