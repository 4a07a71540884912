# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private hyper-parameter search for DP estimators: the search engine and GridSearchCV.

``RandomizedSearchCV`` (random stopping) builds on this engine in ``_random_search.py``.

A search on private data is itself a mechanism: every candidate fit, the choice of the
best candidate and the final refit all depend on the data. These searches

1. compute the privacy cost of every fit from the hyper-parameters alone (the fit
   protocol lets a search probe each candidate's cost without data, see
   ``_estimators.py``), compose it with the selection and the refit, and check the total
   against the accountant *before reading the data*;
2. record the total on the accountant in one step (inner fits then carry tickets for
   exactly what was paid, so nothing is charged twice, nothing is free, and
   process-parallel fits need no shared ledger);
3. select privately: the exponential mechanism on validation counts, or the best of a
   random number of noisy-scored trials (Papernot & Steinke 2022); never the raw argmax.

Three designs, from the cheapest:

* ``cv="disjoint"`` (Chaudhuri, Monteleoni & Sarwate 2011): each of m candidates is
  fitted on its own random part of the data (1/(m + 1) of it) and all are scored on the
  remaining part; the parts are disjoint, so fits and selection compose in parallel:
  max(cost of a fit, ε of the selection), whatever m.
* ``cv=k``: k-fold cross-validation with random folds; each unit is in k - 1 training
  folds and one validation fold, so the fits cost (k - 1) × Σ_candidates (cost of a fit)
  and the selection ε on top.
* random stopping (``RandomizedSearchCV``, default): a random number of trials with mean
  ``n_iter``, each fitting a random candidate on k - 1 folds and releasing a noisy
  validation count on the other; the best trial is kept. The cost is about 2-3 times
  that of one trial, whatever ``n_iter`` (``RepeatAndSelectEvent``).
"""

from copy import deepcopy
from numbers import Integral

import numpy as np
from joblib import delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, is_classifier
from sklearn.model_selection import ParameterGrid
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if

from dpsk.accounting import (
    BudgetAccountant,
    ComposedEvent,
    ParallelEvent,
    SelfComposedEvent,
)
from dpsk.accounting._context import label_of, note_spent, spending_as
from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.mechanisms import ExponentialMechanism
from dpsk.model_selection._estimators import (
    candidate_cost,
    check_private,
    inner_seed,
    largest_cost,
    prepare,
    restore_user_params,
    search_accountant,
)
from dpsk.model_selection._splits import (
    check_search_data,
    check_training_parts,
    fit_and_score,
    fit_params_with_groups,
    params_message,
    privacy_units,
    random_parts,
    run_fits,
    shared_classes,
)
from dpsk.utils._docstring import Substitution
from dpsk.utils._random import rekey_generator, release_generator
from dpsk.utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context, check_is_fitted
from dpsk.utils.validation import check_privacy_params

__all__ = ["GridSearchCV"]

_SEARCH_DOCS = {
    "estimator": """estimator : estimator object
        A dpsk estimator, or a pipeline whose learning steps are dpsk estimators. Its
        ``fit`` must follow dpsk's protocol (check the privacy cost before reading the
        data), which lets the search compute every cost in advance. A scikit-learn
        meta-estimator around a DP step must fit it a number of times known from its
        parameters (``BaggingClassifier``: ``n_estimators``, each charged; with
        ``bootstrap=True`` only if the step's ``fit`` takes ``sample_weight``); others
        (``OneVsRestClassifier``, ``CalibratedClassifierCV``, stacking, unknown
        wrappers) are refused with a ``TypeError`` before the data is read.""",
    "scoring": """scoring : {"accuracy"} or None, default="accuracy"
        Validation score. Only accuracy, scored as a count of correct predictions
        (sensitivity 1), is supported: other scorers have no sensitivity bound the search
        could guarantee. ``None`` means accuracy.""",
    "epsilon": """epsilon : float, default=1.0
        Privacy budget ε > 0 of the selection step (on top of the fits' own costs).
        ``float("inf")``: the best candidate exactly (ties broken at random), recorded as
        an infinite spend.""",
    "refit": """refit : bool or "selected", default=True
        ``True``: fit the selected candidate on the whole dataset (``best_estimator_``),
        charged in the total. ``"selected"``: keep the selected candidate's model as
        fitted during the search (on its part of the data): no further cost, less data.
        ``False``: no model, only ``best_params_``.""",
    "n_jobs": """n_jobs : int or None, default=None
        Number of joblib workers for the fits (``None``: 1 unless in a
        :func:`joblib.parallel_config` context; -1: all processors). The budget is
        recorded once, in the calling process, so process workers need no shared
        accountant.""",
    "verbose": """verbose : int, default=0
        Progress messages, printed by the calling process. >= 1: the plan and its
        privacy cost stage by stage, before the budget is checked and anything is
        fitted, then what the accountant has spent; exactly 1: also a progress bar of
        the fits on standard error (tqdm's when it is installed, the optional
        ``progress`` extra; a few plain lines otherwise). >= 2: one line per fit as it ends
        (``[CV 1/3; 2/4] END C=0.1``, scikit-learn's style, without score or time: both
        depend on the private data). >= 3: joblib's progress messages too.""",
    "pre_dispatch": """pre_dispatch : int or str, default="2*n_jobs"
        Number of tasks dispatched ahead (joblib's ``pre_dispatch``).""",
    "random_state": """random_state : None, int or numpy.random.Generator, default=None
        Source of all the search's randomness: the random splits, the selection, and the
        noise of every inner fit (each fit gets its own seed, overriding the estimator's
        ``random_state``, so that no two fits share noise). ``None`` (recommended): fresh
        secure entropy everywhere. An int makes the search reproducible — for tests and
        research only.""",
    "accountant": """accountant : BudgetAccountant or None, default=None
        Accountant that is charged the whole search. ``None``: the ``accountant`` of the
        estimator's DP steps, else the one made active with ``with accountant:``. The
        total is checked before any data is read
        (:class:`~dpsk.exceptions.BudgetExceededError`) and recorded once.""",
    "attributes": """best_params_ : dict
        The selected candidate (a private release).
    best_estimator_ : estimator
        The refitted (``refit=True``) or search-fitted (``refit="selected"``) model of
        the selected candidate, with the user's ``accountant``, ``random_state`` and
        ``classes`` put back. Absent with ``refit=False``.
    privacy_spent_ : PrivacyEvent
        The total privacy cost of the search (fits, selection and refit), as recorded.
    budget_report_ : dict of lists
        One row per stage and a final ``"total"`` row: keys ``"stage"``, ``"epsilon"``,
        ``"delta"`` and ``"event"``; ``pandas.DataFrame(search.budget_report_)`` shows
        it. (ε, δ) are reported like the accountant in play (a default
        :class:`~dpsk.BudgetAccountant` if none). Stages of the disjoint design compose
        in parallel and others by the accountant's tight composition, so the total is at
        most the sum of the stages.
    n_splits_ : int
        Number of cross-validation folds (1 for the disjoint design and random stopping).
    classes_ : ndarray of shape (n_classes,)
        The classes of ``best_estimator_``.
    n_features_in_ : int
        Number of features seen during fit (from ``best_estimator_``).""",
    "not_released": """**What is not released.** Validation scores depend on the private data.
    They are not exposed: there is no ``best_score_`` and no score in ``cv_results_``.
    Use :func:`dpsk.model_selection.cross_val_score` (noisy, charged) or a public test
    set to measure accuracy.""",
}


def _search_estimator_has(attr):
    """``available_if`` check: refit and the (fitted) estimator has ``attr``."""

    def check(self):
        if self.refit is False:
            raise AttributeError(f"This {type(self).__name__} has refit=False: {attr} is not available")
        if hasattr(self, "best_estimator_"):
            getattr(self.best_estimator_, attr)
        else:
            getattr(self.estimator, attr)
        return True

    return check


def print_plan(name, description, report):
    """Print what a search will do and its privacy cost per stage (``verbose >= 1``)."""
    print(f"{name}: {description}")
    print(f"{name}: privacy cost, checked against the budget before the data is read:")
    width = max(len(stage) for stage in report["stage"])
    for stage, epsilon, delta in zip(report["stage"], report["epsilon"], report["delta"]):
        print(f"    {stage:<{width}}  epsilon={epsilon:<10.6g} delta={delta:.3g}")


def print_charged(name, accountant):
    """Print where the cost of a search was recorded (``verbose >= 1``)."""
    if accountant is None:
        print(f"{name}: no accountant in play; the cost is kept in privacy_spent_ only")
        return
    if not isinstance(accountant, BudgetAccountant):
        print(f"{name}: charged to {accountant!r}")
        return
    spent = accountant.total()
    print(
        f"{name}: charged to {accountant!r}, which has now spent epsilon={spent.epsilon:.6g}, delta={spent.delta:.3g}"
    )


def budget_report(stages, total, accountant):
    """Rows (stage, ε, δ, event) of the stages and the total, reported like ``accountant``."""
    reporter = accountant if isinstance(accountant, BudgetAccountant) else BudgetAccountant()
    report = {"stage": [], "epsilon": [], "delta": [], "event": []}
    for name, event in [*stages, ("total", total)]:
        epsilon, delta = reporter.total(spent_budget=[event])
        report["stage"].append(name)
        report["epsilon"].append(float(epsilon))
        report["delta"].append(float(delta))
        report["event"].append(event)
    return report


class _SearchData:
    """The validated data of a search, and what every inner fit needs besides its rows."""

    def __init__(self, X, y, fit_params, units, n_units):
        self.X, self.y, self.fit_params = X, y, fit_params
        self.units, self.n_units = units, n_units
        self.classes = None  # set by the search once the budget is spent (it warns)
        self.charged = None  # the search's accountant: any spend it did not plan goes there

    def prepare(self, estimator, params, seed):
        return prepare(estimator, params, seed, self.classes, self.charged)

    def task(self, estimator, train, validation, keep_model):
        """A delayed :func:`fit_and_score` of ``estimator`` on these rows."""
        return delayed(fit_and_score)(
            estimator, self.X, self.y, self.fit_params, train, validation, self.units, keep_model
        )


class _Plan:
    """What a search will do, and its cost, known before the data is read."""

    def __init__(self, candidates, stages, total, selection):
        self.candidates = candidates
        self.stages = stages
        self.total = total
        self.selection = selection


class _BaseSearch(DPEstimatorMixin, MetaEstimatorMixin, BaseEstimator):
    """Private search over a fixed list of candidates (or random stopping, in subclasses)."""

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "scoring": [StrOptions({"accuracy"}), None],
        "epsilon": DP_PARAMETER_CONSTRAINTS["epsilon"],
        "refit": ["boolean", StrOptions({"selected"})],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "pre_dispatch": [Integral, str],
        "random_state": DP_PARAMETER_CONSTRAINTS["random_state"],
        "accountant": DP_PARAMETER_CONSTRAINTS["accountant"],
    }

    # -- scikit-learn plumbing ----------------------------------------------------------

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = deepcopy(sub.classifier_tags)
        tags.regressor_tags = deepcopy(sub.regressor_tags)
        tags.input_tags.pairwise = sub.input_tags.pairwise
        tags.input_tags.sparse = sub.input_tags.sparse
        return tags

    @property
    def classes_(self):
        """The class labels of ``best_estimator_``."""
        _search_estimator_has("classes_")(self)
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self):
        """Number of features seen during fit."""
        try:
            check_is_fitted(self)
        except Exception as exc:  # NotFittedError is an AttributeError: hasattr() is False
            raise AttributeError(f"{type(self).__name__} is not fitted yet") from exc
        return self.best_estimator_.n_features_in_

    @property
    def feature_names_in_(self):
        """Feature names seen during fit (when X had string column names)."""
        check_is_fitted(self)
        return self.best_estimator_.feature_names_in_

    def _delegate(self, method, X):
        check_is_fitted(self)
        return getattr(self.best_estimator_, method)(X)

    @available_if(_search_estimator_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_``."""
        return self._delegate("predict", X)

    @available_if(_search_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from ``best_estimator_``."""
        return self._delegate("predict_proba", X)

    @available_if(_search_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities from ``best_estimator_``."""
        return self._delegate("predict_log_proba", X)

    @available_if(_search_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``best_estimator_``."""
        return self._delegate("decision_function", X)

    @available_if(_search_estimator_has("transform"))
    def transform(self, X):
        """Transform with ``best_estimator_``."""
        return self._delegate("transform", X)

    @available_if(_search_estimator_has("score"))
    def score(self, X, y=None):
        """Accuracy of ``best_estimator_`` on (X, y) (not a private release: your data)."""
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)

    # -- the search ---------------------------------------------------------------------

    def _accountant_in_play(self):
        """The accountant the search charges (see :func:`search_accountant`)."""
        return search_accountant(self, self.estimator)

    def _check_setup(self):
        check_privacy_params(self.epsilon)
        if not is_classifier(self.estimator):
            raise ValueError(
                f"scoring='accuracy' needs a classifier; got {type(self.estimator).__name__}. The "
                "validation scores of regressors and transformers have no sensitivity bound dpsk "
                "can guarantee, so a private search cannot select among them."
            )
        check_private(self.estimator)

    def _cv(self):
        return self.cv

    def _fixed_plan(self, candidates, rng):
        """Costs and stages of a search over a fixed list of candidates."""
        costs = [candidate_cost(self.estimator, params) for params in candidates]
        # Monotone counts: P(i) ∝ exp(ε s_i / (2Δ)) with Δ = 1/2 is exp(ε s_i), ε-DP and
        # ε-bounded-range because every score moves in the same direction (McSherry & Talwar).
        selection = ExponentialMechanism(epsilon=self.epsilon, sensitivity=0.5, random_state=rng)
        em = selection.privacy_event()
        if self._cv() == "disjoint":
            search = ParallelEvent((*costs, em))
            stages = [("candidate fits (disjoint parts)", largest_cost(costs)), ("selection (held-out part)", em)]
        else:
            k = self._cv()
            counts = {}
            for cost in costs:
                counts[cost] = counts.get(cost, 0) + (k - 1)
            fits = ComposedEvent(tuple(SelfComposedEvent(cost, n) for cost, n in counts.items()))
            search = ComposedEvent((fits, em))
            stages = [(f"candidate fits ({k}-fold: each unit in {k - 1} training folds)", fits), ("selection", em)]
        return self._with_refit(_Plan(candidates, stages, search, selection), costs)

    def _with_refit(self, plan, costs):
        if self.refit is True:
            refit = largest_cost(costs)
            plan.stages.append(("refit on all data", refit))
            plan.total = ComposedEvent((plan.total, refit))
        return plan

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **params):
        """Search privately: plan and charge the whole cost, fit, select, refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **params : dict
            ``groups`` (array-like of shape (n_samples,)): the privacy unit of each row (a
            user id). Units are assigned to parts whole, validation scores count each
            unit at most once, and ``groups`` is passed on to estimators whose ``fit``
            takes it (user-level DP). Without it each row is a unit. Other parameters
            are passed to the estimator's ``fit`` (indexed by row when they have one
            entry per row).

        Returns
        -------
        self : object

        Raises
        ------
        BudgetExceededError
            Before any data is read, if the whole search does not fit the budget.
        ValueError
            Before anything is spent, for invalid data, or if a random training part is
            empty (too few units for the design).
        """
        self._check_setup()
        rng = release_generator(self.random_state, context=self)  # re-keyed to the data below
        plan = self._plan(rng)
        accountant = self._accountant_in_play()
        report = budget_report(plan.stages, plan.total, accountant)
        name = type(self).__name__
        if self.verbose > 0:
            print_plan(name, self._describe(plan), report)
        label = label_of(self, call=f"fit: {self._describe(plan)}")
        if accountant is not None:
            with spending_as(label):
                accountant.check_event(plan.total)
        groups = params.pop("groups", None)
        X, y, groups = check_search_data(X, y, groups, name, self.estimator)
        rekey_generator(rng, self.random_state, context=self, data=(X, y, groups))
        data = _SearchData(X, y, fit_params_with_groups(self.estimator, groups, params), *privacy_units(len(y), groups))
        splits = self._draw_splits(plan, data, rng)
        if accountant is not None:
            with spending_as(label):
                accountant.record(plan.total)
            note_spent(label, plan.total, accountant)
        self.privacy_spent_ = plan.total
        self.budget_report_ = report
        if self.verbose > 0:
            print_charged(name, accountant)
        data.classes = shared_classes(self.estimator, y, name)
        data.charged = accountant
        best_params, model = self._run(plan, data, splits, rng)
        self.best_params_ = best_params
        if self.refit is True:
            model = data.prepare(self.estimator, best_params, inner_seed(self.random_state, rng))
            model.fit(X, y, **data.fit_params)
            if self.verbose >= 2:
                print("[refit on all data] END", flush=True)
        if self.refit:
            self.best_estimator_ = restore_user_params(model, self.estimator, best_params)
        return self

    def _draw_splits(self, plan, data, rng):
        """(train, validation) rows of each candidate: a list of pairs per candidate."""
        m = len(plan.candidates)
        cv = self._cv()
        parts = random_parts(rng, m + 1 if cv == "disjoint" else cv, data.n_units, data.units)
        if cv == "disjoint":
            splits = [[(np.flatnonzero(parts == i), np.flatnonzero(parts == m))] for i in range(m)]
        else:
            splits = [[(np.flatnonzero(parts != f), np.flatnonzero(parts == f)) for f in range(cv)]] * m
        check_training_parts(
            [pair for pairs in splits for pair in pairs], data.n_units, self.estimator, data.units is not None
        )
        return splits

    def _run_fixed(self, plan, data, splits, rng):
        """Fit every candidate on its training parts, score it, select with the mechanism."""
        candidates = plan.candidates
        m = len(candidates)
        cv = self._cv()
        keep = self.refit == "selected"
        tasks = [
            (i, j, data.prepare(self.estimator, candidates[i], inner_seed(self.random_state, rng)), train, validation)
            for i in range(m)
            for j, (train, validation) in enumerate(splits[i])
        ]
        lines = [
            f"[{'part' if cv == 'disjoint' else f'CV {j + 1}/{cv};'} {i + 1}/{m}] END {params_message(candidates[i])}"
            for i, j, *_ in tasks
        ]
        results = run_fits(
            (data.task(est, train, validation, keep and j == 0) for _, j, est, train, validation in tasks),
            lines,
            n_jobs=self.n_jobs,
            pre_dispatch=self.pre_dispatch,
            verbose=self.verbose,
            description=type(self).__name__,
        )
        scores = np.zeros(m)
        models = {}
        for (i, _j, *_), (score, model) in zip(tasks, results):
            scores[i] += score
            if model is not None:
                models[i] = model
        self.best_index_ = self._select(plan.selection, scores)
        self.n_splits_ = 1 if cv == "disjoint" else cv
        self.cv_results_ = _candidate_table(candidates)
        return candidates[self.best_index_], models.get(self.best_index_)

    def _select(self, selection, scores):
        """The index chosen by the private selection mechanism (one release)."""
        return int(selection.randomise(scores))

    def _describe(self, plan):
        m = len(plan.candidates)
        if self._cv() == "disjoint":
            return (
                f"{m} candidates, each fitted on its own random part of the data (1/{m + 1} of the "
                "units on average) and scored on the remaining part"
            )
        k = self._cv()
        return f"Fitting {k} folds for each of {m} candidates, totalling {k * m} fits"


def _candidate_table(candidates):
    """``cv_results_``: the candidates only (scores depend on the data and are not released)."""
    names = sorted({name for params in candidates for name in params})
    table = {"params": list(candidates)}
    for name in names:
        column = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=True)
        for i, params in enumerate(candidates):
            if name in params:
                column[i] = params[name]
        table[f"param_{name}"] = column
    return table


@Substitution(**_SEARCH_DOCS)
class GridSearchCV(_BaseSearch):
    """Private exhaustive search over a parameter grid, with a private selection step.

    Every candidate of ``param_grid`` is fitted on random parts of the data (its cost is
    computed from the hyper-parameters before anything is read), scored by its number of
    correct predictions on held-out units, and one candidate is selected by the
    exponential mechanism — never by the raw argmax. The whole cost (fits, selection,
    refit) is checked against the budget first and recorded on the accountant once.

    Parameters
    ----------
    {estimator}
    param_grid : dict or list of dicts
        Candidates, as for :class:`sklearn.model_selection.GridSearchCV`.
    {scoring}
    cv : "disjoint" or int, default="disjoint"
        ``"disjoint"``: m candidates are fitted on m disjoint random parts (each 1/(m + 1)
        of the units) and scored on the remaining part; fits and selection compose in
        parallel (Chaudhuri, Monteleoni & Sarwate 2011), the cheapest design. An int k
        >= 2: k-fold cross-validation with random folds; each candidate is fitted k times
        and each unit counts in k - 1 of them. Splitters are not accepted: their folds
        are not random per unit (see Notes).
    {epsilon}
    {refit}
    {n_jobs}
    {verbose}
    {pre_dispatch}
    {random_state}
    {accountant}

    Attributes
    ----------
    best_index_ : int
        Index of the selected candidate in ``cv_results_["params"]``.
    cv_results_ : dict
        The candidates: ``"params"`` and one masked ``"param_<name>"`` column per
        parameter, as in scikit-learn, without scores (see Notes).
    {attributes}

    See Also
    --------
    RandomizedSearchCV : random candidates, with random stopping by default (cheaper for
        many candidates).
    cross_val_score : private, noisy cross-validated accuracy of one estimator.

    Notes
    -----
    **Privacy.** Neighbouring datasets differ in one unit: a row, or all rows of one
    user with ``groups=``. Units draw their part (fold) independently and uniformly,
    so a unit's presence changes only the part it lands in. The validation score of a
    candidate is its number of correct predictions (per user: the fraction of the
    user's rows), which one unit changes by at most 1 for fixed models, all candidates
    in the same direction; the exponential mechanism with P(i) ∝ exp(ε s_i) is then
    ε-DP and ε-bounded-range (recorded as an
    :class:`~dpsk.accounting.ExponentialEvent`; sampled exactly, floating-point safe).
    With m candidates of costs c_i (events, each the cost of one fit):

    - ``cv="disjoint"``: max(max_i c_i, ε) by parallel composition, as a
      :class:`~dpsk.accounting.ParallelEvent`;
    - ``cv=k``: the composition of (k - 1) fits of every candidate and the selection;
    - ``refit=True`` adds one more fit of the selected candidate (the largest c_i when
      they differ).

    ``privacy_spent_`` holds the total event and the accountant composes it with
    everything else it holds. Released: ``best_params_``, ``best_index_`` and the
    model. The random parts, the scores and the fitted candidates are not released.
    The inner fits run with independent noise. Fits that fail (for example a random
    part with a single class when the estimator derives classes from y) make the search
    fail after the budget was recorded: nothing is released.
    Domain: that of the searched estimator; with ``groups``, a user id for every row.
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain (:ref:`declared_domain`).

    {not_released}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import BudgetAccountant
    >>> from dpsk.model_selection import GridSearchCV
    >>> from dpsk.utils._testing import ToyDPMeanClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (600, 2)); y = (X[:, 0] > 0).astype(int)
    >>> est = ToyDPMeanClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    >>> acc = BudgetAccountant(epsilon=3.0)
    >>> search = GridSearchCV(est, {{"bounds": [(-1.0, 1.0), (-0.5, 0.5)]}}, epsilon=0.5,
    ...                       accountant=acc, random_state=0).fit(X, y)
    >>> search.budget_report_["stage"]
    ['candidate fits (disjoint parts)', 'selection (held-out part)', 'refit on all data', 'total']
    >>> acc.total()
    (epsilon=2.0, delta=0.0)
    """

    _parameter_constraints = {
        **_BaseSearch._parameter_constraints,
        "param_grid": [dict, list],
        "cv": [StrOptions({"disjoint"}), Interval(Integral, 2, None, closed="left")],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        scoring="accuracy",
        cv="disjoint",
        epsilon=1.0,
        refit=True,
        n_jobs=None,
        verbose=0,
        pre_dispatch="2*n_jobs",
        random_state=None,
        accountant=None,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.cv = cv
        self.epsilon = epsilon
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.random_state = random_state
        self.accountant = accountant

    def _plan(self, rng):
        return self._fixed_plan(list(ParameterGrid(self.param_grid)), rng)

    def _run(self, plan, data, splits, rng):
        return self._run_fixed(plan, data, splits, rng)
