# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The estimators a private search fits: their privacy cost, and how they are run.

A search accounts for all of its fits at once, before it reads the data, so it needs
the privacy cost of every candidate without fitting it. dpsk's fit protocol guarantees
one: a DP estimator checks its cost with its accountant *before* touching ``X``
(architecture.rst, "The fit protocol"). :func:`candidate_cost` probes each DP step
(``dpsk.accounting._preflight``: an accountant that captures that check and stops the
fit, with placeholder data that raises if anything reads it). Inner fits then run with
:data:`PREPAID`, an accountant that accepts every spend (the search has recorded them
all already), with independent noise, and without the user's accountant, so nothing is
charged twice.
"""

import warnings

from sklearn.base import clone
from sklearn.utils import get_tags

from dpsk.accounting import ParallelEvent
from dpsk.accounting._context import BOUND_ATTRIBUTE, active_accountant
from dpsk.accounting._preflight import PREPAID, compose, dp_steps, probe_cost, walk_estimators
from dpsk.exceptions import PrivacyLeakWarning

__all__ = [
    "PREPAID",
    "candidate_cost",
    "dp_steps",
    "inner_seed",
    "largest_cost",
    "missing_classes",
    "prepare",
    "restore_user_params",
    "search_accountant",
]


def check_private(estimator):
    """Raise if ``estimator`` has no DP step; warn about steps that learn without privacy."""
    dp, plain = [], []
    walk_estimators(estimator, dp, plain)
    if not dp:
        raise ValueError(
            f"{type(estimator).__name__} has no differentially private step (a dpsk estimator): "
            "its fits would not be private, so a private search cannot account for them."
        )
    for _, step in plain:
        if get_tags(step).requires_fit:
            warnings.warn(
                f"{type(step).__name__} learns from the data without differential privacy; the "
                "search's privacy guarantee does not cover what it learns. Use a dpsk "
                "estimator for it, or a stateless transformer.",
                PrivacyLeakWarning,
                stacklevel=3,
            )


def candidate_cost(estimator, params):
    """The privacy cost of one fit of ``estimator`` with ``params`` set, found without data.

    Returns
    -------
    PrivacyEvent
        The cost of the only DP step, or the composition of all of them (they all see
        the same rows).
    """
    candidate = clone(estimator).set_params(**params)
    costs = [probe_cost(step) for step in dp_steps(candidate)]
    if not costs:
        raise ValueError(f"the candidate {params!r} has no differentially private step")
    return compose(costs)


def largest_cost(costs):
    """One event for "one of ``costs``, chosen by the mechanism": the largest if they agree.

    Distinct costs are combined as a :class:`~dpsk.accounting.ParallelEvent`, which the
    accountant charges as its most expensive part (its largest privacy profile and RDP
    curve), which bounds whichever one is chosen.
    """
    distinct = list(dict.fromkeys(costs))
    return distinct[0] if len(distinct) == 1 else ParallelEvent(tuple(distinct))


def _param_name(key):
    return key.split("__")[-1]


def missing_classes(estimator):
    """Whether a DP step of ``estimator`` would derive its ``classes`` from the data."""
    return any(_param_name(k) == "classes" and v is None for k, v in estimator.get_params(deep=True).items())


def prepare(estimator, params, random_state, classes=None):
    """A clone with ``params``, the :data:`PREPAID` accountant and ``random_state`` on every step.

    Each inner fit gets its own ``random_state`` (an int drawn by the search, or None for
    fresh secure entropy), so fits never share noise: composition theorems assume
    independent randomness. ``classes`` (derived once by the search) fills every
    ``classes`` parameter left to None, so that every fit knows every class even when
    its random part misses one.
    """
    prepared = clone(estimator).set_params(**params)
    for step in dp_steps(prepared):
        step.set_params(accountant=PREPAID)
        vars(step).pop(BOUND_ATTRIBUTE, None)
    overrides = {}
    for key, value in prepared.get_params(deep=True).items():
        if _param_name(key) == "random_state":
            overrides[key] = random_state
        elif _param_name(key) == "classes" and value is None and classes is not None:
            overrides[key] = classes
    return prepared.set_params(**overrides)


def inner_seed(random_state, rng):
    """``random_state`` of one inner fit: None (fresh secure entropy) if the search's is None,
    else an int drawn from the search's generator (reproducible, and distinct per fit)."""
    return None if random_state is None else int(rng.integers(2**63 - 1))


def restore_user_params(fitted, estimator, params):
    """Give a fitted inner estimator back the user's parameters that :func:`prepare` replaced.

    The model stays as fitted; later refits by the user then spend on the user's
    accountant, as with scikit-learn's ``best_estimator_``.
    """
    user = clone(estimator).set_params(**params).get_params(deep=True)
    replaced = ("accountant", "random_state", "classes")
    keep = {key: user[key] for key in fitted.get_params(deep=True) if key in user and _param_name(key) in replaced}
    fitted.set_params(**keep)
    for step in dp_steps(fitted):
        vars(step).pop(BOUND_ATTRIBUTE, None)
    return fitted


def search_accountant(search, estimator):
    """The accountant a search charges: its own, else the estimator's, else the active one.

    Order: the search's ``accountant`` parameter; the ``accountant`` of the estimator's
    DP steps (they must agree); the accountant of an enclosing ``with accountant:``
    block; one bound when the search or its steps were cloned inside such a block.
    """
    if getattr(search, "accountant", None) is not None:
        return search.accountant
    steps = dp_steps(estimator)
    given = list({id(a): a for a in (getattr(s, "accountant", None) for s in steps) if a is not None}.values())
    if len(given) > 1:
        raise ValueError(
            "the estimator's steps name different accountants; pass the one to charge as the "
            "search's `accountant`"
        )
    if given:
        return given[0]
    active = active_accountant()
    if active is not None:
        return active
    for holder in (search, *steps):
        bound = getattr(holder, BOUND_ATTRIBUTE, None)
        if bound is not None:
            return bound
    return None
