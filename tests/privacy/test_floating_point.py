# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Floating-point attack (Mironov 2012) on the textbook Laplace mechanism.

``x + rng.laplace(0, b)`` released in full double precision is not differentially
private: numpy draws the noise as ``±b·log(2U)`` for U on the grid k·2⁻⁵³, so the noise
takes only some double values, and ``fl(1 + noise)`` often lands on a double that
``noise`` alone can never take. Seeing such an output proves the input was 1, not 0:
the privacy loss is infinite on those outputs, whatever ε was claimed.

The attack, ``textbook_support_attack``, outputs 1 when the released value is impossible
for numpy's textbook sampler centred at 0 (exact inversion of its ``log``, checked with
the same libm ``log``). It is a post-processing of the release, so a mechanism that is
ε-DP must pass :func:`dpsk.audit.audit` on the attack's output. (The leak is the sparse
*support* of the textbook noise, not its grid: statistics of the low-order bits alone,
such as trailing zeros, do not separate the two inputs — we tried.)

The attack must succeed against the naive numpy implementation and against
:class:`dpsk.mechanisms.UnsafeLaplace` (the same textbook sampler), and fail against
dpsk's default :class:`dpsk.mechanisms.Laplace`, whose outputs lie on a lattice that does
not depend on the input.
"""

import math
from functools import partial

import numpy as np

from dpsk.accounting._calibration import laplace_noise_multiplier
from dpsk.audit import audit, mechanism_sampler
from dpsk.mechanisms import Laplace, UnsafeLaplace

EPS = math.log(3)
SCALE = 1.0 / EPS
N_SAMPLES = 100_000
_TWO_53 = 2.0**53
_LIBM_LOG = np.frompyfunc(math.log, 1, 1)  # numpy's sampler calls C log; np.log may differ by an ulp


def naive_laplace(value, size, rng):
    """The textbook mechanism: input plus numpy's Laplace noise, in full precision."""
    return value + rng.laplace(0.0, SCALE, size)


def textbook_support_attack(outputs, scale=SCALE):
    """1.0 where ``outputs`` cannot be numpy's Laplace(0, scale) noise, else 0.0.

    numpy: U = k·2⁻⁵³; noise = −scale·log(2 − U − U) if U ≥ 0.5 else scale·log(U + U).
    Invert to the nearest k, then check k − 2 … k + 2 exactly.
    """
    y = np.asarray(outputs, dtype=np.float64)
    upper = y >= 0
    with np.errstate(over="ignore"):
        u = np.where(upper, 1.0 - np.exp(-y / scale) / 2.0, np.exp(y / scale) / 2.0)
    k = np.rint(u * _TWO_53)[:, None] + np.arange(-2, 3)[None, :]
    U = k / _TWO_53
    valid = (U > 0.0) & (U < 1.0) & (U >= 0.5) == upper[:, None]
    U = np.where(valid, U, 0.5)  # placeholder where invalid; masked below
    argument = np.where(upper[:, None], 2.0 - U - U, U + U)
    logs = _LIBM_LOG(np.where(argument > 0, argument, 1.0)).astype(np.float64)
    noise = np.where(upper[:, None], 0.0 - scale * logs, 0.0 + scale * logs)
    possible = np.any(valid & (argument > 0) & (noise == y[:, None]), axis=1)
    return (~possible).astype(np.float64)


class _Attacked:
    """Sampler of ``attack(mechanism output)``: the attacker's post-processing."""

    def __init__(self, sampler, attack):
        self.sampler = sampler
        self.attack = attack

    def __call__(self, value, size, rng):
        return self.attack(self.sampler(value, size, rng))


def test_support_attack_never_flags_genuine_textbook_noise():
    """Check that the inversion is exact: no output of the sampler at 0 is called impossible."""
    noise = naive_laplace(0.0, N_SAMPLES, np.random.default_rng(0))
    assert textbook_support_attack(noise).sum() == 0


def test_support_attack_identifies_input_one_from_most_outputs():
    flagged = textbook_support_attack(naive_laplace(1.0, N_SAMPLES, np.random.default_rng(1)))
    assert flagged.mean() > 0.5


def test_attack_breaks_naive_laplace():
    """Check that the attack proves naive full-precision Laplace is not ln(3)-DP."""
    attacked = _Attacked(naive_laplace, textbook_support_attack)
    result = audit(attacked, (0.0, 1.0), epsilon=EPS, n_samples=N_SAMPLES, random_state=0)
    assert not result.passed
    assert result.epsilon_lower_bound > 2 * EPS, str(result)


def test_naive_laplace_passes_without_the_attack():
    """The flaw is invisible to an audit of the value itself: the attack is what exposes it."""
    assert audit(naive_laplace, (0.0, 1.0), epsilon=EPS, n_samples=N_SAMPLES, random_state=0).passed


def test_attack_breaks_dpsk_unsafe_laplace():
    """Check that the attack proves dpsk's textbook sampler is not ln(3)-DP in floating point.

    The attacker knows the public calibration: scale = sensitivity / ε, rounded up.
    """
    sampler = mechanism_sampler(partial(UnsafeLaplace, epsilon=EPS, sensitivity=1.0))
    attack = partial(textbook_support_attack, scale=laplace_noise_multiplier(EPS))
    result = audit(_Attacked(sampler, attack), (0.0, 1.0), epsilon=EPS, n_samples=N_SAMPLES, random_state=0)
    assert not result.passed
    assert result.epsilon_lower_bound > 2 * EPS, str(result)


def test_attack_fails_against_dpsk_laplace():
    """Check that dpsk's default Laplace mechanism survives the attack that breaks the textbook one."""
    sampler = mechanism_sampler(partial(Laplace, epsilon=EPS, sensitivity=1.0))
    for scale in (SCALE, laplace_noise_multiplier(EPS)):
        attacked = _Attacked(sampler, partial(textbook_support_attack, scale=scale))
        result = audit(attacked, (0.0, 1.0), epsilon=EPS, n_samples=N_SAMPLES, random_state=0)
        assert result.passed, str(result)


def test_dpsk_laplace_passes_the_plain_audit():
    sampler = mechanism_sampler(partial(Laplace, epsilon=EPS, sensitivity=1.0))
    assert audit(sampler, (0.0, 1.0), epsilon=EPS, n_samples=N_SAMPLES, random_state=0).passed
