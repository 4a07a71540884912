# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Composition: golden values (δ = 1e-5, add/remove, sensitivity 1) and validity.

The reference figures come from independent computations: peers.md §2.5 (dp_accounting,
prv_accountant, autodp, computed outside this project), dp_accounting run here, and an
mpmath evaluation of the optimal-composition sum.
"""

import math

import numpy as np
import pytest

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
    PrivacyProfileEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    RDPEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ZCDPEvent,
    get_epsilon,
)
from dpsk.accounting._normalize import normalize

DELTA = 1e-5

LAPLACE_100 = SelfComposedEvent(LaplaceEvent(10.0), 100)
PURE_100 = SelfComposedEvent(PureDPEvent(0.1), 100)
GAUSS_1000 = SelfComposedEvent(GaussianEvent(1.0), 1000)
DPSGD = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.1)), 10_000)


def _needs_pld():
    return pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")


# ------------------------------------------------------------------------ golden values


def test_golden_laplace_100_basic():
    assert get_epsilon(LAPLACE_100, DELTA, method="basic") == 10.0


def test_golden_laplace_100_advanced_is_optimal_for_generic_pure_dp():
    eps = get_epsilon(LAPLACE_100, DELTA, method="advanced")
    assert 4.305 <= eps <= 5.30
    assert get_epsilon(PURE_100, DELTA, method="advanced") == eps


def test_golden_optimal_pure_composition_by_mpmath():
    mp = pytest.importorskip("mpmath")
    eps = get_epsilon(PURE_100, DELTA)
    with mp.workdps(40):
        e0, k = mp.mpf(0.1), 100

        def delta_at(e):  # Kairouz, Oh & Viswanath Thm 3.3 as an exact sum
            total = mp.mpf(0)
            for j in range(k + 1):
                if (k - 2 * j) * e0 > e:
                    total += mp.binomial(k, j) * (mp.e ** ((k - j) * e0) - mp.e ** (e + j * e0))
            return total / (1 + mp.e**e0) ** k

        assert delta_at(mp.mpf(eps)) <= DELTA  # valid ...
        assert delta_at(mp.mpf(eps) - mp.mpf("1e-9")) > DELTA  # ... and tight


def test_golden_kov_closed_form_for_different_epsilons():
    # Kairouz-Oh-Viswanath Thm 3.5 for 100 x 0.1 is 5.2981 (peers.md §2.5 D); with a tiny
    # perturbation of one ε the optimal homogeneous formula no longer applies.
    event = ComposedEvent((SelfComposedEvent(PureDPEvent(0.1), 99), PureDPEvent(0.1000001)))
    assert get_epsilon(event, DELTA, method="advanced") == pytest.approx(5.2981, abs=2e-4)


def test_golden_laplace_specific_pld():
    _needs_pld()
    eps = get_epsilon(LAPLACE_100, DELTA)
    assert eps == pytest.approx(4.2203, abs=1e-3)  # peers.md §2.5 D, Laplace PLD
    assert eps >= 4.2188 - 0.01  # PRV estimate minus its error bar: never below


def test_golden_gaussian_1000_exact():
    eps = get_epsilon(GAUSS_1000, DELTA)
    assert eps >= 633.92985 - 1e-5
    assert eps == pytest.approx(633.92985, abs=1e-4)
    gm = pytest.importorskip("dp_accounting.gaussian_mechanism")
    assert eps >= gm.get_epsilon_gaussian(1 / math.sqrt(1000), DELTA) * (1 - 1e-12)


def test_golden_gaussian_1000_rdp():
    eps = get_epsilon(GAUSS_1000, DELTA, method="rdp")
    assert eps == pytest.approx(654.86, abs=0.01)
    rdp_lib = pytest.importorskip("dp_accounting.rdp")
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    theirs = rdp_lib.RdpAccountant().compose(dp_event.GaussianDpEvent(1.0), 1000).get_epsilon(DELTA)
    assert eps <= theirs * (1 + 1e-9)


def test_golden_dpsgd_rdp():
    eps = get_epsilon(DPSGD, DELTA, method="rdp")
    assert eps == pytest.approx(5.632, abs=1e-3)
    rdp_lib = pytest.importorskip("dp_accounting.rdp")
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    sgm = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1))
    theirs = rdp_lib.RdpAccountant().compose(sgm, 10_000).get_epsilon(DELTA)
    assert theirs * (1 - 1e-9) <= eps <= theirs * (1 + 1e-6)


@pytest.mark.slow
def test_golden_dpsgd_pld():
    _needs_pld()
    eps = get_epsilon(DPSGD, DELTA)
    assert eps == pytest.approx(5.1926, abs=2e-3)


def test_tightest_is_between_optimal_and_basic():
    for event, floor in [(LAPLACE_100, 4.2188 - 0.01), (PURE_100, 4.3067), (GAUSS_1000, 633.9298)]:
        eps = get_epsilon(event, DELTA)
        assert floor <= eps <= get_epsilon(event, DELTA, method="basic")


# ------------------------------------------------------------------------ validity


def _pld_bounds(pld_lib, pieces, delta):
    """(optimistic, pessimistic) ε of a composition from dp_accounting PLDs."""
    out = []
    for pessimistic in (False, True):
        composed = None
        for make, count in pieces:
            pld = make(pessimistic).self_compose(count)
            composed = pld if composed is None else composed.compose(pld)
        out.append(composed.get_epsilon_for_delta(delta))
    return out


@pytest.mark.parametrize(
    "event, pieces",
    [
        (
            ComposedEvent((SelfComposedEvent(LaplaceEvent(2.0), 20), SelfComposedEvent(GaussianEvent(4.0), 30))),
            [("laplace", 2.0, 1.0, 20), ("gaussian", 4.0, 1.0, 30)],
        ),
        (SelfComposedEvent(PoissonSampledEvent(0.05, LaplaceEvent(1.0)), 200), [("laplace", 1.0, 0.05, 200)]),
        (
            ComposedEvent(
                (
                    SelfComposedEvent(PoissonSampledEvent(0.02, GaussianEvent(1.0)), 500),
                    SelfComposedEvent(LaplaceEvent(5.0), 10),
                )
            ),
            [("gaussian", 1.0, 0.02, 500), ("laplace", 5.0, 1.0, 10)],
        ),
        (SelfComposedEvent(PoissonSampledEvent(0.2, LaplaceEvent(0.5)), 50), [("laplace", 0.5, 0.2, 50)]),
    ],
)
@pytest.mark.parametrize("method", ["tightest", "rdp"])
def test_never_below_an_optimistic_pld_estimate(event, pieces, method):
    """Every method's ε is >= dp_accounting's *optimistic* PLD (a lower estimate)."""
    pld_lib = _needs_pld()

    def factory(kind, scale, q):
        def make(pessimistic):
            fn = pld_lib.from_laplace_mechanism if kind == "laplace" else pld_lib.from_gaussian_mechanism
            return fn(scale, pessimistic_estimate=pessimistic, sampling_prob=q, value_discretization_interval=1e-4)

        return make

    lower, upper = _pld_bounds(pld_lib, [(factory(k, s, q), n) for k, s, q, n in pieces], DELTA)
    eps = get_epsilon(event, DELTA, method=method)
    assert eps >= lower - 1e-9
    if method == "tightest":
        assert eps <= upper * (1 + 1e-6)


def test_sampled_laplace_rdp_bound_never_below_the_pld_lower_estimate_for_many_settings():
    pld_lib = _needs_pld()
    for q, b, n in [(0.5, 1.0, 5), (0.01, 0.2, 100), (0.1, 2.0, 1000), (0.3, 0.3, 20)]:
        event = SelfComposedEvent(PoissonSampledEvent(q, LaplaceEvent(b)), n)
        lower = (
            pld_lib.from_laplace_mechanism(b, pessimistic_estimate=False, sampling_prob=q)
            .self_compose(n)
            .get_epsilon_for_delta(DELTA)
        )
        assert get_epsilon(event, DELTA, method="rdp") >= lower - 1e-9


def test_amplification_by_sampling_without_replacement():
    inner = PureDPEvent(1.0)
    event = SampledWithoutReplacementEvent(1000, 10, inner)
    assert get_epsilon(event, 0.0) == pytest.approx(math.log1p(0.01 * math.expm1(1.0)))
    approx = SampledWithoutReplacementEvent(100, 50, ApproxDPEvent(1.0, 1e-4))
    assert get_epsilon(approx, 5e-5) == pytest.approx(math.log1p(0.5 * math.expm1(1.0)))
    assert get_epsilon(approx, 4e-5) == math.inf  # below the amplified explicit δ
    # Gaussian inner: amplified point by point from its (ε, δ) profile.
    gauss = SampledWithoutReplacementEvent(100, 10, GaussianEvent(2.0))
    assert get_epsilon(gauss, DELTA) < get_epsilon(GaussianEvent(2.0), DELTA)


# ------------------------------------------------------------------------ normalisation


def test_parallel_composition_collapses_to_the_dominant_part():
    assert normalize(ParallelEvent((LaplaceEvent(1.0), LaplaceEvent(2.0)))) == {LaplaceEvent(1.0): 1}
    assert normalize(ParallelEvent((GaussianEvent(3.0), GaussianEvent(2.0)))) == {GaussianEvent(2.0): 1}
    two_gauss = SelfComposedEvent(GaussianEvent(2.0), 2)
    (atom,) = normalize(ParallelEvent((two_gauss, GaussianEvent(1.9)))).keys()
    assert get_epsilon(ParallelEvent((two_gauss, GaussianEvent(1.9))), DELTA) == pytest.approx(
        get_epsilon(two_gauss, DELTA), rel=1e-9
    )
    assert isinstance(atom, GaussianEvent)


def test_parallel_composition_costs_its_most_expensive_part():
    mixed = ParallelEvent((LaplaceEvent(1.0), GaussianEvent(2.0), SelfComposedEvent(PureDPEvent(0.3), 2)))
    eps = get_epsilon(mixed, DELTA)
    parts = [get_epsilon(e, DELTA) for e in mixed.events]
    assert max(parts) <= eps <= max(parts) * (1 + 1e-9)
    # Repeated parallel releases compose sequentially.
    assert get_epsilon(SelfComposedEvent(mixed, 3), DELTA) > eps


def test_empty_and_zero_cost_events():
    assert get_epsilon(ComposedEvent(()), 0.0) == 0.0
    assert get_epsilon(SelfComposedEvent(GaussianEvent(1.0), 0), 0.0) == 0.0
    assert get_epsilon(SampledWithoutReplacementEvent(10, 0, GaussianEvent(1.0)), 0.0) == 0.0
    assert get_epsilon(PureDPEvent(0.0), 0.0) == 0.0


# ------------------------------------------------------------------------ every event type


@pytest.mark.parametrize(
    "event",
    [
        DiscreteLaplaceEvent(2.0, sensitivity=3),
        DiscreteGaussianEvent(3.0),
        RandomizedResponseEvent(1.0, 4),
        ExponentialEvent(0.5),
        ZCDPEvent(0.05),
        RDPEvent((2.0, 4.0, 16.0), (0.05, 0.1, 0.4)),
        PrivacyProfileEvent((2.0, 1.0), (0.0, 1e-7)),
        PoissonSampledEvent(0.1, DiscreteGaussianEvent(2.0)),
        PoissonSampledEvent(0.1, ComposedEvent((LaplaceEvent(1.0), GaussianEvent(2.0)))),
    ],
    ids=lambda e: type(e).__name__,
)
def test_every_event_is_accounted_and_composes_monotonically(event):
    one = get_epsilon(event, DELTA)
    ten = get_epsilon(SelfComposedEvent(event, 10), DELTA)
    assert 0.0 < one < math.inf
    # Basic composition bounds the 10-fold release: (10 ε(δ/10), δ).
    assert one <= ten <= 10 * get_epsilon(event, DELTA / 10) * (1 + 1e-9)


def test_single_release_guarantees_are_exact():
    assert get_epsilon(LaplaceEvent(2.0), 0.0) == 0.5
    assert get_epsilon(DiscreteLaplaceEvent(2.0, sensitivity=3), 0.0) == 1.5
    assert get_epsilon(RandomizedResponseEvent(0.7, 3), 0.0) == 0.7
    assert get_epsilon(PrivacyProfileEvent((2.0, 1.0), (0.0, 1e-7)), 1e-7) == 1.0
    assert get_epsilon(PrivacyProfileEvent((2.0, 1.0), (0.0, 1e-7)), 1e-8) == 2.0
    from dpsk.accounting import discrete_gaussian_epsilon, gaussian_epsilon

    exact = gaussian_epsilon(DELTA, 1 / 3.0)
    assert exact <= get_epsilon(GaussianEvent(3.0), DELTA) <= exact * (1 + 1e-9)
    assert get_epsilon(DiscreteGaussianEvent(3.0), DELTA) <= discrete_gaussian_epsilon(DELTA, 3.0)


def test_exponential_mechanism_composes_better_than_generic_pure_dp():
    em = get_epsilon(SelfComposedEvent(ExponentialEvent(0.1), 1000), DELTA, method="rdp")
    pure = get_epsilon(SelfComposedEvent(PureDPEvent(0.1), 1000), DELTA, method="rdp")
    assert em < pure * 0.7


def test_approximate_dp_deltas_add_up():
    event = SelfComposedEvent(ApproxDPEvent(0.5, 1e-6), 10)
    assert get_epsilon(event, 9.9e-6) == math.inf
    assert get_epsilon(event, 1e-5) == pytest.approx(5.0)
    assert get_epsilon(event, 1e-5 + 1e-3) < 5.0


def test_method_validation():
    with pytest.raises(ValueError, match="method"):
        get_epsilon(LAPLACE_100, DELTA, method="magic")
    with pytest.raises(ValueError, match="delta"):
        get_epsilon(LAPLACE_100, 2.0)
    with pytest.raises(TypeError):
        get_epsilon((1.0, 0.0), DELTA)
    assert get_epsilon(GAUSS_1000, DELTA, method="basic") == math.inf
    assert get_epsilon(LAPLACE_100, DELTA, method="gaussian") == math.inf


def test_per_spend_state_update_is_exactly_reversible():
    from dpsk.accounting._ledger_state import LedgerState

    state = LedgerState.from_counts(normalize(ComposedEvent((LAPLACE_100, GAUSS_1000))))
    before = (state.epsilon(DELTA, use_pld=False), state.fixed_delta(), state.pure_sum)
    for event in (ApproxDPEvent(0.3, 1e-7), DPSGD, RDPEvent((2.0,), (0.1,)), PrivacyProfileEvent((1.0,), (1e-9,))):
        token = state.apply(event)
        assert state.epsilon(DELTA, use_pld=False) > before[0]
        state.undo(token)
        assert (state.epsilon(DELTA, use_pld=False), state.fixed_delta(), state.pure_sum) == before
    np.testing.assert_array_equal(state.pure_rdp, LedgerState.from_counts(normalize(LAPLACE_100)).pure_rdp)
