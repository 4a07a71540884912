/* Authors: The dpsk developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * ChaCha20 (RFC 8439) and the fast-key-erasure secure bit generator built on it, for
 * dpsk._core._random (which documents the construction). Compiled as a source of that
 * extension (setup.py); Cython declares these names with cdef extern from "src/chacha20.h".
 */
#ifndef DPSK_CHACHA20_H
#define DPSK_CHACHA20_H

#include <stddef.h>
#include <stdint.h>

/* Blocks computed side by side; requests are rounded up to a multiple of this. */
#define DPSK_CC_LANES 8
/* Blocks per refill (2 KiB of key stream): 32 bytes become the next key, the
   remaining DPSK_CC_WORDS 64-bit words are output. */
#define DPSK_CC_BLOCKS 32
#define DPSK_CC_WORDS ((DPSK_CC_BLOCKS * 64 - 32) / 8)
/* Fresh OS entropy is XOR-ed into the key every this many refills. */
#define DPSK_CC_RESEED_REFILLS 32768

typedef struct {
    uint32_t key[8];
    uint64_t buf[DPSK_CC_WORDS];
    int pos;
    int has_uint32;
    uint32_t uinteger;
    uint64_t refills;
    uint64_t epoch;
} dpsk_secure_state;

/* Tests set this to check the portable path on machines that have AVX2. */
extern int dpsk_chacha_portable_only;

/* pthread_atfork child handler advancing the fork epoch; 0 on success. */
int dpsk_register_fork_handler(void);
/* Zeroing that the compiler may not drop as a dead store. */
void dpsk_wipe(void *p, size_t n);
/* `nblocks` (a multiple of DPSK_CC_LANES) ChaCha20 blocks with counters counter0,
   counter0 + 1, ..., serialised little-endian into `out`. */
void dpsk_chacha20_blocks(const uint32_t key[8], uint32_t counter0, const uint32_t nonce[3],
                          int nblocks, uint8_t *out);
uint32_t dpsk_load_le32(const uint8_t *p);
/* Key `s` from the operating system and fill its first batch. */
void dpsk_secure_init(dpsk_secure_state *s);
/* numpy bitgen_t callbacks; `st` is a dpsk_secure_state*. */
uint64_t dpsk_secure_next_uint64(void *st);
uint32_t dpsk_secure_next_uint32(void *st);
double dpsk_secure_next_double(void *st);

#endif  /* DPSK_CHACHA20_H */
