# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""C-level exact samplers, for kernels that draw discrete noise inside their own loops.

Usage (the lattice noise in ``_noise.pyx``)::

    cdef BitPool pool
    bit_pool_init(&pool, get_bitgen(rng))
    with rng.bit_generator.lock, nogil:
        fill_discrete_laplace(&pool, &k[0], n, t_num, t_den)

See the module docstring of ``_exact.pyx`` for the algorithms and parameter ranges; the
callers must check those ranges before ``nogil`` (as ``_exact``'s own wrappers do).
"""

from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t


ctypedef struct BitPool:
    # Random bits taken one at a time from 64-bit words of the bit generator.
    bitgen_t* state
    uint64_t bits
    int n_bits


ctypedef struct U128:
    # Unsigned 128-bit integer as two words (portable: no compiler extension needed).
    uint64_t hi
    uint64_t lo


ctypedef struct GaussianParams:
    # sigma^2 = n / d, t = floor(sigma) + 1, q = 2 n d t^2 (the acceptance denominator).
    uint64_t n
    uint64_t d
    uint64_t t
    uint64_t dt
    U128 q


cdef inline void bit_pool_init(BitPool* pool, bitgen_t* state) noexcept nogil:
    pool.state = state
    pool.bits = 0
    pool.n_bits = 0


cdef inline U128 u128_mul64(uint64_t a, uint64_t b) noexcept nogil:
    """Exact product of two 64-bit words (schoolbook on 32-bit halves)."""
    cdef uint64_t mask = 0xFFFFFFFFu
    cdef uint64_t p0 = (a & mask) * (b & mask)
    cdef uint64_t p1 = (a & mask) * (b >> 32)
    cdef uint64_t p2 = (a >> 32) * (b & mask)
    cdef uint64_t p3 = (a >> 32) * (b >> 32)
    cdef uint64_t mid = (p0 >> 32) + (p1 & mask) + (p2 & mask)
    cdef U128 r
    r.lo = (p0 & mask) | (mid << 32)
    r.hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32)
    return r


cdef inline bint u128_ge(U128 a, U128 b) noexcept nogil:
    return a.hi > b.hi or (a.hi == b.hi and a.lo >= b.lo)


cdef inline U128 u128_sub(U128 a, U128 b) noexcept nogil:
    """a - b for a >= b."""
    cdef U128 r
    r.lo = a.lo - b.lo
    r.hi = a.hi - b.hi - (a.lo < b.lo)
    return r


cdef inline U128 u128_add(U128 a, U128 b) noexcept nogil:
    """a + b (the caller guarantees no overflow)."""
    cdef U128 r
    r.lo = a.lo + b.lo
    r.hi = a.hi + b.hi + (r.lo < a.lo)
    return r


cdef int bernoulli_exp_u64(BitPool* pool, uint64_t num, uint64_t den) noexcept nogil
cdef uint64_t sample_geometric(BitPool* pool, uint64_t t_num, uint64_t t_den) noexcept nogil
cdef int64_t sample_discrete_laplace(BitPool* pool, uint64_t t_num, uint64_t t_den) noexcept nogil
cdef int64_t sample_discrete_gaussian(BitPool* pool, const GaussianParams* params) noexcept nogil
cdef void fill_discrete_laplace(BitPool* pool, int64_t* out, Py_ssize_t n, uint64_t t_num,
                                uint64_t t_den) noexcept nogil
cdef void fill_discrete_gaussian(BitPool* pool, int64_t* out, Py_ssize_t n,
                                 const GaussianParams* params) noexcept nogil
cdef int fill_gaussian_params(GaussianParams* params, object num, object den) except -1
