# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""get_delta: exact single-release profiles, consistency with get_epsilon, dp_accounting cross-checks.

Exact values are checked against independent computations written here: quadrature of
the hockey-stick divergence for continuous noise, direct summation over the outputs for
discrete noise, and the selection probabilities of the exponential mechanism itself.
"""

import doctest
import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import logsumexp

from dpsk.accounting import (
    ApproxDPEvent,
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    ExponentialEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PrivacyProfileEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    RDPEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
    get_delta,
    get_epsilon,
)
from dpsk.mechanisms import ExponentialMechanism

#: Both directions round outward by 2⁻⁴⁰ (relative); consistency holds up to that.
ROUNDING = 2.0**-38


def hockey_stick(p, q, eps):
    """∫ (p(x) − e^ε q(x))₊ dx by quadrature (q is p shifted by 1)."""
    value, _ = integrate.quad(
        lambda x: max(p(x) - math.exp(eps) * q(x), 0.0), -80, 80, points=[0, 1], limit=500, epsabs=1e-14, epsrel=1e-12
    )
    return value


def discrete_hockey_stick(log_p, log_q, eps):
    """Σ (P(k) − e^ε Q(k))₊ over outputs, from log-probabilities (arrays on one support)."""
    gap = log_p - eps - log_q
    mask = gap > 0
    return float(np.sum(np.exp(log_p[mask]) * -np.expm1(-gap[mask])))


@pytest.mark.parametrize("b", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.9, 1.5])
def test_laplace_is_exact(b, fraction):
    eps = fraction / b
    expected = hockey_stick(stats.laplace(0, b).pdf, stats.laplace(1, b).pdf, eps)
    assert get_delta(LaplaceEvent(b), eps) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.7306])
@pytest.mark.parametrize("eps", [0.0, 0.2, 1.0, 2.5])
def test_gaussian_is_exact(sigma, eps):
    expected = hockey_stick(stats.norm(0, sigma).pdf, stats.norm(1, sigma).pdf, eps)
    assert get_delta(GaussianEvent(sigma), eps) == pytest.approx(expected, rel=1e-7, abs=1e-13)


def _discrete_laplace_logpmf(k, scale):
    r = math.exp(-1.0 / scale)
    return math.log((1 - r) / (1 + r)) - np.abs(k) / scale


@pytest.mark.parametrize("scale, sensitivity", [(0.7, 1), (2.0, 3), (5.5, 10), (4.0, 5)])
@pytest.mark.parametrize("fraction", [0.0, 0.25, 0.5, 0.9])
def test_discrete_laplace_is_exact(scale, sensitivity, fraction):
    k = np.arange(-int(200 * scale) - sensitivity, int(200 * scale) + 2 * sensitivity)
    eps = fraction * sensitivity / scale
    expected = discrete_hockey_stick(
        _discrete_laplace_logpmf(k, scale), _discrete_laplace_logpmf(k - sensitivity, scale), eps
    )
    assert get_delta(DiscreteLaplaceEvent(scale, sensitivity), eps) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_lattice_laplace_tends_to_laplace():
    """The event of dpsk.mechanisms.Laplace (sensitivity ~2⁴⁰ lattice steps) has the Laplace curve."""
    steps = 2**40
    lattice = DiscreteLaplaceEvent(float(steps) / math.log(3), steps)
    for eps in (0.0, 0.3, 1.0, 1.098):
        assert get_delta(lattice, eps) == pytest.approx(get_delta(LaplaceEvent(1 / math.log(3)), eps), rel=1e-9)


@pytest.mark.parametrize("sigma, sensitivity", [(0.8, 1), (3.0, 2), (18.65, 5)])
@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0])
def test_discrete_gaussian_is_exact(sigma, sensitivity, eps):
    k = np.arange(-int(60 * sigma) - sensitivity, int(60 * sigma) + 2 * sensitivity)
    log_w = -(k.astype(float) ** 2) / (2 * sigma**2)
    log_p = log_w - logsumexp(log_w)
    log_q = -((k - sensitivity).astype(float) ** 2) / (2 * sigma**2) - logsumexp(log_w)
    expected = discrete_hockey_stick(log_p, log_q, eps)
    got = get_delta(DiscreteGaussianEvent(sigma, sensitivity), eps)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("eps", [0.0, 0.4, 0.99])
def test_randomized_response_is_exact(k, eps):
    eps0 = 1.0
    keep = math.exp(eps0) / (math.exp(eps0) + k - 1)
    other = (1 - keep) / (k - 1)
    p = np.array([keep, other] + [other] * (k - 2))  # true answer 0
    q = np.array([other, keep] + [other] * (k - 2))  # true answer 1
    expected = discrete_hockey_stick(np.log(p), np.log(q), eps)
    assert get_delta(RandomizedResponseEvent(eps0, k), eps) == pytest.approx(expected, rel=1e-12)


def test_pure_and_approximate_events_have_randomized_response_curves():
    """A bare ε-DP release: binary randomized response's curve; (ε, δ): δ ⊕ that curve."""
    for eps in (0.0, 0.3, 0.8):
        rr = (math.exp(1.0) - math.exp(eps)) / (1 + math.exp(1.0))
        assert get_delta(PureDPEvent(1.0), eps) == pytest.approx(rr, rel=1e-12)
        assert get_delta(ApproxDPEvent(1.0, 0.01), eps) == pytest.approx(0.01 + 0.99 * rr, rel=1e-12)
    assert get_delta(ApproxDPEvent(1.0, 0.01), 1.0) == pytest.approx(0.01)
    assert get_delta(ApproxDPEvent(1.0, 0.01), math.inf) == pytest.approx(0.01)


def test_bounded_range_curve_is_the_largest_two_point_curve():
    """Check the closed form against a brute-force maximum over the two-point loss distributions."""
    eps0 = 1.3
    t = np.linspace(0, eps0, 200_001)
    for eps in (0.0, 0.2, 0.7, 1.2):
        brute = np.max((np.exp(eps0) - np.exp(t)) / np.expm1(eps0) * np.clip(-np.expm1(eps - t), 0, None))
        got = get_delta(ExponentialEvent(eps0), eps)
        assert brute <= got <= brute * (1 + 1e-8)


def test_exponential_mechanism_never_exceeds_its_curve():
    """Check validity on the mechanism itself: random neighbouring score vectors (each moved by ≤ Δ)."""
    rng = np.random.default_rng(0)
    eps0 = math.log(3)
    mech = ExponentialMechanism(epsilon=eps0, random_state=0)
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(2, 6))
        scores = rng.uniform(-3, 3, n)
        moved = scores + rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 1.0, n)
        p, q = mech.probabilities(scores), mech.probabilities(moved)
        for eps in (0.0, 0.3, 0.8):
            for a, b in ((p, q), (q, p)):
                slack = get_delta(ExponentialEvent(eps0), eps) - discrete_hockey_stick(np.log(a), np.log(b), eps)
                assert slack >= -1e-12
        worst = max(worst, discrete_hockey_stick(np.log(p), np.log(q), 0.0))
    # ... and the curve is reached: (0, 0) against (-1, 1) attains it at ε = ln(4/3).
    p, q = mech.probabilities([0.0, 0.0]), mech.probabilities([-1.0, 1.0])
    attained = discrete_hockey_stick(np.log(p), np.log(q), math.log(4 / 3))
    assert attained == pytest.approx(get_delta(ExponentialEvent(eps0), math.log(4 / 3)), rel=1e-6)
    assert worst < get_delta(PureDPEvent(eps0), 0.0)  # tighter than the ε-DP curve


CONSISTENCY_EVENTS = [
    LaplaceEvent(1.5),
    GaussianEvent(2.0),
    DiscreteLaplaceEvent(3.0, 2),
    DiscreteGaussianEvent(4.0, 2),
    ExponentialEvent(0.7),
    RandomizedResponseEvent(1.0, 4),
    PureDPEvent(0.5),
    ApproxDPEvent(0.5, 1e-6),
    ZCDPEvent(0.05),
    RDPEvent((2.0, 8.0, 32.0), (0.1, 0.5, 2.0)),
    PrivacyProfileEvent((1.0, 2.0), (1e-3, 1e-6)),
    SelfComposedEvent(LaplaceEvent(10.0), 50),
    SelfComposedEvent(GaussianEvent(5.0), 20),
    ComposedEvent((LaplaceEvent(2.0), LaplaceEvent(3.0), PureDPEvent(0.1))),
    ComposedEvent((LaplaceEvent(1.0), GaussianEvent(2.0))),
    ComposedEvent((DiscreteLaplaceEvent(2.0**40, 2**40), ZCDPEvent(0.05))),
    ComposedEvent((PureDPEvent(0.5), GaussianEvent(2.0), ZCDPEvent(0.05))),
    ComposedEvent((ExponentialEvent(0.5), PrivacyProfileEvent((1.0,), (1e-4,)))),
    PoissonSampledEvent(0.1, LaplaceEvent(1.0)),
    SelfComposedEvent(PoissonSampledEvent(0.05, GaussianEvent(1.5)), 30),
    SampledWithoutReplacementEvent(100, 10, PureDPEvent(1.0)),
    ParallelEvent((LaplaceEvent(1.0), SelfComposedEvent(GaussianEvent(3.0), 2))),
]


@pytest.mark.parametrize("event", CONSISTENCY_EVENTS, ids=repr)
def test_delta_at_the_certified_epsilon_is_at_most_delta(event, pld_switch):
    """get_delta(get_epsilon(δ)) <= δ: δ(ε) is never looser than the accountant's ε(δ)."""
    for delta in (1e-9, 1e-6, 1e-3, 0.05, 0.3):
        eps = get_epsilon(event, delta)
        if math.isfinite(eps):
            assert get_delta(event, eps) <= delta * (1 + ROUNDING), (delta, eps)


@pytest.mark.parametrize("event", [e for e in CONSISTENCY_EVENTS if not isinstance(e, ComposedEvent)], ids=repr)
def test_epsilon_at_the_certified_delta_is_at_most_epsilon(event, pld_switch):
    """The converse for events of one kind: the two directions are inverses.

    Up to rounding, and to PLD's discretisation (about 1e-12 absolute near ε = 0).
    """
    for eps in (0.0, 0.1, 0.5, 1.0, 3.0):
        delta = get_delta(event, eps)
        if delta < 1.0:
            assert get_epsilon(event, delta) <= eps * (1 + ROUNDING) + 1e-9, (eps, delta)


@pytest.mark.parametrize("method", ["basic", "advanced", "gaussian", "rdp"])
@pytest.mark.parametrize(
    "event",
    [SelfComposedEvent(LaplaceEvent(4.0), 10), SelfComposedEvent(GaussianEvent(3.0), 5), ZCDPEvent(0.1)],
    ids=repr,
)
def test_each_method_inverts_its_epsilon(event, method):
    for delta in (1e-6, 1e-3, 0.1):
        eps = get_epsilon(event, delta, method=method)
        if math.isfinite(eps):
            assert get_delta(event, eps, method=method) <= delta * (1 + ROUNDING)
        else:
            assert get_delta(event, 10.0, method=method) == 1.0  # the method does not apply


@pytest.mark.parametrize("event", CONSISTENCY_EVENTS, ids=repr)
def test_profiles_are_valid_curves(event):
    eps = np.linspace(0, 6, 25)
    deltas = get_delta(event, eps)
    assert deltas.shape == eps.shape
    assert np.all((deltas >= 0) & (deltas <= 1))
    assert np.all(np.diff(deltas) <= 1e-12)
    assert get_delta(event, math.inf) <= deltas[-1]


def _pld():
    return pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")


@pytest.mark.parametrize(
    "event, make",
    [
        (
            SelfComposedEvent(LaplaceEvent(2.0), 10),
            lambda p, o: p.from_laplace_mechanism(2.0, pessimistic_estimate=o).self_compose(10),
        ),
        (
            ComposedEvent((LaplaceEvent(1.0), LaplaceEvent(2.0))),
            lambda p, o: p.from_laplace_mechanism(1.0, pessimistic_estimate=o).compose(
                p.from_laplace_mechanism(2.0, pessimistic_estimate=o)
            ),
        ),
        (
            SelfComposedEvent(GaussianEvent(4.0), 30),
            lambda p, o: p.from_gaussian_mechanism(4.0, pessimistic_estimate=o).self_compose(30),
        ),
        (
            SelfComposedEvent(PoissonSampledEvent(0.1, GaussianEvent(1.2)), 50),
            lambda p, o: p.from_gaussian_mechanism(1.2, pessimistic_estimate=o, sampling_prob=0.1).self_compose(50),
        ),
        (
            DiscreteLaplaceEvent(2.0, 3),
            lambda p, o: p.from_discrete_laplace_mechanism(0.5, sensitivity=3, pessimistic_estimate=o),
        ),
        (
            RandomizedResponseEvent(1.0, 3),
            lambda p, o: p.from_randomized_response(3 / (math.e + 2), 3, pessimistic_estimate=o),
        ),
    ],
    ids=["laplace x10", "laplace(1)+laplace(2)", "gaussian x30", "sampled gaussian x50", "discrete laplace", "rr k=3"],
)
def test_between_dp_accounting_optimistic_and_pessimistic_estimates(event, make, pld_switch):
    """Never below dp_accounting's optimistic PLD (a lower estimate of the true δ); with PLD on,
    no looser than its pessimistic one."""
    p = _pld()
    optimistic, pessimistic = make(p, False), make(p, True)
    for eps in (0.0, 0.2, 0.5, 1.0, 2.0):
        got = get_delta(event, eps)
        assert got >= optimistic.get_delta_for_epsilon(eps) - 1e-9
        if pld_switch == "pld":
            assert got <= pessimistic.get_delta_for_epsilon(eps) * (1 + 1e-6) + 1e-12


def test_array_input_and_scalars():
    eps = np.array([[0.0, 0.5], [1.0, 2.0]])
    out = get_delta(LaplaceEvent(1.0), eps)
    assert out.shape == (2, 2)
    assert out[1, 0] == 0.0 and out[0, 0] > out[0, 1]
    assert isinstance(get_delta(LaplaceEvent(1.0), 0.5), float)
    assert get_delta(ComposedEvent(()), 0.0) == 0.0


def test_errors():
    with pytest.raises(ValueError, match="epsilon"):
        get_delta(LaplaceEvent(1.0), -0.1)
    with pytest.raises(ValueError, match="epsilon"):
        get_delta(LaplaceEvent(1.0), float("nan"))
    with pytest.raises(ValueError, match="method"):
        get_delta(LaplaceEvent(1.0), 0.1, method="exact")
    with pytest.raises(TypeError, match="PrivacyEvent"):
        get_delta((1.0, 0.0), 0.1)

    class Unknown(PrivacyEvent):
        pass

    with pytest.raises(TypeError, match="Unknown"):
        get_delta(Unknown(), 0.1)


def test_deamplification_inverts_amplification():
    from dpsk.accounting._calibration import amplified_epsilon, deamplified_epsilon

    for q in (1e-4, 0.01, 0.3, 1.0):
        for eps in (1e-6, 0.1, 1.0, 10.0, 800.0):
            inner = deamplified_epsilon(eps, q)
            assert amplified_epsilon(inner, q) <= eps * (1 + ROUNDING)
            assert inner == pytest.approx(
                math.log1p(math.expm1(eps) / q) if eps < 700 else eps - math.log(q), rel=1e-12
            )


def test_docstring_example():
    import dpsk.accounting._composition as composition

    failures, _ = doctest.testmod(composition, raise_on_error=False)
    assert failures == 0
