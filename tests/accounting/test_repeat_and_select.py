# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""RepeatAndSelectEvent: the best of a random number of runs (Papernot & Steinke 2022).

Reference figures are independent: peers.md §2.5 F (dp_accounting's RDP accountant, run
outside this project) and dp_accounting run here on the same Rényi orders.
"""

import math

import numpy as np
import pytest
from scipy.special import gammaln

from dpsk.accounting import (
    ApproxDPEvent,
    BudgetAccountant,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PureDPEvent,
    RepeatAndSelectEvent,
    SelfComposedEvent,
    get_epsilon,
)
from dpsk.accounting._ledger import event_from_json, event_to_json
from dpsk.accounting._rdp import ORDERS, rdp_laplace
from dpsk.accounting._repeat_and_select import best_of_random_runs_rdp, stopping_gamma, stopping_mean

# peers.md §2.5 F: one fit = Gaussian with σ = 3.7306 (ε = 1 at δ = 1e-5), 10 runs on average.
SIGMA = 3.7306316


@pytest.mark.parametrize("shape, expected", [(0.0, 1.9170), (1.0, 2.3108)])
def test_golden_values_from_peers(shape, expected):
    """Check the logarithmic and geometric figures of peers.md §2.5 F (dp_accounting RDP)."""
    epsilon = get_epsilon(RepeatAndSelectEvent(GaussianEvent(SIGMA), 10.0, shape), 1e-5)
    assert epsilon == pytest.approx(expected, abs=1e-4)
    # ... far below composing the 10 fits (3.6186 by PLD, peers.md).
    assert epsilon < get_epsilon(SelfComposedEvent(GaussianEvent(SIGMA), 10), 1e-5)


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("mean", [2.0, 10.0, 100.0])
@pytest.mark.parametrize("sigma", [1.0, SIGMA, 20.0])
def test_matches_dp_accounting_on_the_same_orders(shape, mean, sigma):
    """Check the RDP bound against dp_accounting's independent implementation.

    dpsk also uses λ̂ = 1 in the minimum of Theorem 2 (allowed: λ̂ in [1, ∞)), which
    dp_accounting does when order 1 is on its grid.
    """
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rdp = pytest.importorskip("dp_accounting.rdp")
    accountant = rdp.RdpAccountant(orders=[1.0, *ORDERS])
    accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), mean, shape))
    reference = accountant.get_epsilon(1e-5)
    ours = get_epsilon(RepeatAndSelectEvent(GaussianEvent(sigma), mean, shape), 1e-5, method="rdp")
    assert ours == pytest.approx(reference, rel=1e-8)


def test_pure_runs_give_a_pure_guarantee_within_liu_talwar():
    """Check that ε₀-DP runs give at most (2 + η)·ε₀-DP (Liu & Talwar's 3ε₀ for η = 1)."""
    for shape in (0.0, 1.0, 2.0):
        event = RepeatAndSelectEvent(LaplaceEvent(1.0), 10.0, shape)
        pure = get_epsilon(event, 0.0)
        assert math.isfinite(pure)
        assert pure <= (2.0 + shape) * (1.0 + 1e-9)
        assert pure >= 1.0  # never below one run
    accountant = BudgetAccountant(epsilon=2.0 + 1e-9, delta=0.0)
    accountant.record(RepeatAndSelectEvent(PureDPEvent(1.0), 10.0, 0.0))
    with pytest.raises(ValueError):
        accountant.record(PureDPEvent(0.01))


def test_gaussian_runs_have_no_pure_guarantee():
    assert get_epsilon(RepeatAndSelectEvent(GaussianEvent(SIGMA), 10.0), 0.0) == math.inf


def test_cost_grows_slowly_with_the_mean():
    """Check monotonicity in the mean and the shape, and the log growth in the mean."""
    eps = [get_epsilon(RepeatAndSelectEvent(GaussianEvent(SIGMA), m, 1.0), 1e-5) for m in (2.0, 10.0, 100.0, 1000.0)]
    assert eps == sorted(eps)
    assert eps[-1] < 2.0 * eps[1]  # 100 times the runs, not even twice the cost
    shapes = [get_epsilon(RepeatAndSelectEvent(GaussianEvent(SIGMA), 10.0, s), 1e-5) for s in (0.0, 0.5, 1.0, 2.0)]
    assert shapes == sorted(shapes)


def test_parallel_inner_event_is_charged_as_its_largest_part():
    """Check that a trial made of a fit and a score on disjoint units costs the larger one."""
    trial = ParallelEvent((GaussianEvent(SIGMA), GaussianEvent(2 * SIGMA)))
    alone = RepeatAndSelectEvent(GaussianEvent(SIGMA), 10.0)
    assert get_epsilon(RepeatAndSelectEvent(trial, 10.0), 1e-5) == pytest.approx(get_epsilon(alone, 1e-5))


@pytest.mark.parametrize("shape", [0.0, 0.3, 1.0, 4.0])
@pytest.mark.parametrize("mean", [1.5, 10.0, 1e4])
def test_stopping_gamma_inverts_the_mean(shape, mean):
    gamma = stopping_gamma(mean, shape)
    assert 0.0 < gamma < 1.0
    assert stopping_mean(gamma, shape) == pytest.approx(mean, rel=1e-12)
    assert stopping_mean(gamma, shape) <= mean * (1 + 1e-15)


def _unnormalised_pmf(k, gamma, shape):
    """P[K = k] up to a constant: (1 - γ)^k Γ(k + η)/(Γ(η) k!), or (1 - γ)^k / k for η = 0."""
    if shape == 0.0:
        return (1.0 - gamma) ** k / k
    return np.exp(k * np.log1p(-gamma) + gammaln(k + shape) - gammaln(shape) - gammaln(k + 1.0))


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0])
def test_stopping_mean_matches_direct_summation(shape):
    gamma = 0.1
    k = np.arange(1, 5000, dtype=np.float64)
    weights = _unnormalised_pmf(k, gamma, shape)
    assert stopping_mean(gamma, shape) == pytest.approx(np.sum(k * weights) / np.sum(weights), rel=1e-9)
    if shape == 1.0:
        assert stopping_mean(gamma, shape) == pytest.approx(1.0 / gamma)


def test_bound_is_non_decreasing_in_the_order_and_above_one_run():
    base = rdp_laplace(2.0)
    out, pure = best_of_random_runs_rdp(base, 10.0, 1.0, pure_epsilon=0.5)
    assert np.all(np.diff(out) >= 0)
    assert np.all(out >= base)
    assert 0.5 <= pure <= 1.5 * (1 + 1e-9)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(event=PureDPEvent(1.0), mean=1.0), ValueError),
        (dict(event=PureDPEvent(1.0), mean=math.inf), ValueError),
        (dict(event=PureDPEvent(1.0), mean=10.0, shape=-0.5), ValueError),
        (dict(event="fit", mean=10.0), TypeError),
    ],
)
def test_invalid_events_are_rejected(kwargs, error):
    with pytest.raises(error):
        RepeatAndSelectEvent(**kwargs)


def test_runs_with_an_explicit_delta_cannot_be_accounted():
    with pytest.raises(TypeError, match="Renyi-DP curve"):
        get_epsilon(RepeatAndSelectEvent(ApproxDPEvent(1.0, 1e-6), 10.0), 1e-5)


def test_event_is_a_leaf_and_serialises():
    event = RepeatAndSelectEvent(ParallelEvent((LaplaceEvent(1.0), GaussianEvent(2.0))), 10.0, 1.0)
    assert event.flatten() == (event,)
    assert event_from_json(event_to_json(event)) == event


def test_persistent_accountant_records_it(tmp_path):
    event = RepeatAndSelectEvent(LaplaceEvent(1.0), 10.0, 0.0)
    BudgetAccountant(epsilon=5.0, delta=0.0, path=tmp_path / "ledger.sqlite").record(event)
    reopened = BudgetAccountant(path=tmp_path / "ledger.sqlite")
    assert reopened.spent_budget == [event]
    assert reopened.total().epsilon == pytest.approx(get_epsilon(event, 0.0))
