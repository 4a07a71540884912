# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Randomness for every kernel: ``bitgen_t`` access and the secure bit generator.

Contents
--------
``get_bitgen(rng)`` (cdef, see ``_random.pxd``)
    The ``bitgen_t*`` behind a :class:`numpy.random.Generator`. Kernels draw through it
    while holding ``rng.bit_generator.lock`` with the GIL released, so a kernel consumes
    the same stream as numpy's own methods.

:class:`SecureBitGenerator`
    A cryptographically secure :class:`numpy.random.BitGenerator`:
    ``numpy.random.Generator(SecureBitGenerator())`` runs every numpy and dpsk sampler on
    it. It is what ``dpsk.utils.check_random_state(None)`` returns.

``check_out_buffer(out, name, dtypes)``
    The check every kernel wrapper runs on a caller-allocated output buffer (a writable,
    C-contiguous 1-d ndarray of an accepted dtype), so that misuse raises a message that
    names the parameter instead of a Cython buffer error.

Design of the secure generator
------------------------------
*Cipher.* ChaCha20 as specified in RFC 8439 (20 rounds, 256-bit key, 32-bit block
counter, 96-bit nonce), used as a fast-key-erasure generator (Bernstein, "Fast-key-erasure
random-number generators", 2017): each refill runs ChaCha20 under the current key for 32
blocks (2 KiB); the first 32 bytes of that key stream replace the key and the remaining
2,016 bytes are handed out as 252 64-bit words. A key therefore encrypts exactly one batch
(the counter and the zero nonce are never reused under one key), and the key that
produced the words already handed out is gone from memory (backtracking resistance).
Words are zeroed in the buffer as they are handed out. The ChaCha20 block function is
tested against the RFC 8439 test vectors and an independent reference implementation.
The C code is ``dpsk/_core/src/chacha20.c`` (sizes and declarations in ``chacha20.h``).

*Keying.* The initial key is 32 bytes from the operating system's CSPRNG
(``getrandom(2)`` on Linux, ``getentropy(3)`` on other POSIX systems, ``BCryptGenRandom``
on Windows; only the Linux path is exercised by the test suite).
Every 32,768 refills (about 63 MiB of output) 32 fresh bytes from the operating system
are XOR-ed into the key. If the operating system cannot provide entropy the process is
aborted with a message on stderr: no noise is better than predictable noise.

*Fork safety.* A ``pthread_atfork`` child handler advances a process-wide fork epoch.
Every draw compares the generator's epoch with it, so the first draw in a forked child
discards the inherited buffer (and any buffered half word), XORs fresh OS entropy into
the key and refills: a child never replays its parent's stream, nor does a second child
replay the first's.

*Threads.* The state is guarded by the bit generator's ``lock``, which numpy's
Generator methods and every dpsk kernel hold while drawing.

*No seeding, no state.* There is no way to seed it or to read or set its state (the
``state`` property reports only the class name and refuses assignment): for
reproducible streams use an int ``random_state`` (PCG64), for tests and research only.
``spawn`` returns fresh, independently keyed generators.

*Pickling and copying.* Pickling carries no key material: a pickled (or
``copy.deepcopy``-ed) SecureBitGenerator unpickles as a *fresh* generator keyed from the
operating system, so two copies never share a stream (this is also what a
``numpy.random.Generator`` on it does when pickled to a worker process).

*Speed.* The block function works on 8 blocks side by side in loops the C compiler
vectorises; ``Generator(SecureBitGenerator()).standard_normal`` runs within a small factor
of PCG64 (see ``benchmarks/bench_noise.py``).
"""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from numpy.random cimport BitGenerator, bitgen_t

import numpy as np
from numpy.random.bit_generator import SeedlessSeedSequence

cdef const char* _CAPSULE_NAME = "BitGenerator"

# The C code (ChaCha20 and the fast-key-erasure generator) is dpsk/_core/src/chacha20.c,
# compiled into this extension by setup.py.
cdef extern from "src/chacha20.h":
    int DPSK_CC_LANES
    int dpsk_chacha_portable_only
    ctypedef struct dpsk_secure_state:
        pass
    int dpsk_register_fork_handler()
    void dpsk_wipe(void* p, size_t n) nogil
    void dpsk_chacha20_blocks(const uint32_t* key, uint32_t counter0, const uint32_t* nonce,
                              int nblocks, uint8_t* out) nogil
    uint32_t dpsk_load_le32(const uint8_t* p) nogil
    void dpsk_secure_init(dpsk_secure_state* s) nogil
    uint64_t dpsk_secure_next_uint64(void* st) nogil
    uint32_t dpsk_secure_next_uint32(void* st) nogil
    double dpsk_secure_next_double(void* st) nogil


if dpsk_register_fork_handler() != 0:  # pragma: no cover - only fails when out of memory
    raise ImportError("dpsk._core._random: could not register the fork handler")


cdef bitgen_t* get_bitgen(object rng) except NULL:
    """Return the ``bitgen_t*`` behind a :class:`numpy.random.Generator`.

    The caller must keep ``rng`` alive and hold ``rng.bit_generator.lock`` while drawing.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator, got {type(rng).__name__}; "
            "use dpsk.utils.check_random_state to build one"
        )
    capsule = rng.bit_generator.capsule
    if not PyCapsule_IsValid(capsule, _CAPSULE_NAME):
        raise ValueError("rng.bit_generator does not expose a valid BitGenerator capsule")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, _CAPSULE_NAME)


def check_out_buffer(out, str name, tuple dtypes):
    """Check that ``out`` is a writable, C-contiguous 1-d ndarray of one of ``dtypes``.

    Kernel wrappers call this before dispatching to their typed implementation, so that
    misuse raises an error naming the parameter.

    Raises
    ------
    TypeError
        If ``out`` is not an ndarray or has another dtype.
    ValueError
        If ``out`` is not 1-d, not C-contiguous or read-only.
    """
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(out).__name__}")
    if out.dtype not in dtypes:
        allowed = ", ".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"{name} must have dtype {allowed}; got {out.dtype.name}")
    if out.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {out.shape}")
    if not out.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous (it is written in place)")
    if not out.flags.writeable:
        raise ValueError(f"{name} is read-only; the kernel writes into it in place")


cdef class SecureBitGenerator(BitGenerator):
    """Cryptographically secure bit generator (ChaCha20, keyed by the operating system).

    Use it through a :class:`numpy.random.Generator`::

        rng = numpy.random.Generator(SecureBitGenerator())

    It takes no seed: every instance, every unpickled copy and every forked child draws
    a fresh key from the operating system's CSPRNG. See the module docstring of
    ``dpsk._core._random`` for the construction (RFC 8439 ChaCha20 as a fast-key-erasure
    generator, periodic reseeding, fork and thread safety).

    Notes
    -----
    **Privacy.** Noise drawn from numpy's default PCG64 is predictable by anyone who
    learns the seed or the (invertible) state; noise drawn from this generator is as
    unpredictable as ChaCha20 keystream under a key from the operating system. It is
    dpsk's default (``random_state=None``).
    """

    cdef dpsk_secure_state rng_state

    def __init__(self):
        # A seedless seed sequence: this generator is keyed from the OS in C, and must not
        # look as if it could be reproduced from a seed.
        BitGenerator.__init__(self, SeedlessSeedSequence())
        dpsk_secure_init(&self.rng_state)
        self._bitgen.state = <void*> &self.rng_state
        self._bitgen.next_uint64 = &dpsk_secure_next_uint64
        self._bitgen.next_uint32 = &dpsk_secure_next_uint32
        self._bitgen.next_double = &dpsk_secure_next_double
        self._bitgen.next_raw = &dpsk_secure_next_uint64

    def __dealloc__(self):
        dpsk_wipe(&self.rng_state, sizeof(self.rng_state))

    @property
    def state(self):
        """Only the class name: the key is never exposed, and cannot be set."""
        return {"bit_generator": type(self).__name__}

    @state.setter
    def state(self, value):
        raise TypeError(
            "SecureBitGenerator cannot be seeded or have its state set; use an int "
            "random_state (PCG64) for a reproducible stream in tests"
        )

    def spawn(self, int n_children):
        """Return ``n_children`` new, independently OS-keyed SecureBitGenerators."""
        if n_children < 0:
            raise ValueError("n_children must be non-negative")
        return [type(self)() for _ in range(n_children)]

    def __reduce__(self):
        # No key material in a pickle: unpickling builds a freshly keyed generator.
        return (type(self), ())


cdef uint64_t _scripted_next_uint64(void* st) noexcept nogil:
    cdef _ScriptState* s = <_ScriptState*> st
    cdef uint64_t v = s.words[s.pos % s.n]
    s.pos += 1
    return v


cdef uint32_t _scripted_next_uint32(void* st) noexcept nogil:
    return <uint32_t> _scripted_next_uint64(st)


cdef double _scripted_next_double(void* st) noexcept nogil:
    return (_scripted_next_uint64(st) >> 11) * (1.0 / 9007199254740992.0)


ctypedef struct _ScriptState:
    uint64_t* words
    Py_ssize_t n
    Py_ssize_t pos


cdef class _ScriptedBitGenerator(BitGenerator):
    """Test helper: a bit generator replaying a fixed list of 64-bit words (cyclically).

    Lets tests drive the exact samplers down rare branches (ties, carries) on purpose.
    """

    cdef _ScriptState script
    cdef object _words

    def __init__(self, words):
        BitGenerator.__init__(self, SeedlessSeedSequence())
        self._words = np.ascontiguousarray(words, dtype=np.uint64)
        if self._words.size == 0:
            raise ValueError("words must not be empty")
        cdef uint64_t[::1] view = self._words
        self.script.words = &view[0]
        self.script.n = view.shape[0]
        self.script.pos = 0
        self._bitgen.state = <void*> &self.script
        self._bitgen.next_uint64 = &_scripted_next_uint64
        self._bitgen.next_uint32 = &_scripted_next_uint32
        self._bitgen.next_double = &_scripted_next_double
        self._bitgen.next_raw = &_scripted_next_uint64

    @property
    def position(self):
        """Number of words handed out so far."""
        return self.script.pos


def _chacha20_blocks_py(bytes key, uint32_t counter, bytes nonce, int nblocks):
    """Test wrapper: ``nblocks`` ChaCha20 blocks (RFC 8439) as bytes, via the lane code."""
    if len(key) != 32 or len(nonce) != 12 or nblocks < 0:
        raise ValueError("key must be 32 bytes, nonce 12 bytes, nblocks >= 0")
    cdef const uint8_t* k = key
    cdef const uint8_t* nn = nonce
    cdef uint32_t kw[8]
    cdef uint32_t nw[3]
    cdef int i
    for i in range(8):
        kw[i] = dpsk_load_le32(k + 4 * i)
    for i in range(3):
        nw[i] = dpsk_load_le32(nn + 4 * i)
    cdef int padded = (nblocks + DPSK_CC_LANES - 1) // DPSK_CC_LANES * DPSK_CC_LANES
    out = bytearray(64 * max(padded, 1))
    cdef uint8_t[::1] view = out
    if padded:
        dpsk_chacha20_blocks(kw, counter, nw, padded, &view[0])
    return bytes(out[: 64 * nblocks])


def _set_chacha_portable_only_py(bint flag):
    """Test hook: use only the portable 4-lane ChaCha20 code (no AVX2) while ``flag``."""
    global dpsk_chacha_portable_only
    dpsk_chacha_portable_only = flag


def _next_uint64_py(rng, Py_ssize_t n):
    """Test wrapper: ``n`` raw 64-bit outputs of ``rng``'s bit generator, drawn through ``bitgen_t``."""
    cdef bitgen_t* state = get_bitgen(rng)
    out = np.empty(n, dtype=np.uint64)
    cdef unsigned long long[::1] view = out
    cdef Py_ssize_t i
    with rng.bit_generator.lock, nogil:
        for i in range(n):
            view[i] = state.next_uint64(state.state)
    return out
