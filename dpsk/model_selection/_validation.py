# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private cross-validation: noisy per-fold accuracy, with the whole cost charged up front."""

import numpy as np
from joblib import delayed
from sklearn.base import is_classifier

from dpsk.accounting import ComposedEvent, SelfComposedEvent
from dpsk.accounting._context import SpendLabel, spending_as
from dpsk.mechanisms import Laplace
from dpsk.model_selection._estimators import candidate_cost, check_private, inner_seed, prepare, search_accountant
from dpsk.model_selection._search import budget_report, print_charged, print_plan
from dpsk.model_selection._splits import (
    check_search_data,
    check_training_parts,
    fit_and_score,
    fit_params_with_groups,
    privacy_units,
    random_parts,
    run_fits,
    shared_classes,
)
from dpsk.utils._random import rekey_generator, release_generator
from dpsk.utils.validation import check_privacy_params

__all__ = ["cross_val_score"]


class _Settings:
    """The ``accountant`` lookup of :func:`search_accountant` for a function call."""

    def __init__(self, accountant):
        self.accountant = accountant


def cross_val_score(
    estimator,
    X,
    y=None,
    *,
    groups=None,
    scoring="accuracy",
    cv=5,
    epsilon=1.0,
    n_jobs=None,
    verbose=0,
    params=None,
    pre_dispatch="2*n_jobs",
    random_state=None,
    accountant=None,
    return_privacy_spent=False,
):
    """Private k-fold cross-validated accuracy of a DP classifier.

    Units (rows, or users with ``groups=``) are assigned to k random folds; the estimator
    is fitted on k - 1 folds and scored on the remaining one, k times; each fold's number
    of correct predictions and number of units are released with Laplace noise, and
    their ratio is the fold's accuracy. The whole cost is checked against the budget
    before the data is read and recorded once.

    Parameters
    ----------
    estimator : estimator object
        A dpsk classifier, or a pipeline whose learning steps are dpsk estimators. A
        scikit-learn meta-estimator around a DP step is accepted only if its number of
        fits of the step is known from its parameters (see
        :class:`GridSearchCV`); every one of them is charged.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,) or None, default=None
        The privacy unit of each row (a user id); see :class:`GridSearchCV`.
    scoring : {"accuracy"} or None, default="accuracy"
        Only accuracy (a count of sensitivity 1) is supported.
    cv : int, default=5
        Number of random folds, >= 2.
    epsilon : float, default=1.0
        Privacy budget ε > 0 of the released scores (on top of the fits' costs).
    n_jobs : int or None, default=None
        joblib workers for the fits.
    verbose : int, default=0
        Progress messages, printed by the calling process. >= 1: the folds and the
        privacy cost, before the budget is checked and anything is fitted, then what
        the accountant has spent; exactly 1: also a progress bar of the fits on
        standard error (tqdm's when installed, plain lines otherwise). >= 2: one line
        per fit as it ends (``[CV 1/5] END``,
        without score or time: both depend on the private data). >= 3: joblib's progress
        messages too.
    params : dict or None, default=None
        Passed to the estimator's ``fit`` (indexed by row when they have one entry per row).
    pre_dispatch : int or str, default="2*n_jobs"
    random_state : None, int or numpy.random.Generator, default=None
        Source of the folds, the score noise and every fit's noise (each fit gets its own
        seed). ``None``: fresh secure entropy (recommended); an int for tests only.
    accountant : BudgetAccountant or None, default=None
        Charged the whole cost; ``None``: the estimator's accountant, else the one made
        active by ``with accountant:``.
    return_privacy_spent : bool, default=False
        Also return the privacy cost (a :class:`~dpsk.accounting.PrivacyEvent`).

    Returns
    -------
    scores : ndarray of shape (cv,)
        Noisy accuracy of each fold, clipped to [0, 1].
    privacy_spent : PrivacyEvent
        Only with ``return_privacy_spent=True``.

    Raises
    ------
    BudgetExceededError
        Before any data is read, if the cost does not fit the budget.
    TypeError
        Before any data is read, if a meta-estimator around a DP step fits it a number
        of times its parameters do not tell, or learns from the data outside dpsk.

    Notes
    -----
    **Privacy.** Neighbouring datasets differ in one unit. Folds are drawn independently
    per unit, so a unit is in the training set of k - 1 fits and in the validation fold
    of one: the fits cost (k - 1) times one fit (not k). The per-fold pairs (correct
    count, number of units) change in one fold only, by at most 1 each, so the 2k-vector
    has L1 sensitivity 2 and one Laplace release with ε covers all folds (lattice noise,
    floating-point safe). Total: the composition of k - 1 fits and that release.
    Released: the k noisy accuracies (post-processing of the noisy counts).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.model_selection import cross_val_score
    >>> from dpsk.utils._testing import ToyDPMeanClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (2000, 2)); y = (X[:, 0] > 0).astype(int)
    >>> est = ToyDPMeanClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    >>> scores, cost = cross_val_score(est, X, y, cv=5, epsilon=1.0, random_state=0,
    ...                                return_privacy_spent=True)
    >>> scores.shape
    (5,)
    """
    check_privacy_params(epsilon)
    if scoring not in ("accuracy", None):
        raise ValueError(f"scoring must be 'accuracy' (the only score with a known sensitivity), got {scoring!r}")
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an int >= 2 (random folds per unit), got {cv!r}")
    if not is_classifier(estimator):
        raise ValueError(f"scoring='accuracy' needs a classifier; got {type(estimator).__name__}")
    check_private(estimator)
    release = ("dpsk.model_selection.cross_val_score", estimator, scoring, cv, epsilon, params)
    rng = release_generator(random_state, context=release)  # re-keyed to the data below
    noise = Laplace(epsilon=epsilon, sensitivity=2.0, random_state=rng)
    scores_event = noise.privacy_event((2 * cv,))
    fits = SelfComposedEvent(candidate_cost(estimator, {}), cv - 1)
    total = ComposedEvent((fits, scores_event))
    charged = search_accountant(_Settings(accountant), estimator)
    if verbose > 0:
        stages = [
            (f"fits ({cv} random folds: each unit in {cv - 1} training folds)", fits),
            ("noisy fold scores", scores_event),
        ]
        print_plan("cross_val_score", f"Fitting {cv} folds, totalling {cv} fits", budget_report(stages, total, charged))
    label = SpendLabel(type(estimator).__name__, None, f"cross_val_score ({cv} folds)")
    if charged is not None:
        with spending_as(label):
            charged.check_event(total)
    X, y, groups = check_search_data(X, y, groups, "cross_val_score", estimator)
    rekey_generator(rng, random_state, context=release, data=(X, y, groups))
    fit_params = fit_params_with_groups(estimator, groups, params or {})
    units, n_units = privacy_units(len(y), groups)
    folds = random_parts(rng, cv, n_units, units)
    splits = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(cv)]
    check_training_parts(splits, n_units, estimator, groups is not None)
    if charged is not None:
        with spending_as(label):
            charged.record(total)
    if verbose > 0:
        print_charged("cross_val_score", charged)

    classes = shared_classes(estimator, y, "cross_val_score")
    seeds = [inner_seed(random_state, rng) for _ in range(cv)]
    results = run_fits(
        (
            delayed(fit_and_score)(
                prepare(estimator, {}, seed, classes, charged), X, y, fit_params, train, validation, units, False
            )
            for seed, (train, validation) in zip(seeds, splits)
        ),
        [f"[CV {f + 1}/{cv}] END" for f in range(cv)],
        n_jobs=n_jobs,
        pre_dispatch=pre_dispatch,
        verbose=verbose,
        description="cross_val_score",
    )
    # Units per fold: the fold of each unit is that of its first row.
    unit_folds = folds if units is None else folds[np.unique(units, return_index=True)[1]]
    fold_units = np.bincount(unit_folds, minlength=cv)
    counts = np.concatenate([[score for score, _ in results], fold_units.astype(np.float64)])
    noisy = noise.randomise(counts)
    scores = np.clip(noisy[:cv] / np.maximum(noisy[cv:], 1.0), 0.0, 1.0)
    return (scores, total) if return_privacy_spent else scores
