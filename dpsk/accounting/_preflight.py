# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a fit of any estimator would cost, found before the data is read.

dpsk's fit protocol (architecture.rst, "The fit protocol") guarantees that a DP
estimator checks its cost with its accountant *before* touching ``X``. That makes the
cost of a fit observable without data: :func:`probe_cost` hands the estimator an
accountant that captures the check and stops the fit, on placeholders that raise if
read. :func:`named_dp_steps` finds the DP estimators inside pipelines, column
transformers and other meta-estimators, and :func:`check_budget` checks all their costs
at once, on the accountants they would spend on, so that a composite fit is refused
before *any* of its steps reads the data.

A meta-estimator may fit a DP step several times (bagging fits ``n_estimators``
copies): :func:`dp_fits` counts, from public parameters alone, how many fits of each
step one fit of the whole makes, and says why when it cannot (:func:`wrapper_rule`).
The count multiplies the step's cost everywhere a cost is planned.

Private searches (:mod:`dpsk.model_selection`) use the same probes to charge a whole
search at once; their inner fits then run with a :class:`PrepaidTicket`, an accountant
that accepts exactly the fits the search has recorded already and charges any other to
the search's accountant (or refuses it), so that no release is ever free.
"""

import threading
from typing import TYPE_CHECKING, NamedTuple

from sklearn import get_config
from sklearn.base import BaseEstimator, clone
from sklearn.utils.metadata_routing import get_routing_for_object
from sklearn.utils.validation import has_fit_parameter

from dpsk.accounting._context import BOUND_ATTRIBUTE, SpendLabel, resolve_accountant, spending_as
from dpsk.accounting._events import PrivacyEvent, SelfComposedEvent, compose
from dpsk.exceptions import BudgetExceededError

if TYPE_CHECKING:
    from dpsk.accounting._accountant import BudgetAccountant

__all__ = [
    "BudgetCheck",
    "PrepaidTicket",
    "check_budget",
    "dp_fits",
    "dp_steps",
    "named_dp_steps",
    "probe_cost",
    "restore_accountants",
]


class PrepaidTicket:
    """The accountant of one inner fit of a search: the fits the search paid for, and no more.

    A search records its whole cost on its accountant before reading the data, then
    fits clones of the estimator. Each DP step of such a clone carries a ticket for the
    number of fits of it that :func:`dp_fits` counted, each paid at the step's probed
    cost (the cost its ``fit`` checks first; the fit protocol makes what the fit then
    records no more than that, and the release-recording tests check it). Each spend
    the step records uses up one paid fit; any further spend -- a wrapper that fits the
    step more often than counted -- is checked and recorded on ``charged`` (the search's
    accountant), or refused before the step reads the data if the search has none. No
    spend is ever accepted for free.

    Clones and deep copies (scikit-learn's ``clone`` deep-copies non-estimator
    parameters) are the ticket itself, so every copy a meta-estimator makes in this
    process draws on the same allowance. A pickled ticket (``n_jobs`` workers) carries
    its remaining allowance; a wrapper that itself sends copies of the step to
    several processes gives each the same allowance, and only the count of
    :func:`dp_fits` bounds them then.

    Parameters
    ----------
    cost : PrivacyEvent
        What the search recorded for one fit of the step.
    fits : int
        Number of fits paid for.
    charged : accountant or None
        Where spends beyond the paid fits are checked and recorded.
    restore : accountant or None
        The user's ``accountant`` of the step, put back on every fitted copy of it by
        :func:`restore_accountants` before a model is handed to the user.
    step : str
        Name of the step, for messages.
    """

    def __init__(self, cost, fits, charged=None, restore=None, step=""):
        self.cost = cost
        self._left = int(fits)
        self.charged = charged
        self.restore = restore
        self.step = step
        self._lock = threading.Lock()

    def _surplus(self, event):
        if self.charged is None:
            raise RuntimeError(
                f"DP step {self.step!r} was asked for a release the search did not plan or pay for "
                f"({event!r}): a meta-estimator fitted it more often than dpsk counted. The fit is "
                "refused before the step reads the data; please report this wrapper to dpsk."
            )
        return self.charged

    def check_event(self, event):
        """Accept a spend while paid fits remain; check any other on the search's accountant."""
        with self._lock:
            if self._left > 0:
                return True
        return self._surplus(event).check_event(event)

    def record(self, event):
        """Use up one paid fit; record any further spend on the search's accountant."""
        with self._lock:
            if self._left > 0:
                self._left -= 1
                return self
        self._surplus(event).record(event)
        return self

    @property
    def remaining(self):
        """Number of paid fits not used yet."""
        with self._lock:
            return self._left

    def __repr__(self):
        return f"<prepaid by the search: {self.remaining} fit(s) left>"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __sklearn_clone__(self):
        return self

    def __reduce__(self):
        return (PrepaidTicket, (self.cost, self.remaining, self.charged, self.restore, self.step))


def is_prepaid(accountant):
    """Whether ``accountant`` is a search's ticket (the spends are recorded elsewhere)."""
    return isinstance(accountant, PrepaidTicket)


class _Probed(Exception):
    """Raised by the probe accountant to stop a fit once its cost is known."""

    def __init__(self, event):
        super().__init__("privacy cost probed")
        self.event = event


class _ProbeAccountant:
    """Captures the first cost an estimator checks (or records), then stops its fit."""

    def check_event(self, event):
        raise _Probed(event)

    def record(self, event):
        raise _Probed(event)


class _DataWasRead(Exception):
    pass


class _Unreadable:
    """Placeholder for ``X`` and ``y`` during a probe: any use of it raises."""

    def _refuse(self, *args, **kwargs):
        raise _DataWasRead()

    __array__ = __len__ = __iter__ = __getitem__ = _refuse

    def __getattr__(self, name):
        raise _DataWasRead()


def is_dp_estimator(obj):
    """Whether ``obj`` is a dpsk DP estimator (it accounts for everything its fit does)."""
    return isinstance(obj, BaseEstimator) and getattr(obj, "_dpsk_estimator", False)


def _join(path, name):
    return f"{path}__{name}" if path else name


def _children(obj, path):
    """``(parameter, name, value)`` of every parameter value of ``obj`` that may hold estimators.

    Names are the prefixes ``set_params`` uses (``"scale__numeric"``, ``"clf"``), so that
    a message can name a step the way users address it. A list of (name, estimator, ...)
    tuples (Pipeline.steps, ColumnTransformer.transformers) names its items after the
    owner, as get_params(deep=True) does; other items are numbered.
    """
    for key, value in obj.get_params(deep=False).items():
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if isinstance(item, tuple) and len(item) >= 2 and isinstance(item[0], str):
                    yield key, _join(path, item[0]), item[1]
                else:
                    yield key, _join(path, f"{key}[{i}]"), item
        else:
            yield key, _join(path, key), value


def walk_estimators(obj, dp, plain, path=""):
    """Collect ``(name, estimator)`` of DP estimators (not looking inside them) and of non-DP leaves.

    Names are those of :func:`_children`.
    """
    if is_dp_estimator(obj):
        dp.append((path or type(obj).__name__, obj))
    elif isinstance(obj, BaseEstimator):
        before = len(dp) + len(plain)
        for _, name, value in _children(obj, path):
            walk_estimators(value, dp, plain, name)
        if len(dp) + len(plain) == before:
            plain.append((path or type(obj).__name__, obj))


# -- how often a meta-estimator fits the DP steps it holds -------------------------------


class Uncounted(NamedTuple):
    """Why the number of fits of a DP step cannot be known before the data is read."""

    wrapper: str
    reason: str

    def error(self, step):
        """The TypeError a caller that needs the count raises (before reading the data)."""
        return TypeError(
            f"Cannot count the fits of DP step {step!r} inside {self.wrapper}, so its privacy cost "
            f"cannot be planned: {self.reason}. Nothing was read or spent."
        )


def _sklearn_class(module, name):
    import importlib

    return getattr(importlib.import_module(module), name)


def _kinds():
    """scikit-learn's meta-estimators whose fits of their sub-estimators dpsk knows."""
    get = _sklearn_class
    once = (
        get("sklearn.pipeline", "Pipeline"),
        get("sklearn.pipeline", "FeatureUnion"),
        get("sklearn.compose", "ColumnTransformer"),
        get("sklearn.compose", "TransformedTargetRegressor"),
        get("sklearn.ensemble", "VotingClassifier"),
        get("sklearn.ensemble", "VotingRegressor"),
    )
    bagging = (get("sklearn.ensemble", "BaggingClassifier"), get("sklearn.ensemble", "BaggingRegressor"))
    non_private = {
        get("sklearn.calibration", "CalibratedClassifierCV"): (
            "it fits its calibrators (sigmoid or isotonic) on the data without differential "
            "privacy, and refits the step once per cross-validation split. Fit the dpsk "
            "classifier on its own and calibrate it on public data"
        ),
        get("sklearn.ensemble", "StackingClassifier"): (
            "its final estimator learns from cross-validated predictions, in which one record "
            "changes many rows, so no DP step's guarantee covers it"
        ),
        get("sklearn.ensemble", "StackingRegressor"): (
            "its final estimator learns from cross-validated predictions, in which one record "
            "changes many rows, so no DP step's guarantee covers it"
        ),
    }
    per_label = tuple(
        get(module, name)
        for module, name in (
            ("sklearn.multiclass", "OneVsRestClassifier"),
            ("sklearn.multiclass", "OneVsOneClassifier"),
            ("sklearn.multiclass", "OutputCodeClassifier"),
            ("sklearn.multioutput", "MultiOutputClassifier"),
            ("sklearn.multioutput", "MultiOutputRegressor"),
            ("sklearn.multioutput", "ClassifierChain"),
            ("sklearn.multioutput", "RegressorChain"),
        )
    )
    return once, bagging, non_private, per_label


def _caps_duplicates(estimator):
    """Whether a bootstrap sample reaches ``estimator`` as weights (counts), not repeated rows.

    The test scikit-learn's bagging makes (``sample_weight`` in ``fit``, or requested
    with metadata routing). dpsk estimators that take ``sample_weight`` clip it to
    [0, 1], so a row drawn k times counts once; :class:`dpsk.pipeline.Pipeline` passes
    the weights on to its steps (scikit-learn's Pipeline does not: refused).
    """
    if hasattr(estimator, "_weights_reach_dp_steps"):  # dpsk.pipeline.Pipeline
        return estimator._weights_reach_dp_steps()
    if not is_dp_estimator(estimator):
        return False
    if get_config().get("enable_metadata_routing", False):
        return get_routing_for_object(estimator).consumes("fit", ("sample_weight",)) != set()
    return has_fit_parameter(estimator, "sample_weight")


def wrapper_rule(obj, key, child):
    """Fits of ``child`` (the value of ``obj``'s parameter ``key``) per fit of ``obj``, or Uncounted.

    Called only for parameters that hold DP steps. Decided from public parameters alone.
    """
    once, bagging, non_private, per_label = _kinds()
    name = type(obj).__name__
    if isinstance(obj, once):
        return 1
    if isinstance(obj, bagging) and key == "estimator":
        if obj.bootstrap and not _caps_duplicates(child):
            return Uncounted(
                f"{name}(bootstrap=True)",
                "bootstrap samples repeat rows, and a row present k times in one fit costs k times "
                f"the step's epsilon; {type(child).__name__}.fit takes no sample_weight through which "
                "the repetitions could be capped at one. Use bootstrap=False (subsamples without "
                "repetition), or dpsk.pipeline.Pipeline, whose fit passes the weights on",
            )
        return int(obj.n_estimators)
    for kind, why in non_private.items():
        if isinstance(obj, kind):
            return Uncounted(name, f"{name} is refused: {why}")
    if isinstance(obj, per_label):
        return Uncounted(
            name,
            f"{name} fits one copy of its estimator per class (or output) it finds in y, a number "
            "that depends on the data and is no parameter, so the cost is unknown before the data "
            "is read. Use a dpsk classifier that handles several classes itself (with "
            "`classes=`), or fit the wrapper directly: each copy then charges the step's own "
            "accountant",
        )
    return Uncounted(
        name,
        f"dpsk does not know how many times {name} fits the estimators it holds (a scikit-learn "
        "meta-estimator may clone and refit them), so their cost cannot be planned. Put the DP "
        "step outside it, or fit it directly: each fit then charges the step's own accountant",
    )


def dp_fits(estimator):
    """``[(name, step, fits), ...]``: each DP step and how many times one fit of ``estimator`` fits it.

    ``fits`` is an int (the product of the counts of the meta-estimators between
    ``estimator`` and the step, from their public parameters), or an :class:`Uncounted`
    saying which wrapper prevents counting and why. The walk does not look inside DP
    estimators (they account for their own fits).
    """
    found = []
    _count_fits(estimator, "", 1, found)
    return found


def _count_fits(obj, path, fits, found):
    if is_dp_estimator(obj):
        found.append((path or type(obj).__name__, obj, fits))
        return
    if not isinstance(obj, BaseEstimator):
        return
    for key, name, value in _children(obj, path):
        if not named_dp_steps(value):
            continue
        inner = fits if isinstance(fits, Uncounted) else wrapper_rule(obj, key, value)
        if not isinstance(inner, Uncounted) and not isinstance(fits, Uncounted):
            inner = fits * inner
        _count_fits(value, name, inner, found)


def counted_cost(cost, fits):
    """The cost of ``fits`` fits of a step whose one fit costs ``cost``."""
    return cost if fits == 1 else SelfComposedEvent(cost, fits)


def restore_accountants(model):
    """Put the user's accountant back on every DP estimator inside a fitted ``model``.

    Walks the parameters and the fitted attributes (``estimators_``, ``named_steps``,
    ``transformers_``, ``calibrated_classifiers_``, ...) at any depth: every DP estimator
    whose accountant is a search's :class:`PrepaidTicket` gets the ticket's ``restore``
    (the accountant the user gave the step), and loses any accountant bound at clone
    time, so that a refit of any part of the model charges the user. Returns ``model``.
    """
    seen = set()

    def visit(obj, depth):
        if depth > 50 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, dict):
            for value in obj.values():
                visit(value, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for value in obj:
                visit(value, depth + 1)
        elif _may_hold_estimators(obj):
            if is_dp_estimator(obj) and is_prepaid(getattr(obj, "accountant", None)):
                obj.accountant = obj.accountant.restore
                vars(obj).pop(BOUND_ATTRIBUTE, None)
            for value in vars(obj).values():
                visit(value, depth + 1)

    visit(model, 0)
    return model


def _may_hold_estimators(obj):
    """Estimators, and the helper objects of scikit-learn and dpsk that hold them."""
    if isinstance(obj, BaseEstimator):
        return True
    module = type(obj).__module__ or ""
    # Accountants (and tickets) are handles, not holders of estimators.
    holder = not hasattr(obj, "check_event")
    return holder and hasattr(obj, "__dict__") and module.split(".")[0] in ("sklearn", "dpsk")


def named_dp_steps(estimator):
    """``[(name, step), ...]``: the DP estimators inside ``estimator`` (itself, or its steps).

    A DP estimator accounts for everything its own ``fit`` does, so the walk does not
    look inside it. Pipelines, column transformers and other containers are searched
    through their parameters, at any depth.
    """
    dp, plain = [], []
    walk_estimators(estimator, dp, plain)
    return dp


def dp_steps(estimator):
    """The differentially private estimators inside ``estimator`` (see :func:`named_dp_steps`)."""
    return [step for _, step in named_dp_steps(estimator)]


def probe_cost(step):
    """The privacy cost ``step.fit`` checks before reading the data (no data is read).

    Raises
    ------
    TypeError
        If ``step.fit`` touches the data before checking its cost (it breaks dpsk's fit
        protocol), so that its cost cannot be known in advance.
    """
    probe = clone(step).set_params(accountant=_ProbeAccountant())
    vars(probe).pop(BOUND_ATTRIBUTE, None)
    try:
        probe.fit(_Unreadable(), _Unreadable())
    except _Probed as probed:
        if not isinstance(probed.event, PrivacyEvent):
            raise TypeError(
                f"{type(step).__name__}.fit checked a {type(probed.event).__name__}, not a PrivacyEvent"
            ) from None
        return probed.event
    except _DataWasRead:
        pass
    raise TypeError(
        f"{type(step).__name__}.fit does not check its privacy cost with its accountant before "
        "reading the data (dpsk's fit protocol), so its cost cannot be known in advance."
    )


def accountant_in_play(step):
    """The accountant ``step.fit`` would check and spend on, here and now (or None)."""
    resolve = getattr(step, "_accountant_in_play", None)
    return resolve() if resolve is not None else resolve_accountant(step)


class BudgetCheck(NamedTuple):
    """What a fit would cost, per DP step and per accountant: the report of :func:`check_budget`.

    Attributes
    ----------
    costs : dict of str to PrivacyEvent
        The cost of each DP step in one fit of the estimator, by step name (the prefix
        ``set_params`` uses, such as ``"scale__numeric"``; the class name for a bare
        estimator): the cost of one fit of the step, self-composed as many times as the
        meta-estimators around it fit it (``BaggingClassifier``: ``n_estimators``).
    accountants : dict of str to accountant or None
        The accountant each step would spend on; None if it spends on none.
    totals : list of (accountant, tuple of str, PrivacyEvent)
        For each accountant in play (in the order of the steps): the names of the steps
        that spend on it and their composed cost, which was checked against its budget.

    Notes
    -----
    **Privacy.** The report is computed from hyper-parameters alone: no data was read,
    nothing was released and nothing was spent.
    """

    costs: dict
    accountants: dict
    totals: list


def _exceeded(estimator, accountant, names, steps, costs, error):
    from dpsk.accounting._accountant import BudgetAccountant
    from dpsk.accounting._display import budget_text

    reporter = accountant if isinstance(accountant, BudgetAccountant) else BudgetAccountant()
    listed = ", ".join(
        f"{name!r} ({type(steps[name]).__name__}, {budget_text(reporter._figures(costs[name]))})" for name in names
    )
    what = "its DP step" if len(names) == 1 else f"its {len(names)} DP steps"
    return BudgetExceededError(
        f"Fitting {type(estimator).__name__} would exceed the budget of {accountant!r}: {what} "
        f"{listed} spend on it, and together they do not fit. No step was fitted and nothing "
        f"was spent. The accountant said: {error}"
    )


def budget_check(estimator, accountant=None, *, skip_unaccounted=False):
    """:func:`check_budget`; ``skip_unaccounted`` leaves out (does not probe) steps with
    nothing to check: no accountant, or one prepaid by a search."""
    counted = dp_fits(estimator)
    steps = {name: step for name, step, _ in counted}
    costs, accountants, groups = {}, {}, {}
    for name, step, fits in counted:
        spends_on = accountant if accountant is not None else accountant_in_play(step)
        if skip_unaccounted and (spends_on is None or is_prepaid(spends_on)):
            continue
        if isinstance(fits, Uncounted):
            raise fits.error(name)
        costs[name] = counted_cost(probe_cost(step), fits)
        accountants[name] = spends_on
        if spends_on is not None:
            groups.setdefault(id(spends_on), (spends_on, []))[1].append(name)
    totals = []
    for spends_on, names in groups.values():
        total = compose((costs[name] for name in names), flatten=False)
        try:
            with spending_as(SpendLabel(type(estimator).__name__, None, "pre-flight check of all DP steps")):
                spends_on.check_event(total)
        except BudgetExceededError as error:
            raise _exceeded(estimator, spends_on, names, steps, costs, error) from error
        totals.append((spends_on, tuple(names), total))
    return BudgetCheck(costs, accountants, totals)


def check_budget(estimator: BaseEstimator, accountant: "BudgetAccountant | None" = None) -> BudgetCheck:
    """Check, before any data is read, that a fit of ``estimator`` fits the privacy budget.

    A scikit-learn :class:`~sklearn.pipeline.Pipeline` fits its steps one after the
    other, and each DP step checks only its own cost when its turn comes: if the last
    step does not fit the budget, the earlier ones have already read the data and spent.
    This function checks them all at once, without data. It finds every DP step of
    ``estimator`` (itself, or the steps of pipelines, column transformers and other
    meta-estimators, at any depth), finds what one fit of each costs (the cost its
    ``fit`` checks before reading the data) and how many times the meta-estimators
    around it fit it, groups the steps by the accountant each would spend on, and
    checks their composed cost on each accountant.

    :class:`dpsk.pipeline.Pipeline` calls it at the start of every fit.

    Parameters
    ----------
    estimator : estimator object
        A dpsk estimator, or any scikit-learn meta-estimator holding some. Not fitted and
        not modified.

    accountant : BudgetAccountant, default=None
        Check every step's cost on this accountant. By default each step's cost is
        checked on the accountant its ``fit`` would spend on if called now: its
        ``accountant`` parameter, else the one of the enclosing ``with accountant:``
        block, else the one bound when it was cloned inside such a block. Steps that
        would spend on no accountant are reported and not checked.

    Returns
    -------
    report : BudgetCheck
        The cost of each DP step and the accountant it spends on, and the composed
        cost checked on each accountant.

    Raises
    ------
    BudgetExceededError
        If the steps that spend on one accountant cannot afford their composed cost
        together; the message names them.
    TypeError
        If a DP step does not check its cost before reading the data (dpsk's fit
        protocol), or sits inside a meta-estimator whose number of fits of it is not
        known from its parameters, so that its cost cannot be known in advance; the
        message names the step and the meta-estimator.

    See Also
    --------
    dpsk.pipeline.Pipeline : A pipeline that runs this check before it fits.
    BudgetAccountant.check_event : The dry run applied to each accountant.

    Notes
    -----
    **Privacy.** The check reads no data, releases nothing and spends nothing: each
    step's cost comes from a clone fitted on placeholders that raise if read, stopped
    at its budget check, and each accountant's check is a dry run
    (:meth:`BudgetAccountant.check_event`). Steps that see the same rows compose
    sequentially (a column transformer's steps see different columns of the same rows,
    so they compose too).

    Meta-estimators are counted from their parameters: pipelines, column
    transformers, feature unions, ``TransformedTargetRegressor`` and voting ensembles
    fit each step once; ``BaggingClassifier``/``BaggingRegressor`` ``n_estimators``
    times (with ``bootstrap=True`` only around a step whose ``fit`` takes
    ``sample_weight``: otherwise a row repeated k times would cost k times ε). Other
    meta-estimators are refused with a ``TypeError`` naming them:
    ``OneVsRestClassifier`` and the multi-output wrappers (their number of fits
    depends on y), ``CalibratedClassifierCV`` and stacking (they learn from the data
    outside any DP step), and any meta-estimator dpsk does not know. A pipeline with
    ``memory`` that finds a transformer in its cache does not refit it and spends
    nothing for it, while the check counts it. A budget spent by another process
    between the check and the fit is caught by each step's own check-and-spend.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpsk import BudgetAccountant
    >>> from dpsk.accounting import check_budget
    >>> from dpsk.linear_model import LogisticRegression
    >>> from dpsk.preprocessing import StandardScaler
    >>> pipe = make_pipeline(StandardScaler(epsilon=0.5, bounds=(0, 1)),
    ...                      LogisticRegression(epsilon=1.0, data_norm=2.0, classes=[0, 1]))
    >>> report = check_budget(pipe, BudgetAccountant(epsilon=2.0))
    >>> sorted(report.costs)
    ['logisticregression', 'standardscaler']
    >>> check_budget(pipe, BudgetAccountant(epsilon=1.2))
    Traceback (most recent call last):
    ...
    dpsk.exceptions.BudgetExceededError: Fitting Pipeline would exceed the budget of ...
    """
    return budget_check(estimator, accountant)
