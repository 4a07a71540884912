# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The estimators a private search fits: their privacy cost, and how they are run.

A search accounts for all of its fits at once, before it reads the data, so it needs
the privacy cost of every candidate without fitting it. dpsk's fit protocol guarantees
one: a DP estimator checks its cost with its accountant *before* touching ``X``
(architecture.rst, "The fit protocol"). :func:`candidate_cost` probes each DP step
(``dpsk.accounting._preflight``: an accountant that captures that check and stops the
fit, with placeholder data that raises if anything reads it), and multiplies it by the
number of times the meta-estimators around the step fit it (``dp_fits``: bagging fits
``n_estimators`` copies); a meta-estimator whose number of fits is not known from its
parameters, or that learns from the data outside dpsk, is refused before the data is
read (:func:`check_private`).

Inner fits then run with a :class:`~dpsk.accounting._preflight.PrepaidTicket` on every
DP step: it accepts exactly the fits the search has recorded for that fit and charges
any other to the search's accountant, so nothing is charged twice and nothing is free.
Every copy a meta-estimator clones from the step shares the ticket. Before a model is
handed back, :func:`restore_user_params` puts the user's accountant back on every DP
estimator inside it, fitted copies included.
"""

import warnings

from sklearn.base import clone
from sklearn.utils import get_tags

from dpsk.accounting import ParallelEvent
from dpsk.accounting._context import BOUND_ATTRIBUTE, accountant_in_play
from dpsk.accounting._events import compose
from dpsk.accounting._preflight import (
    PrepaidTicket,
    Uncounted,
    counted_cost,
    dp_fits,
    dp_steps,
    probe_cost,
    restore_accountants,
    walk_estimators,
)
from dpsk.exceptions import PrivacyLeakWarning

__all__ = [
    "candidate_cost",
    "dp_steps",
    "inner_seed",
    "largest_cost",
    "missing_classes",
    "prepare",
    "restore_user_params",
    "search_accountant",
]


def counted_steps(estimator):
    """``[(name, step, fits)]`` of :func:`dp_fits`; TypeError if a wrapper prevents counting."""
    counted = dp_fits(estimator)
    for name, _, fits in counted:
        if isinstance(fits, Uncounted):
            raise fits.error(name)
    return counted


def check_private(estimator):
    """Raise if ``estimator`` has no DP step, or one whose fits cannot be counted in advance.

    Warn about steps that learn without privacy. Called before any data is read.
    """
    dp, plain = [], []
    walk_estimators(estimator, dp, plain)
    if not dp:
        raise ValueError(
            f"{type(estimator).__name__} has no differentially private step (a dpsk estimator): "
            "its fits would not be private, so a private search cannot account for them."
        )
    counted_steps(estimator)
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
        the same rows), each self-composed as many times as the meta-estimators around
        it fit it.

    Raises
    ------
    TypeError
        If a meta-estimator fits a DP step a number of times that its parameters do not
        tell, or learns from the data outside dpsk (the message names it).
    """
    candidate = clone(estimator).set_params(**params)
    costs = [counted_cost(probe_cost(step), fits) for _, step, fits in counted_steps(candidate)]
    if not costs:
        raise ValueError(f"the candidate {params!r} has no differentially private step")
    return compose(costs, flatten=False)


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


def public_classes(estimator):
    """The ``classes`` given to the DP steps of ``estimator`` (public label sets), by parameter name."""
    return {k: v for k, v in estimator.get_params(deep=True).items() if _param_name(k) == "classes" and v is not None}


def prepare(estimator, params, random_state, classes=None, charged=None):
    """A clone with ``params``, a prepaid ticket and ``random_state`` on every step.

    Each DP step gets its own :class:`PrepaidTicket` for as many fits as the
    meta-estimators around it make (what the search recorded for this fit); spends
    beyond them go to ``charged`` (the search's accountant), or are refused
    if it is None. Each inner fit gets its own ``random_state`` (an int drawn by the
    search, or None for fresh secure entropy), so fits never share noise: composition
    theorems assume independent randomness. ``classes`` (derived once by the search)
    fills every ``classes`` parameter left to None, so that every fit knows every class
    even when its random part misses one.
    """
    prepared = clone(estimator).set_params(**params)
    overrides = {}
    deep = prepared.get_params(deep=True)
    for key, value in deep.items():
        if _param_name(key) == "random_state":
            overrides[key] = _seed_for(deep.get(key.rpartition("__")[0], prepared), random_state)
        elif _param_name(key) == "classes" and value is None and classes is not None:
            overrides[key] = classes
    prepared.set_params(**overrides)
    for name, step, fits in counted_steps(prepared):
        ticket = PrepaidTicket(probe_cost(step), fits, charged, getattr(step, "accountant", None), name)
        step.set_params(accountant=ticket)
        vars(step).pop(BOUND_ATTRIBUTE, None)
    return prepared


def _seed_for(owner, random_state):
    """``random_state`` as ``owner`` accepts it: scikit-learn's own estimators take ints < 2**32."""
    if isinstance(random_state, int) and not getattr(owner, "_dpsk_estimator", False):
        return random_state % 2**32
    return random_state


def inner_seed(random_state, rng):
    """``random_state`` of one inner fit: None (fresh secure entropy) if the search's is None,
    else an int drawn from the search's generator (reproducible, and distinct per fit)."""
    return None if random_state is None else int(rng.integers(2**63 - 1))


def restore_user_params(fitted, estimator, params):
    """Give a fitted inner estimator back the user's parameters that :func:`prepare` replaced.

    The model stays as fitted; later refits by the user then spend on the user's
    accountant, as with scikit-learn's ``best_estimator_``. Fitted copies that
    meta-estimators made of a step (``estimators_`` of bagging, ``transformers_`` of a
    column transformer, ...) get the user's accountant back too
    (:func:`~dpsk.accounting._preflight.restore_accountants`): no ticket of the search
    survives in the model, so refitting any part of it charges the user.
    """
    user = clone(estimator).set_params(**params).get_params(deep=True)
    replaced = ("accountant", "random_state", "classes")
    keep = {key: user[key] for key in fitted.get_params(deep=True) if key in user and _param_name(key) in replaced}
    fitted.set_params(**keep)
    for step in dp_steps(fitted):
        vars(step).pop(BOUND_ATTRIBUTE, None)
    return restore_accountants(fitted)


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
            "the estimator's steps name different accountants; pass the one to charge as the search's `accountant`"
        )
    if given:
        return given[0]
    bound = next((b for b in (getattr(h, BOUND_ATTRIBUTE, None) for h in (search, *steps)) if b is not None), None)
    # The active accountant, else the bound one; strict mode refuses none (one place).
    return accountant_in_play(None, bound, who=f"this search over {type(estimator).__name__}")
