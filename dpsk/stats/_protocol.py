# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The protocol every function of :mod:`dpsk.stats` follows, in one place.

As for estimators (doc/developers/architecture.rst): the cost is known from the
parameters (and shapes), checked on the accountant before any value is read, and
recorded before the first release; all noise comes from one Generator that is never
stored.
"""

import numpy as np
import scipy.sparse as sp

from dpsk.accounting._context import SpendLabel, spending_as
from dpsk.accounting._events import compose
from dpsk.dask._data import is_dask
from dpsk.stats._common import check_accountant
from dpsk.stats._contribution import ContributionPlan, present_ids
from dpsk.utils.validation import (
    check_on_invalid,
    check_privacy_params,
    rekey_generator,
    release_generator,
    screen_invalid,
    take_records,
)

__all__ = ["StatCall"]


class StatCall:
    """One call: validated privacy parameters, the user-level plan, the accountant, the Generator.

    Parameters
    ----------
    epsilon, delta : float
    groups : array-like or None
    contribution_bound, threshold, public_user_counts
        See ``dpsk.stats._contribution.ContributionPlan``.
    accountant : BudgetAccountant or None
    random_state : None, int or Generator
    on_invalid : {"raise", "drop", "clip"}, default="raise"
        What :meth:`screen` does with records outside the domain.
    function : str, default="dpsk.stats"
        The public name of the function (error messages).

    Attributes
    ----------
    release_epsilon : float
        The budget left for the statistic once the threshold selection (if any) is paid.
    rng : numpy.random.Generator
        With an integer seed, re-keyed by :meth:`spend` to the stream of this release
        (function, parameters and data; ``dpsk.utils.validation.release_generator``): the
        mechanisms hold it from before the data is read, and draw from it only after.
    cost : PrivacyEvent
        Set by :meth:`check`.
    """

    def __init__(
        self,
        epsilon,
        delta,
        groups,
        contribution_bound,
        threshold,
        public_user_counts,
        accountant,
        random_state,
        on_invalid="raise",
        function="dpsk.stats",
    ):
        self.epsilon, self.delta = check_privacy_params(epsilon, delta)
        self.on_invalid = check_on_invalid(on_invalid, function)
        if on_invalid != "raise" and public_user_counts:
            raise ValueError(
                f"on_invalid={on_invalid!r} cannot be used with public_user_counts=True: dropping a "
                "user's invalid rows would change a row count declared public. Clean the data first."
            )
        self.groups = groups
        self.plan_params = (contribution_bound, threshold, public_user_counts)
        self.plan = ContributionPlan(
            user_level=groups is not None,
            contribution_bound=contribution_bound,
            threshold=threshold,
            public_user_counts=public_user_counts,
            epsilon=self.epsilon,
        )
        self.release_epsilon = self.plan.release_epsilon
        self.relation = self.plan.relation
        self.user_level = groups is not None
        self.accountant = check_accountant(accountant)
        self.random_state = random_state
        self.rng = release_generator(random_state, context="dpsk.stats")
        self.cost = None
        self.bounds_query = None
        self.function = function

    @classmethod
    def of(cls, function, params):
        """The call of the public ``function`` from its parameters (``locals()`` of its body).

        Statistics without ``delta`` or ``public_user_counts`` get 0 and False.
        """
        return cls(
            params["epsilon"],
            params.get("delta", 0.0),
            params["groups"],
            params["contribution_bound"],
            params["threshold"],
            params.get("public_user_counts", False),
            params["accountant"],
            params["random_state"],
            params["on_invalid"],
            function,
        )

    def plan_bounds(self, bounds, n_outputs, per_record):
        """With ``bounds="private"``: reserve ``bounds_epsilon_share`` of the release's ε
        for a private estimate of the bounds (:func:`dpsk.stats.bounds`, a noisy
        logarithmic histogram per output) and lower :attr:`release_epsilon` to the rest.
        Call before building the statistic's query; its cost joins :meth:`check`'s."""
        from dpsk.utils._private_bounds import PrivateSensitivity, wants_private, what_to_pass

        if not wants_private(bounds):
            return
        left_out = bounds is None  # left out: "private" (issue 19), refused with what to pass instead
        if self.user_level:
            raise ValueError(
                f"{self.function}: private bounds are item level, not user level (`groups`); "
                + what_to_pass(["bounds"], left_out)
            )
        if per_record != 1:
            raise ValueError(
                f"{self.function}: private bounds need one value per record and output (a 2-d input "
                "reduced over axis=0, or a 1-d input); " + what_to_pass(["bounds"], left_out)
            )
        self.bounds_query = PrivateSensitivity(
            self.function, self.release_epsilon, {"bounds": ("columns", n_outputs, None)}
        )
        self.release_epsilon = self.bounds_query.fit_epsilon

    def release_bounds(self, records, lower, upper):
        """The private bounds (after :meth:`spend`), or ``(lower, upper)`` as given."""
        if self.bounds_query is None:
            return lower, upper
        return self.bounds_query.bind(self.rng).release("bounds", records.X)

    def require_public(self, given, name):
        """Refuse ``on_invalid="clip"`` when ``name`` (bounds, range) is derived from the data.

        Clipping maps infinities to the public bounds; without them there is nothing to
        clip to. Decided from the parameters alone.
        """
        if self.on_invalid == "clip" and (given is None or (isinstance(given, str) and given == "data")):
            raise ValueError(f'on_invalid="clip" clips to the public `{name}`: pass `{name}`, or use "drop"')

    def screen(self, arr, *, infinite="clip"):
        """``arr`` and the user ids with the ``on_invalid`` policy applied (after :meth:`check`).

        ``"raise"``: unchanged (invalid values raise later, before the spend). ``"drop"``
        and ``"clip"``: records (``arr[i]``) holding NaN (or, for ``"drop"``, ±inf), or
        whose user id is missing, are removed; under ``"clip"`` ±inf become the extreme
        finite values, which the release clips to its bounds (``infinite`` as in
        :func:`dpsk.utils.validation.screen_invalid`). May return no records at all:
        the release then runs on no data.
        """
        if self.on_invalid == "raise":
            return arr
        valid = None if self.groups is None else present_ids(self.groups, arr.shape[0])
        values, keep = screen_invalid(self.on_invalid, arr, valid=valid, infinite=infinite)
        values, groups = take_records(keep, values, self.groups)
        self.groups = groups
        return values if sp.issparse(values) else np.asarray(values)

    def check(self, *events):
        """The call's cost (threshold selection and ``events``), checked on the accountant.

        Call before reading any value: raises BudgetExceededError if it does not fit.
        """
        bounds = () if self.bounds_query is None or self.bounds_query.event is None else (self.bounds_query.event,)
        self.cost = compose([self.plan.event, *bounds, *events])
        if self.accountant is not None:
            with spending_as(SpendLabel(call="dpsk.stats")):
                self.accountant.check_event(self.cost)
        return self.cost

    def spend(self, n_records, *, function, params, data):
        """Validate the user ids, key the Generator to this release, then record the cost
        on the accountant (atomic check-and-spend): after the data is validated, before
        the first release.

        ``function`` (its public name), ``params`` (the statistic's other parameters) and
        ``data`` (the validated values) name the release for an integer seed's stream.
        """
        ids = None if is_dask(self.groups) else self.groups  # Dask: counts bound by dpsk.dask, in `data`
        if ids is not None or not self.user_level:
            self.plan.bind(ids, n_records)
        release = (function, self.epsilon, self.delta, self.plan_params, params)
        rekey_generator(self.rng, self.random_state, context=release, data=(*data, ids))
        if self.accountant is not None:
            with spending_as(SpendLabel(call=function if "." in function else f"dpsk.stats.{function}")):
                self.accountant.record(self.cost)

    def contribution(self, **target):
        """The records' weights (may release the threshold: call after :meth:`spend`)."""
        return self.plan.resolve(self.rng, **target)
