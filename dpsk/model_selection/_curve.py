# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy–utility curves: the test score of a DP estimator as a function of ε.

The curve is computed like a private search is run (``_search.py``): the cost of every
fit is probed from the hyper-parameters, the total is checked against the budget before
the data is read and recorded once, and the fits then run with prepaid tickets (for
exactly what was recorded) and independent noise, so process workers need no shared
ledger.
"""

import numbers
from types import SimpleNamespace

import numpy as np
from joblib import delayed
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.metrics import check_scoring
from sklearn.utils import Bunch, indexable
from sklearn.utils.validation import check_array, check_consistent_length

from dpsk.accounting import ComposedEvent, SelfComposedEvent
from dpsk.accounting._context import SpendLabel, spending_as
from dpsk.model_selection._estimators import candidate_cost, check_private, inner_seed, prepare, search_accountant
from dpsk.model_selection._search import budget_report, print_charged, print_plan
from dpsk.model_selection._splits import run_fits
from dpsk.utils._random import release_generator

__all__ = ["privacy_utility_curve"]


def _check_epsilons(epsilons):
    values = np.asarray(epsilons, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-d sequence of budgets, got shape {values.shape}")
    if np.any(np.isnan(values)) or np.any(values <= 0):
        raise ValueError(f"every epsilon must be > 0 (inf: the non-private ceiling), got {values.tolist()}")
    return values


def _estimator_at(estimator, param_name, epsilon):
    """A fresh unfitted estimator for ``epsilon``: a clone with ``param_name`` set, or the factory's."""
    if hasattr(estimator, "fit"):
        return clone(estimator).set_params(**{param_name: epsilon})
    made = estimator(epsilon)
    if not hasattr(made, "fit"):
        raise TypeError(f"estimator({epsilon!r}) returned {type(made).__name__}, not an estimator")
    return made


def _label(model):
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    return type(final).__name__


def _score_name(model, scoring):
    if isinstance(scoring, str):
        return scoring
    if scoring is None:
        if is_classifier(model):
            return "accuracy"
        if is_regressor(model):
            return "R^2"
    return "score"


def _fit_and_test(estimator, X_train, y_train, X_test, y_test, scorer, fit_params):
    """Fit on the training data and return the score on the test data (a joblib task)."""
    estimator.fit(X_train, y_train, **fit_params)
    return float(scorer(estimator, X_test, y_test))


def privacy_utility_curve(
    estimator,
    epsilons,
    X_train,
    y_train,
    X_test,
    y_test,
    *,
    param_name="epsilon",
    n_seeds=5,
    scoring=None,
    baseline=None,
    label=None,
    params=None,
    n_jobs=None,
    pre_dispatch="2*n_jobs",
    verbose=0,
    random_state=None,
    accountant=None,
):
    """Test score of a DP estimator at several privacy budgets ε, over repeated fits.

    For every ε in ``epsilons`` the estimator is fitted ``n_seeds`` times on the
    training data, each time with fresh noise, and scored on the test data. The mean and
    spread of the scores show what privacy costs in accuracy, and how much the noise
    makes a single model vary; :func:`dpsk.utils.plotting.plot_privacy_utility` draws
    them. Every fit is charged: the whole cost is checked against the budget before the
    data is read and recorded once.

    Parameters
    ----------
    estimator : estimator object or callable
        A dpsk estimator, or a pipeline whose learning steps are dpsk estimators: it is
        cloned and its parameter ``param_name`` set to each ε. Or a callable taking ε
        and returning a fresh unfitted estimator (for example to share ε between the
        steps of a pipeline). Adding a model to a comparison is then one line.
    epsilons : array-like of shape (n_epsilons,)
        The budgets to evaluate, each > 0 (the cost of *one* fit); ``float("inf")``
        adds the non-private ceiling (its fits are an infinite spend).
    X_train : array-like of shape (n_samples, n_features)
        Training data (the private data).
    y_train : array-like of shape (n_samples,)
        Training target.
    X_test : array-like of shape (n_test_samples, n_features)
        Test data, held out from the training data.
    y_test : array-like of shape (n_test_samples,)
        Test target.
    param_name : str, default="epsilon"
        Parameter set to each ε when ``estimator`` is an estimator (``"clf__epsilon"``
        for a pipeline step). Ignored for a callable.
    n_seeds : int, default=5
        Number of fits (independent noise) per ε.
    scoring : str, callable or None, default=None
        Test score, as for :func:`sklearn.metrics.check_scoring`; ``None``: the
        estimator's ``score`` (accuracy for classifiers, R² for regressors).
    baseline : estimator object or None, default=None
        A non-private estimator (e.g. the scikit-learn counterpart) fitted once on the
        training data and scored on the test data, for reference. Not private: see
        Notes.
    label : str or None, default=None
        Name of the curve in plots; ``None``: the class name of the estimator (of the
        final step of a pipeline).
    params : dict or None, default=None
        Passed to every ``fit`` (and to the baseline's), e.g. ``{"groups": groups}``.
    n_jobs : int or None, default=None
        Number of joblib workers for the fits. The budget is recorded once, in the
        calling process, so process workers need no shared accountant.
    pre_dispatch : int or str, default="2*n_jobs"
        Number of tasks dispatched ahead (joblib's ``pre_dispatch``).
    verbose : int, default=0
        >= 1: the privacy cost per ε before anything is fitted, then what the
        accountant has spent; exactly 1: also a progress bar of the fits on standard
        error (tqdm's when installed, plain lines otherwise). >= 2: one line per fit as
        it ends. >= 3: joblib's progress messages too.
    random_state : None, int or numpy.random.Generator, default=None
        Source of every fit's noise: each fit gets its own seed, overriding the
        estimator's ``random_state``. ``None`` (recommended): fresh secure entropy for
        every fit. An int makes the curve reproducible (tests and research only).
    accountant : BudgetAccountant or None, default=None
        Accountant charged the whole cost. ``None``: the ``accountant`` of the
        estimator's DP steps, else the one made active with ``with accountant:``.

    Returns
    -------
    results : :class:`~sklearn.utils.Bunch`
        ``epsilons`` (ndarray of shape (n_epsilons,)), ``scores`` (ndarray of shape
        (n_epsilons, n_seeds): the test score of every fit), ``mean`` and ``std``
        (ndarrays of shape (n_epsilons,), over the seeds), ``baseline`` (the baseline's
        test score, or None), ``label``, ``score_name`` (e.g. ``"accuracy"``) and
        ``privacy_spent`` (a :class:`~dpsk.accounting.PrivacyEvent`: the cost of all
        the fits, as recorded).

    Raises
    ------
    BudgetExceededError
        Before any data is read, if the fits do not fit the budget together.

    See Also
    --------
    dpsk.utils.plotting.plot_privacy_utility : plot the results.
    cross_val_score : private cross-validated accuracy, when there is no public test set.

    Notes
    -----
    **Privacy.** Every fit spends its own budget: ``n_seeds`` fits at each ε cost the
    composition of all ``n_seeds × n_epsilons`` fits (for pure ε-DP fits, at most the sum
    of their ε), recorded once on the accountant before the first fit and returned as
    ``privacy_spent``; if a fit fails afterwards nothing is refunded. Neighbouring
    datasets are those of the estimator (a row, or a user with ``groups``). The fitted
    models are not returned; their scores on the test data are post-processing of the
    models, covered by the guarantee when the test data is not private (public, or
    data you may look at). The ``baseline`` is fitted without privacy: its score is
    covered by no guarantee. Curves are for choosing ε and models on public or
    benchmark data (like the bundled :func:`dpsk.datasets.load_adult`); on private data
    their cost is real.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import BudgetAccountant
    >>> from dpsk.model_selection import privacy_utility_curve
    >>> from dpsk.utils._testing import ToyDPMeanClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (800, 2)); y = (X[:, 0] > 0).astype(int)
    >>> acc = BudgetAccountant()
    >>> est = ToyDPMeanClassifier(bounds=(-1.0, 1.0), classes=[0, 1])
    >>> curve = privacy_utility_curve(est, [0.1, 1.0], X[:600], y[:600], X[600:], y[600:],
    ...                               n_seeds=3, random_state=0, accountant=acc)
    >>> curve.scores.shape
    (2, 3)
    >>> acc.total()  # 3 fits at 0.1 and 3 at 1.0
    (epsilon=3.3..., delta=0.0)
    """
    epsilons = _check_epsilons(epsilons)
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, numbers.Integral) or n_seeds < 1:
        raise ValueError(f"n_seeds must be an int >= 1, got {n_seeds!r}")
    models = [_estimator_at(estimator, param_name, float(eps)) for eps in epsilons]
    for model in models:
        check_private(model)
    costs = [candidate_cost(model, {}) for model in models]
    settings = SimpleNamespace(accountant=accountant)  # what search_accountant looks up
    charged = list({id(a): a for a in (search_accountant(settings, model) for model in models)}.values())
    if len(charged) > 1:
        raise ValueError("the estimators name different accountants; pass the one to charge as `accountant`")
    charged = charged[0]
    per_epsilon = [cost if n_seeds == 1 else SelfComposedEvent(cost, n_seeds) for cost in costs]
    total = per_epsilon[0] if len(per_epsilon) == 1 else ComposedEvent(tuple(per_epsilon))
    if verbose > 0:
        stages = [
            (f"epsilon={eps:g}: {n_seeds} fit{'s' if n_seeds > 1 else ''}", event)
            for eps, event in zip(epsilons, per_epsilon)
        ]
        print_plan(
            "privacy_utility_curve",
            f"{n_seeds} fit{'s' if n_seeds > 1 else ''} at each of {epsilons.size} budgets, "
            f"totalling {n_seeds * epsilons.size} fits",
            budget_report(stages, total, charged),
        )
    spend_label = SpendLabel(
        type(estimator).__name__, None, f"privacy_utility_curve ({epsilons.size} budgets x {n_seeds} seeds)"
    )
    if charged is not None:
        with spending_as(spend_label):
            charged.check_event(total)

    X_train, y_train = indexable(X_train, y_train)
    X_test, y_test = indexable(X_test, y_test)
    check_consistent_length(X_train, y_train)
    check_consistent_length(X_test, y_test)
    for data in (X_train, X_test):
        check_array(data, accept_sparse=True, dtype=None, ensure_all_finite=True, ensure_2d=False, allow_nd=True)
    fit_params = dict(params or {})
    scorer = check_scoring(models[0], scoring=scoring)
    release = ("dpsk.model_selection.privacy_utility_curve", estimator, epsilons, param_name, n_seeds, scoring)
    rng = release_generator(random_state, context=release, data=(X_train, y_train, X_test, y_test))

    if charged is not None:
        with spending_as(spend_label):
            charged.record(total)
    if verbose > 0:
        print_charged("privacy_utility_curve", charged)
    tasks, lines = [], []
    for i, (eps, model) in enumerate(zip(epsilons, models)):
        for s in range(n_seeds):
            fitted = prepare(model, {}, inner_seed(random_state, rng), charged=charged)
            tasks.append(delayed(_fit_and_test)(fitted, X_train, y_train, X_test, y_test, scorer, fit_params))
            lines.append(f"[epsilon {i + 1}/{epsilons.size}; seed {s + 1}/{n_seeds}] END epsilon={eps:g}")
    scores = run_fits(
        tasks, lines, n_jobs=n_jobs, pre_dispatch=pre_dispatch, verbose=verbose, description="privacy_utility_curve"
    )
    scores = np.asarray(scores, dtype=np.float64).reshape(epsilons.size, n_seeds)

    baseline_score = None
    if baseline is not None:
        reference = clone(baseline).fit(X_train, y_train, **fit_params)
        baseline_score = float(check_scoring(reference, scoring=scoring)(reference, X_test, y_test))
    return Bunch(
        epsilons=epsilons,
        scores=scores,
        mean=scores.mean(axis=1),
        std=scores.std(axis=1, ddof=1) if n_seeds > 1 else np.zeros(epsilons.size),
        baseline=baseline_score,
        label=_label(models[0]) if label is None else str(label),
        score_name=_score_name(models[0], scoring),
        privacy_spent=total,
    )
