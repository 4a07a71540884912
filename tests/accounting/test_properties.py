# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Property tests (hypothesis): totals monotone and non-negative, remaining() agrees with check()."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsk.accounting import (
    ApproxDPEvent,
    BudgetAccountant,
    ExponentialEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureDPEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
)
from dpsk.exceptions import BudgetExceededError

# A few subsampled events (their RDP curves are cached, so examples stay fast).
_SAMPLED = [PoissonSampledEvent(q, GaussianEvent(s)) for q, s in [(0.01, 1.1), (0.05, 2.0), (0.2, 4.0)]]

epsilons = st.floats(0.001, 2.0, allow_nan=False)
leaf_events = st.one_of(
    epsilons.map(PureDPEvent),
    st.tuples(epsilons, st.floats(0.0, 1e-7)).map(lambda p: ApproxDPEvent(*p)),
    st.floats(0.5, 50.0).map(LaplaceEvent),
    st.floats(0.5, 50.0).map(GaussianEvent),
    epsilons.map(ExponentialEvent),
    st.tuples(epsilons, st.integers(2, 6)).map(lambda p: RandomizedResponseEvent(*p)),
    st.sampled_from(_SAMPLED),
)
events = st.one_of(leaf_events, st.tuples(leaf_events, st.integers(1, 30)).map(lambda p: SelfComposedEvent(*p)))
budgets = st.sampled_from([(math.inf, 1.0, 0.0), (math.inf, 1e-5, 0.0), (math.inf, 1.0, 1e-6), (math.inf, 1e-4, 1e-6)])

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    # The PLD switch-off fixture is the same for every example.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(st.lists(events, min_size=1, max_size=8), budgets)
def test_totals_are_monotone_and_never_negative(spends, budget):
    acc = BudgetAccountant(*budget)
    previous = (0.0, 0.0)
    for event in spends:
        acc.record(event)
        eps, delta = acc.total()
        assert eps >= 0.0 and 0.0 <= delta <= 1.0
        assert eps >= previous[0] and delta >= previous[1]
        previous = (eps, delta)


@SETTINGS
@given(st.lists(events, min_size=0, max_size=6), st.floats(0.5, 20.0), st.sampled_from([0.0, 1e-6, 1e-5, 1.0]))
def test_remaining_is_consistent_with_check(monkeypatch_pld_off, spends, epsilon, delta):
    acc = BudgetAccountant(epsilon, delta)
    for event in spends:
        try:
            acc.record(event)
        except BudgetExceededError:
            pass
    eps_left, delta_left = acc.remaining()
    assert eps_left >= 0.0 and delta_left >= 0.0
    assert acc.check(eps_left, delta_left if delta < 1.0 else 0.0)  # what remains can be spent
    if eps_left < epsilon:
        with pytest.raises(BudgetExceededError):  # and not noticeably more
            acc.check(eps_left * (1 + 1e-6) + 1e-9, delta_left if delta < 1.0 else 0.0)


@SETTINGS
@given(st.lists(events, min_size=1, max_size=6))
def test_get_epsilon_is_monotone_in_delta(spends):
    acc = BudgetAccountant()
    for event in spends:
        acc.record(event)
    values = [acc.get_epsilon(d) for d in (1e-9, 1e-7, 1e-5, 1e-3, 0.1)]
    assert all(a >= b * (1 - 1e-9) for a, b in zip(values, values[1:]))


@pytest.fixture
def monkeypatch_pld_off(monkeypatch):
    # remaining() searches without PLD; check() uses it when it helps. Without PLD the
    # two are exactly consistent, which is what the property states.
    monkeypatch.setattr("dpsk.accounting._pld.available", lambda: False)
