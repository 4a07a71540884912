# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The value ``"private"`` of the estimators' sensitivity parameters, in one place.

An estimator whose ``bounds`` (``bounds_X``, ``bounds_y``), ``data_norm`` or
``row_norm`` is ``"private"`` estimates it from the data inside its fit, with a share of
its ε (``dpsk.get_config()["bounds_epsilon_share"]``, 10 % by default): the releases of
:class:`dpsk.stats._bounds.BoundsQuery`, per column (noisy logarithmic histogram, or DP
quantiles inside a public domain) or of row norms (an upper quantile). The fit then runs
with the rest of ε, and records *one* event composing both: the bounds' releases and
the fit's.

The protocol, for an estimator's ``fit`` (:func:`private_box` builds the plan of a
``bounds`` parameter, with a placeholder box)::

    plan = PrivateSensitivity(self, self.epsilon, {"bounds_X": ("columns", d, None), ...})
    ...                                  # the fit's mechanisms and cost with plan.fit_epsilon,
                                         # on placeholders: the cost must not depend on the bounds
    rng = release_generator(...)
    plan.spend(self, cost, rng)          # one event: the bounds' releases, then the fit's
    lower, upper = plan.box("bounds_X", X, placeholder)   # after the spend
    ...                                  # rebuild the mechanisms on the released bounds

The fit's event must not depend on the bounds' values (only its noise scale may): the
recording harness checks it (tests/utils/test_private_bounds.py). Lattice noise's event
does depend on its sensitivity through the lattice's rounding, so a fit whose
sensitivity follows a private bound normalises its mechanisms to sensitivity 1
(``LinearRegression``).

Privacy: adaptive sequential composition. Every bound is an ε_b-DP release (its share of
ε·share), the fit is (ε − ε·share, δ)-DP *for any fixed value of the bounds*, and may
use the released bounds (adaptively): the fit as a whole is (ε, δ)-DP, and the composed
event says so exactly. The costs are fixed by the parameters and the data's shape before
any value is read, so they are the same on neighbouring datasets.
"""

import numpy as np
import scipy.sparse as sp

from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import compose
from dpsk.stats._bounds import BoundsQuery
from dpsk.utils._sklearn_compat import StrOptions
from dpsk.utils.validation import is_non_private, resolve_bounds

__all__ = [
    "DATA",
    "PRIVATE",
    "PRIVATE_CONSTRAINT",
    "PRIVATE_ONLY_CONSTRAINT",
    "PrivateSensitivity",
    "bounds_epsilon_share",
    "is_data",
    "is_private",
    "private_box",
    "private_boxes",
    "require_given",
]

#: The value that asks for a privately estimated sensitivity parameter. A parameter left
#: out (None) means the same, unless a public alternative covers it (issue 19).
PRIVATE = "private"
#: The value that asks for the non-private derivation from the data (PrivacyLeakWarning).
DATA = "data"
#: Their ``_parameter_constraints`` entry (appended to a bound's constraints).
PRIVATE_CONSTRAINT = StrOptions({PRIVATE, DATA})
#: The constraint of an optional clip (None: no clip, not a data-derived value): ``"private"`` only.
PRIVATE_ONLY_CONSTRAINT = StrOptions({PRIVATE})


def is_private(value):
    """Whether a sensitivity parameter asks for private estimation (``"private"``)."""
    return isinstance(value, str) and value == PRIVATE


def is_data(value):
    """Whether a sensitivity parameter asks to be derived from the data (``"data"``, not private)."""
    return isinstance(value, str) and value == DATA


def wants_private(value):
    """Whether a sensitivity parameter is estimated privately: ``"private"``, or left out (None).

    For parameters without a public alternative; those with one (``data_norm`` next to
    ``bounds``, ``bounds_X`` next to ``row_norm``) decide a left-out value themselves.
    """
    return value is None or is_private(value)


def what_to_pass(names, left_out):
    """The end of a refusal of ``"private"``: what to pass instead (one text).

    ``left_out``: whether the refused parameters were left out (None), which means
    ``"private"``; the caller then learns that the default is the private estimate.
    """
    names = ", ".join(f"`{name}`" for name in names)
    why = f'left out, {names} is estimated privately ("private"), which is not possible here. ' if left_out else ""
    return (
        f'{why}Pass the public value of {names} (from the schema, not from this data), or "data" to derive '
        "it from the data outside the privacy guarantee (PrivacyLeakWarning)"
    )


def require_given(estimator, param, why):
    """Refuse a sensitivity parameter without a private estimate when it is left out (None) or
    ``"private"`` (before any spend); return its value otherwise.

    ``why``: why dpsk does not estimate it privately (public text for the error).
    """
    value = getattr(estimator, param)
    if wants_private(value):
        how = " was left out" if value is None else '="private" was asked for'
        raise ValueError(
            f"{type(estimator).__name__}: `{param}`{how}, but it is not estimated privately ({why}). "
            + what_to_pass([param], left_out=False)
        )
    return value


def refuse_sparse_private(estimator, X, *params):
    """Refuse privately estimated sensitivity parameters on sparse X (before any spend): their
    release reads dense rows, which sparse X would have to be densified for.

    ``params``: the parameters estimated privately when left out (None) or ``"private"``
    (the caller passes only those; see :func:`wants_private`).
    """
    values = {param: getattr(estimator, param, None) for param in params}
    private = [param for param, value in values.items() if wants_private(value)]
    if private and sp.issparse(X):
        left_out = all(values[param] is None for param in private)
        raise ValueError(
            f"{type(estimator).__name__}: private bounds are not supported on sparse X yet (densify X); "
            + what_to_pass(private, left_out)
        )


def bounds_epsilon_share():
    """The share of an estimator's ε spent on its ``"private"`` parameters (dpsk's config)."""
    from dpsk._config import get_config

    return get_config()["bounds_epsilon_share"]


class PrivateSensitivity:
    """The ``"private"`` sensitivity parameters of one fit: their budget, cost and releases.

    Parameters
    ----------
    estimator : estimator
        For error messages.
    epsilon : float
        The estimator's whole ε.
    requests : dict
        ``{param: (which, n_columns, domain)}`` for each parameter set to ``"private"``:
        ``which`` is ``"columns"`` or ``"row_norm"`` (see
        :class:`~dpsk.stats._bounds.BoundsQuery`), ``domain`` a public domain or None;
        an optional fourth item is the query's ``contribution`` (default 1).
        Requests whose domain is decided by an earlier release (a row norm inside a
        private box) pass None. Empty: nothing is private, the whole ε is the fit's.
    groups : array-like or None
        User ids: private estimation is item level only, so ``groups`` is refused.

    Attributes
    ----------
    fit_epsilon : float
        The budget left for the fit's own releases.
    event : PrivacyEvent or None
        The composed cost of the bounds' releases (None when nothing is private).
    note : str or None
        For the ledger label: which parameters are private, with which share.
    """

    def __init__(self, estimator, epsilon, requests, *, groups=None):
        self.requests = dict(requests)
        self.values = {}
        self.queries = None
        epsilon = float(epsilon)
        if not self.requests:
            self.fit_epsilon, self.event, self.note, self.share = epsilon, None, None, 0.0
            return
        if groups is not None:
            owner = estimator if isinstance(estimator, str) else type(estimator).__name__
            raise ValueError(
                f'{owner}: private bounds ("private", the default of a left-out bound) are estimated with one '
                "row as the privacy unit, not one user "
                f"(`groups`); {what_to_pass(self.requests, left_out=False)}"
            )
        self.share = float(bounds_epsilon_share())
        self.non_private = is_non_private(epsilon)
        names = ", ".join(self.requests)
        if self.non_private:
            # ε = ∞: the whole fit is declared non-private; the bounds are the data's.
            self.fit_epsilon, self.event = epsilon, None
            self.note = f"{names} from the data (ε = ∞)"
            self.queries = None
            return
        bounds_epsilon, self.fit_epsilon = split_epsilon(epsilon, [self.share, 1.0 - self.share])
        self.each = split_epsilon(bounds_epsilon, len(self.requests))
        # Built here for their cost (known before the data is read); rebuilt on the
        # fit's Generator by bind().
        self.queries = {name: self._query(name, None) for name in self.requests}
        self.event = compose([query.event for query in self.queries.values()])
        self.note = f"private {names}: {self.share:.0%} of ε"

    def __contains__(self, name):
        return name in self.requests

    def spend(self, estimator, fit_cost, rng):
        """Bind ``rng`` and record the fit's one event (:meth:`cost`) on ``estimator``'s
        accountant, labelled with :attr:`note`: after the data is validated, before any
        release."""
        self.bind(rng)
        estimator._spend_privacy_budget(self.cost(fit_cost), note=self.note)  # noqa: SLF001

    def box(self, name, X, given):
        """The released bounds of ``name`` on ``X`` if it is private (after :meth:`spend`), else ``given``."""
        return self.release(name, X) if name in self else given

    def cost(self, fit_cost):
        """The fit's one event: the bounds' releases, then the fit's (``fit_cost``)."""
        return fit_cost if self.event is None else compose([self.event, fit_cost])

    def bind(self, rng):
        """Give the releases the fit's Generator (call after ``release_generator``)."""
        if self.queries:
            self.queries = {name: self._query(name, rng) for name in self.requests}
        return self

    def _query(self, name, rng):
        which, n_columns, domain, *contribution = self.requests[name]
        return BoundsQuery(
            which, n_columns, epsilon=self.each, domain=domain, rng=rng, contribution=(contribution or [1])[0]
        )

    def release(self, name, values):
        """The private value of ``name`` from ``values`` (after the spend).

        ``values``: the data (n, n_columns) for ``"columns"``, the row norms for
        ``"row_norm"``. Returns (lower, upper) arrays or a float, as
        :meth:`BoundsQuery.release`; with ε = ∞, the data's own (exact) values.
        """
        which = self.requests[name][0]
        if not sp.issparse(values):  # sparse columns: their histograms count the implicit zeros
            values = np.asarray(values, dtype=np.float64)
        if self.queries is None:  # ε = ∞
            if which == "columns" and sp.issparse(values):
                value = tuple(np.asarray(m.todense(), dtype=np.float64).ravel() for m in (values.min(0), values.max(0)))
            elif which == "columns":
                value = (values.min(axis=0), values.max(axis=0))
            else:
                value = float(values.max()) if values.size and values.max() > 0 else 1.0
        else:
            value = self.queries[name].release(values)
        if which == "row_norm" and not value > 0:
            value = float(np.finfo(np.float64).tiny)
        self.values[name] = value
        return value


def private_box(estimator, X, *, param="bounds", attribute="bounds_"):
    """``(plan, (lower, upper))`` for an estimator's feature bounds ``param``.

    Public or ``"data"``: :func:`~dpsk.utils.validation.resolve_bounds` (with its leak
    warning for ``"data"``) and an empty plan. ``"private"`` or left out (None): the plan of their release
    and the placeholder box [−1, 1]^d for building the fit's mechanisms, whose cost does
    not depend on the box's widths; after :meth:`PrivateSensitivity.spend`, take the
    released box with ``plan.box(param, X, (lower, upper))`` and rebuild them.
    """
    plan, boxes = private_boxes(estimator, {param: (X, attribute)})
    return plan, boxes[param]


def private_boxes(estimator, data, *, contribution=1):
    """:func:`private_box` for several bounds at once (e.g. ``bounds`` and ``bounds_y``).

    ``data``: ``{param: (values of shape (n, k), attribute)}``. Returns the one plan of
    the private ones and ``{param: (lower, upper)}`` (placeholders for the private ones).
    ``contribution``: the values of each column one privacy unit changes in L1 (see
    :class:`~dpsk.stats._bounds.BoundsQuery`; public).
    """
    requests, boxes = {}, {}
    for param, (values, attribute) in data.items():
        value = getattr(estimator, param)
        k = values.shape[1]
        if wants_private(value):  # sparse X too: the columns' histograms count its implicit zeros
            requests[param] = ("columns", k, None, contribution)
            boxes[param] = (np.full(k, -1.0), np.full(k, 1.0))
        else:
            boxes[param] = resolve_bounds(estimator, value, values, param=param, attribute=attribute)
    return PrivateSensitivity(estimator, estimator.epsilon, requests), boxes
