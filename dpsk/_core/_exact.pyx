# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact discrete samplers in integer arithmetic (Canonne, Kamath & Steinke 2020).

Every sampler here consumes only uniformly random bits from a
:class:`numpy.random.Generator`'s bit generator (holding its lock, GIL released) and
computes with integers: no floating point touches the sampled values, so their
distribution is exactly the one stated, up to the explicitly bounded truncations below.
The reference is C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
Differential Privacy", NeurIPS 2020 (CKS20), Algorithms 1-3.

Functions
---------
``bernoulli_exp(num, den, rng) -> bool``
    One draw of Bernoulli(exp(-num/den)) for integers ``num >= 0``, ``den >= 1``.
``bernoulli_exp_fill(out, num, den, rng)``
    Fills the 1-d bool array ``out`` with independent Bernoulli(exp(-num/den)) draws.
``geometric(out, t_num, t_den, rng)``
    Fills the 1-d int64 array ``out`` with P(k) = (1 - exp(-1/t)) exp(-k/t), k >= 0,
    where t = t_num / t_den (the magnitude law of the discrete Laplace).
``discrete_laplace(out, t_num, t_den, rng)``
    Fills ``out`` (int64) with P(k) proportional to exp(-|k| / t), t = t_num / t_den.
``discrete_gaussian(out, sigma2_num, sigma2_den, rng)``
    Fills ``out`` (int64) with P(k) proportional to exp(-k^2 / (2 sigma^2)),
    sigma^2 = sigma2_num / sigma2_den.
``round_up_sigma2(sigma2) -> (num, den)``
    The exact rational ``num / den >= sigma2`` closest to the ``fractions.Fraction``
    ``sigma2`` within the ranges below (relative excess below 2**-47 when sigma^2 >= 1):
    how the lattice Gaussian in ``_noise`` turns a float sigma into exact parameters.

All parameters are Python (or numpy) integers; the wrappers raise ``TypeError`` for
anything else and ``ValueError`` outside the ranges. ``out`` must be a writable
C-contiguous 1-d array of the stated dtype. Bits left over in the last 64-bit word at the
end of a call are discarded, so (unlike the continuous kernels in ``_noise``) two calls of
size n do not consume the same stream as one call of size 2n.

Algorithms
----------
*Bernoulli(p) for a rational p = a/b* compares a uniform real V with p one binary digit
at a time: the digits of p come from long division (doubling and subtracting), the digits
of V are fresh random bits, and the first difference decides. Exact; two random bits on
average.

*Bernoulli(exp(-gamma))* (CKS20 Algorithm 1): for gamma in [0, 1], K = 1 and while
Bernoulli(gamma / K) (drawn as Bernoulli(gamma) and Bernoulli(1/K)) increment K; return
whether K is odd. For gamma > 1, floor(gamma) independent Bernoulli(exp(-1)) draws must
all succeed, then Bernoulli(exp(-(gamma - floor(gamma)))).

*Geometric / discrete Laplace* (the decomposition of CKS20 Algorithm 2): with
E ~ Exp(1) and t = t_num, X = t floor(E) + floor(t frac(E)) is geometric with ratio
exp(-1/t), and floor(X / t_den) is geometric with ratio exp(-t_den/t_num). Instead of
CKS20's uniform-then-Bernoulli(exp(-U/t)) rejection, (floor(E), frac(E)) is drawn with von
Neumann's exact exponential method (1951): a trial draws uniforms u1 > u2 > ... while
they keep decreasing and succeeds iff that run has odd length, which happens with
probability exp(-u1) given u1; floor(E) is the number of failed trials and frac(E) the
successful u1. Uniforms are compared by their first 32 random bits and, only on a tie
(probability 2**-32), through further random digits, so every comparison is exact;
u1 is drawn as a 64-bit word, and floor(t u1) is exact too (128-bit product, plus
further digits of u1 when a carry is possible). This needs no uniform integer draws
and about 3 random 64-bit words per sample; it is about 1.5x faster than the rejection
form. A fair
sign bit makes it two-sided (rejecting "negative zero").

*Discrete Gaussian* (CKS20 Algorithm 3): t = floor(sigma) + 1 (an exact integer square
root), Y discrete Laplace with scale t, accepted with probability
exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-x^2 / q) with the integers
x = | |Y| d t - n | and q = 2 n d t^2 (sigma^2 = n/d), in 128-bit arithmetic.

Ranges and the only deviations from the ideal laws
--------------------------------------------------
* ``bernoulli_exp``: 0 <= num < 2**64, 1 <= den < 2**63. Exact.
* ``geometric``, ``discrete_laplace``: 1 <= t_num <= 2**56, 1 <= t_den <= 2**62. The
  intermediate X is kept below 2**62 (so |k| <= 2**62 fits int64): the law is the ideal
  one conditioned on X <= 2**62, an event whose complement has probability
  exp(-2**62 / t_num) <= exp(-64) (relative change of any probability below 2e-28). A
  uniform's further digits are kept up to 32 bytes; needing more (probability below
  2**-250 per draw) restarts the draw, a conditioning of the same negligible size.
* ``discrete_gaussian``: 1 <= sigma2_num < 2**64, 1 <= sigma2_den, and with
  t = floor(sigma) + 1: d t < 2**64 and q = 2 n d t^2 <= 2**100 (for an integer sigma^2
  this means sigma^2 <= 2**49, sigma <= 2**24.5). When x >= 2**64 the acceptance
  probability exp(-x^2/q) < exp(-2**28) is taken as 0; together with the truncation of
  the Laplace proposal (probability < exp(-2**37)) the total variation distance to the
  ideal discrete Gaussian is below exp(-2**27).

Notes
-----
**Privacy.** These samplers are floating-point safe: the Laplace / geometric mechanism
with integer-valued queries and these samplers releases exactly the distribution its
privacy proof assumes (the truncations above add at most ~1e-28 to epsilon for the
Laplace family, and a delta below exp(-2**27) for the Gaussian).
"""

import numbers
from fractions import Fraction
from math import isqrt

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from numpy.random cimport bitgen_t

import numpy as np

from dpsk._core._random cimport get_bitgen
from dpsk._core._random import check_out_buffer

# X = t V + U in sample_geometric is kept at or below this bound (see the module docstring).
cdef uint64_t _X_LIMIT = (<uint64_t> 1) << 62

MAX_T_NUM = 2 ** 56
MAX_T_DEN = 2 ** 62
MAX_GAUSSIAN_Q = 2 ** 100


# ---------------------------------------------------------------------------------------
# nogil cores


cdef inline int _pool_bit(BitPool* pool) noexcept nogil:
    cdef int bit
    if pool.n_bits == 0:
        pool.bits = pool.state.next_uint64(pool.state.state)
        pool.n_bits = 64
    bit = <int> (pool.bits & 1)
    pool.bits >>= 1
    pool.n_bits -= 1
    return bit


cdef inline uint32_t _pool_u32(BitPool* pool) noexcept nogil:
    cdef uint32_t word
    if pool.n_bits < 32:
        pool.bits = pool.state.next_uint64(pool.state.state)
        pool.n_bits = 64
    word = <uint32_t> pool.bits
    pool.bits >>= 32
    pool.n_bits -= 32
    return word


cdef inline uint64_t _pool_byte(BitPool* pool) noexcept nogil:
    cdef uint64_t byte
    if pool.n_bits < 8:
        pool.bits = pool.state.next_uint64(pool.state.state)
        pool.n_bits = 64
    byte = pool.bits & 0xFF
    pool.bits >>= 8
    pool.n_bits -= 8
    return byte


cdef inline int _bernoulli_ratio(BitPool* pool, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(num / den), 1 <= den: compare a uniform real V with p = num/den lazily.

    V is revealed 8 random bits at a time (W): V < p for sure when (W + 1) / 256 <= p,
    V >= p when W / 256 >= p, and otherwise (probability < 1/256) the comparison goes on
    with the remainder p' = 256 p - W. Integer arithmetic only: 256 den < 2**64.
    """
    cdef uint64_t w, a, b
    cdef int digit, bit
    if num >= den:
        return 1
    if num == 0:
        return 0
    if den == 2:  # num == 1: one fair bit
        return _pool_bit(pool)
    if den < (<uint64_t> 1) << 56:
        while True:
            w = _pool_byte(pool)
            a = w * den
            b = num << 8
            if a >= b:
                return 0
            if a + den <= b:
                return 1
            num = b - a
    while True:
        # Large denominators: one binary digit of num/den at a time, written to avoid
        # overflowing 2 * num.
        if num >= den - num:
            digit = 1
            num -= den - num
        else:
            digit = 0
            num += num
        bit = _pool_bit(pool)
        if bit != digit:
            return digit


cdef inline int _bernoulli_ratio_u128(BitPool* pool, U128 num, U128 den) noexcept nogil:
    """Bernoulli(num / den) for num < den <= 2**126 (so 2 * num cannot overflow)."""
    cdef int digit, bit
    while True:
        num = u128_add(num, num)
        digit = u128_ge(num, den)
        if digit:
            num = u128_sub(num, den)
        bit = _pool_bit(pool)
        if bit != digit:
            return digit


cdef inline int _bernoulli_exp_unit(BitPool* pool, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-gamma)) for gamma = num/den in [0, 1] (CKS20 Algorithm 1)."""
    cdef uint64_t k = 1
    while _bernoulli_ratio(pool, num, den) and _bernoulli_ratio(pool, 1, k):
        k += 1
    return <int> (k & 1)


cdef int bernoulli_exp_u64(BitPool* pool, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-num/den)) for any num >= 0, den >= 1."""
    while num >= den:
        if not _bernoulli_exp_unit(pool, 1, 1):
            return 0
        num -= den
    return _bernoulli_exp_unit(pool, num, den)


cdef int _bernoulli_exp_u128(BitPool* pool, U128 num, U128 den) noexcept nogil:
    """Bernoulli(exp(-num/den)) for 128-bit num, 1 <= den <= 2**126."""
    cdef uint64_t k = 1
    while u128_ge(num, den):
        if not _bernoulli_exp_unit(pool, 1, 1):
            return 0
        num = u128_sub(num, den)
    while _bernoulli_ratio_u128(pool, num, den) and _bernoulli_ratio(pool, 1, k):
        k += 1
    return <int> (k & 1)


# A uniform real in [0, 1) whose base-256 digits are drawn only when a comparison needs
# them. _LAZY_BYTES digits suffice except with probability below 2**-240 per sample
# (24 or more consecutive equal random bytes); the sampler then starts afresh.
DEF _LAZY_BYTES = 32

ctypedef struct LazyUniform:
    uint8_t digits[_LAZY_BYTES]
    int n


cdef inline int _lazy_digit(BitPool* pool, LazyUniform* u, int i) noexcept nogil:
    """Digit i of u (drawn if new), or -1 past the capacity."""
    while u.n <= i:
        if u.n == _LAZY_BYTES:
            return -1
        u.digits[u.n] = <uint8_t> _pool_byte(pool)
        u.n += 1
    return u.digits[i]


cdef inline int _lazy_less(BitPool* pool, LazyUniform* a, LazyUniform* b) noexcept nogil:
    """1 if a < b, 0 if a > b (exact: digits are compared until they differ); -1 past capacity."""
    cdef int i = 0, x, y
    while True:
        x = _lazy_digit(pool, a, i)
        y = _lazy_digit(pool, b, i)
        if x < 0 or y < 0:
            return -1
        if x != y:
            return x < y
        i += 1


cdef inline int _lazy_less_ratio(BitPool* pool, LazyUniform* u, int start, uint64_t num,
                                 uint64_t den) noexcept nogil:
    """Whether the uniform formed by u's digits from ``start`` on is < num/den (den < 2**56)."""
    cdef int i = start, x
    cdef uint64_t digit
    if num >= den:
        return 1
    while True:
        num <<= 8
        digit = num // den
        num -= digit * den
        x = _lazy_digit(pool, u, i)
        if x < 0:
            return -1
        if <uint64_t> x != digit:
            return <uint64_t> x < digit
        i += 1


cdef uint64_t sample_geometric(BitPool* pool, uint64_t t_num, uint64_t t_den) noexcept nogil:
    """P(k) proportional to exp(-k t_den / t_num), k >= 0.

    X = t V + U with V = floor(E), U = floor(t frac(E)) for E ~ Exp(1) (CKS20 Algorithm 2's
    decomposition), drawn by von Neumann's exact exponential method; returns floor(X / t_den).
    """
    # Each uniform is compared through its first 32 bits, then (only on a tie) through
    # further base-256 digits kept in a LazyUniform. u1 is drawn as a full 64-bit word:
    # its bits 33-64 are its first four further digits.
    cdef LazyUniform ext[3]
    cdef LazyUniform* first_ext = &ext[0]   # continuation of u1
    cdef LazyUniform* prev_ext
    cdef LazyUniform* cur_ext
    cdef LazyUniform* swap
    cdef bitgen_t* state = pool.state
    cdef uint64_t v, u, first, carry_num
    cdef uint32_t prev, cur
    cdef int run, less, i
    cdef U128 product
    while True:
        v = 0
        less = 0
        while True:  # one trial: accept u1 iff the descending run u1 > u2 > ... is odd
            first = state.next_uint64(state.state)
            for i in range(4):
                first_ext.digits[i] = <uint8_t> (first >> (24 - 8 * i))
            first_ext.n = 4
            ext[1].n = 0
            ext[2].n = 0
            prev = <uint32_t> (first >> 32)
            prev_ext = first_ext
            cur_ext = &ext[1]
            run = 1
            while True:
                cur = _pool_u32(pool)
                if cur < prev:
                    less = 1
                elif cur > prev:
                    less = 0
                else:  # equal first 32 bits (probability 2**-32): compare continuations
                    less = _lazy_less(pool, cur_ext, prev_ext)
                    if less < 0:
                        break
                if not less:
                    break
                run += 1
                prev = cur
                # cur becomes prev (with its continuation, if any was drawn)
                if prev_ext == first_ext:
                    prev_ext = cur_ext
                    cur_ext = &ext[2]
                else:
                    swap = prev_ext
                    prev_ext = cur_ext
                    cur_ext = swap
                cur_ext.n = 0
            if less < 0:
                break
            if run & 1:
                break
            v += 1  # a failed trial adds one to the integer part of the exponential
        if less < 0:
            continue
        # U = floor(t_num * u1): t * first = hi * 2**64 + lo; a carry from u1's later
        # digits r (from digit 4 of first_ext on) happens iff r >= (2**64 - lo) / t.
        product = u128_mul64(first, t_num)
        u = product.hi
        if product.lo != 0 and product.lo > 0 - t_num:
            carry_num = 0 - product.lo  # 2**64 - lo, computed modulo 2**64
            less = _lazy_less_ratio(pool, first_ext, 4, carry_num, t_num)
            if less < 0:
                continue
            u += 1 - less
        if v > (_X_LIMIT - u) // t_num:  # condition on X <= 2**62 (module docstring)
            continue
        return (u + t_num * v) // t_den


cdef int64_t sample_discrete_laplace(BitPool* pool, uint64_t t_num, uint64_t t_den) noexcept nogil:
    """P(k) proportional to exp(-|k| t_den / t_num): geometric magnitude, fair sign, "-0" rejected."""
    cdef uint64_t y
    while True:
        y = sample_geometric(pool, t_num, t_den)
        if _pool_bit(pool):
            if y == 0:  # reject "-0" so that 0 is not counted twice
                continue
            return -<int64_t> y
        return <int64_t> y


cdef int64_t sample_discrete_gaussian(BitPool* pool, const GaussianParams* params) noexcept nogil:
    """P(k) proportional to exp(-k^2 / (2 sigma^2)), sigma^2 = n/d (CKS20 Algorithm 3)."""
    cdef int64_t y
    cdef uint64_t magnitude
    cdef U128 a, x, n128
    n128.hi = 0
    n128.lo = params.n
    while True:
        y = sample_discrete_laplace(pool, params.t, 1)
        magnitude = <uint64_t> (-y if y < 0 else y)
        # x = | |y| d t - n |; the acceptance probability is exp(-x^2 / q).
        a = u128_mul64(magnitude, params.dt)
        x = u128_sub(a, n128) if u128_ge(a, n128) else u128_sub(n128, a)
        if x.hi != 0:  # exp(-x^2/q) < exp(-2**28): taken as 0 (module docstring)
            continue
        if _bernoulli_exp_u128(pool, u128_mul64(x.lo, x.lo), params.q):
            return y


cdef void fill_discrete_laplace(BitPool* pool, int64_t* out, Py_ssize_t n, uint64_t t_num,
                                uint64_t t_den) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = sample_discrete_laplace(pool, t_num, t_den)


cdef void fill_discrete_gaussian(BitPool* pool, int64_t* out, Py_ssize_t n,
                                 const GaussianParams* params) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = sample_discrete_gaussian(pool, params)


# ---------------------------------------------------------------------------------------
# Parameter checks (before nogil)


def _check_int(value, str name, low, high):
    """An integer in [low, high] (Python int), else TypeError / ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}] (the exact range), got {value}")
    return value


def _check_scale_params(t_num, t_den):
    return (_check_int(t_num, "t_num", 1, MAX_T_NUM), _check_int(t_den, "t_den", 1, MAX_T_DEN))


cdef int fill_gaussian_params(GaussianParams* params, object num, object den) except -1:
    """Validate sigma^2 = num/den against the exact range and fill ``params``."""
    num = _check_int(num, "sigma2_num", 1, 2 ** 64 - 1)
    den = _check_int(den, "sigma2_den", 1, 2 ** 64 - 1)
    t = isqrt(num // den) + 1
    q = 2 * num * den * t * t
    if den * t >= 2 ** 64 or q > MAX_GAUSSIAN_Q:
        raise ValueError(
            "sigma2_num / sigma2_den is outside the exact range of discrete_gaussian: need "
            f"2 * sigma2_num * sigma2_den * t**2 <= 2**100 with t = floor(sigma) + 1 (got "
            f"about 2**{q.bit_length() - 1}); use a smaller sigma^2 or denominator"
        )
    params.n = num
    params.d = den
    params.t = t
    params.dt = den * t
    params.q.hi = q >> 64
    params.q.lo = q & (2 ** 64 - 1)
    return 0


def round_up_sigma2(sigma2):
    """Smallest ``num/den >= sigma2`` with ``den`` a power of two (or exact) in the Gaussian range.

    Parameters
    ----------
    sigma2 : fractions.Fraction
        The exact variance parameter (for example ``Fraction(sigma / granularity) ** 2``).

    Returns
    -------
    num, den : int
        ``num / den == sigma2`` when that fits the exact range of
        :func:`discrete_gaussian`; otherwise ``den = 2**k`` with ``k`` as large as the range
        allows and ``num = ceil(sigma2 * den)``, so that ``num/den`` exceeds ``sigma2`` by
        less than ``1/den``.

    Raises
    ------
    ValueError
        If even an integer ``num`` (``den = 1``) is out of range (sigma^2 > 2**49).
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError("sigma2 must be > 0")
    cdef GaussianParams params
    try:
        fill_gaussian_params(&params, sigma2.numerator, sigma2.denominator)
        return sigma2.numerator, sigma2.denominator
    except ValueError:
        pass
    # Largest power-of-two denominator in range: q ~ 2 sigma^4 den^2 <= 2**100.
    for k in range(62, -1, -1):
        den = 2 ** k
        num = -((-sigma2.numerator * den) // sigma2.denominator)  # ceil
        try:
            fill_gaussian_params(&params, num, den)
        except ValueError:
            continue
        return num, den
    raise ValueError("sigma^2 (in lattice units) exceeds 2**49, the exact discrete Gaussian range")


def _bool_buffer(out):
    check_out_buffer(out, "out", (np.dtype(np.bool_),))
    return out.view(np.uint8)


def _int64_buffer(out):
    check_out_buffer(out, "out", (np.dtype(np.int64),))
    return out


# ---------------------------------------------------------------------------------------
# Public wrappers


def bernoulli_exp(num, den, rng):
    """Return one draw of Bernoulli(exp(-num/den)) as a bool (exact).

    Parameters
    ----------
    num : int
        0 <= num < 2**64.
    den : int
        1 <= den < 2**63.
    rng : numpy.random.Generator

    Returns
    -------
    bool
    """
    out = np.empty(1, dtype=np.bool_)
    bernoulli_exp_fill(out, num, den, rng)
    return bool(out[0])


def bernoulli_exp_fill(out, num, den, rng):
    """Fill the bool array ``out`` with independent Bernoulli(exp(-num/den)) draws (exact).

    Parameters
    ----------
    out : ndarray of shape (n,), dtype bool
        Writable and C-contiguous; overwritten.
    num, den : int
        As in :func:`bernoulli_exp`.
    rng : numpy.random.Generator
    """
    cdef uint8_t[::1] view = _bool_buffer(out)
    cdef uint64_t c_num = _check_int(num, "num", 0, 2 ** 64 - 1)
    cdef uint64_t c_den = _check_int(den, "den", 1, 2 ** 63 - 1)
    cdef Py_ssize_t i, n = view.shape[0]
    cdef BitPool pool
    bit_pool_init(&pool, get_bitgen(rng))
    if n == 0:
        return
    with rng.bit_generator.lock, nogil:
        for i in range(n):
            view[i] = <uint8_t> bernoulli_exp_u64(&pool, c_num, c_den)


def geometric(out, t_num, t_den, rng):
    """Fill ``out`` with P(k) = (1 - exp(-1/t)) exp(-k/t), k >= 0, t = t_num/t_den (exact).

    Parameters
    ----------
    out : ndarray of shape (n,), dtype int64
        Writable and C-contiguous; overwritten.
    t_num : int
        1 <= t_num <= 2**56.
    t_den : int
        1 <= t_den <= 2**62.
    rng : numpy.random.Generator
    """
    cdef int64_t[::1] view = _int64_buffer(out)
    cdef uint64_t c_num, c_den
    c_num, c_den = _check_scale_params(t_num, t_den)
    cdef Py_ssize_t i, n = view.shape[0]
    cdef BitPool pool
    bit_pool_init(&pool, get_bitgen(rng))
    if n == 0:
        return
    with rng.bit_generator.lock, nogil:
        for i in range(n):
            view[i] = <int64_t> sample_geometric(&pool, c_num, c_den)


def discrete_laplace(out, t_num, t_den, rng):
    """Fill ``out`` with discrete Laplace draws: P(k) proportional to exp(-|k| t_den / t_num).

    Parameters
    ----------
    out : ndarray of shape (n,), dtype int64
        Writable and C-contiguous; overwritten.
    t_num : int
        1 <= t_num <= 2**56.
    t_den : int
        1 <= t_den <= 2**62. The scale is t = t_num / t_den.
    rng : numpy.random.Generator

    Notes
    -----
    **Privacy.** With an integer-valued query of L1 sensitivity Δ, adding these draws
    with t = Δ/ε is ε-DP exactly (the geometric mechanism); floating-point safe.
    """
    cdef int64_t[::1] view = _int64_buffer(out)
    cdef uint64_t c_num, c_den
    c_num, c_den = _check_scale_params(t_num, t_den)
    cdef Py_ssize_t n = view.shape[0]
    cdef BitPool pool
    bit_pool_init(&pool, get_bitgen(rng))
    if n == 0:
        return
    with rng.bit_generator.lock, nogil:
        fill_discrete_laplace(&pool, &view[0], n, c_num, c_den)


def discrete_gaussian(out, sigma2_num, sigma2_den, rng):
    """Fill ``out`` with discrete Gaussian draws: P(k) proportional to exp(-k^2 / (2 sigma^2)).

    Parameters
    ----------
    out : ndarray of shape (n,), dtype int64
        Writable and C-contiguous; overwritten.
    sigma2_num, sigma2_den : int
        sigma^2 = sigma2_num / sigma2_den, within the exact range of the module docstring
        (roughly sigma^2 * sigma2_den <= 2**49).
    rng : numpy.random.Generator

    Notes
    -----
    **Privacy.** With an integer-valued query of L2 sensitivity Δ, adding these draws is
    Δ²/(2σ²)-zCDP (CKS20); floating-point safe.
    """
    cdef int64_t[::1] view = _int64_buffer(out)
    cdef GaussianParams params
    fill_gaussian_params(&params, sigma2_num, sigma2_den)
    cdef Py_ssize_t n = view.shape[0]
    cdef BitPool pool
    bit_pool_init(&pool, get_bitgen(rng))
    if n == 0:
        return
    with rng.bit_generator.lock, nogil:
        fill_discrete_gaussian(&pool, &view[0], n, &params)
