# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private hyper-parameter search on Adult: privacy cost and test accuracy of the selected model.

Part 1 (no data, exact): the total ε of a 10-candidate search, by basic composition
(what charging every fit of scikit-learn's ``GridSearchCV(cv=5)`` one by one costs, with
the selection itself not private at all) and by dpsk's designs: 5-fold with random
folds (each unit in 4 training folds), disjoint parts, random stopping. For pure-ε fits
and for (ε, δ) fits (Gaussian objective perturbation), at δ = 1e-5.

Part 2 (Adult, ``dpsk.datasets.load_adult``): at one total budget ε_total, the test
accuracy (Adult test set, 16,281 rows) of

* fixed choices: one fit at ε_total with dpsk's data-independent default C, and with
  scikit-learn's default C = 1 (far too weak a regularisation for private training);
* dpsk's searches, each given ε_total in all (fits, selection and refit split so that the
  recorded total is ε_total);
* the non-private references: scikit-learn's LogisticRegression at its default and
  after scikit-learn's GridSearchCV over the same grid.

The estimator is dpsk's LogisticRegression (objective perturbation, pure ε) when
``dpsk.linear_model`` is available, else the toy nearest-mean classifier. Every figure is
the mean ± standard deviation over ``--repeats`` seeds (all methods see the same seeds).
Accuracies do not depend on the machine; timings are not reported.

Usage::

    python benchmarks/bench_model_selection.py            # ε_total = 1, 3 repeats
    python benchmarks/bench_model_selection.py --quick    # 1 repeat, 8,000 training rows

(``run(epsilon=0.5, repeats=5)`` or ``run(accounting_only=True)`` from Python.)
"""

import warnings

import numpy as np
from _family_common import main

from dpsk.accounting import (
    BudgetAccountant,
    ComposedEvent,
    ExponentialEvent,
    GaussianEvent,
    ParallelEvent,
    RepeatAndSelectEvent,
    SelfComposedEvent,
    get_epsilon,
)
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.mechanisms import Laplace
from dpsk.model_selection import GridSearchCV, RandomizedSearchCV
from dpsk.model_selection._estimators import candidate_cost

DELTA = 1e-5
N_CANDIDATES = 10
FOLDS = 5


def _estimator(kind, epsilon, delta=0.0, data_norm=None):
    if kind == "logistic":
        from dpsk.linear_model import LogisticRegression

        return LogisticRegression(epsilon=epsilon, delta=delta, data_norm=data_norm, classes=[0, 1])
    from dpsk.utils._testing import ToyDPMeanClassifier

    return ToyDPMeanClassifier(epsilon=epsilon, bounds=(0.0, 1.0), classes=[0, 1])


def _search_costs(fit, selection_epsilon):
    """Each 10-candidate design: (dpsk's event, fits made, private selections made).

    The last two give the basic-composition figure: the sum over every release made.
    """
    em = ExponentialEvent(selection_epsilon)
    k, m = FOLDS, N_CANDIDATES
    disjoint = ParallelEvent((*(fit,) * m, em))  # m fits and the selection on disjoint parts
    return {
        f"scikit-learn GridSearchCV(cv={k}) of DP fits (its argmax is not private)": (
            SelfComposedEvent(fit, m * k + 1),
            m * k + 1,
            0,
        ),
        f"dpsk cv={k} (random folds) + refit": (
            ComposedEvent((SelfComposedEvent(fit, m * (k - 1) + 1), em)),
            m * k + 1,
            1,
        ),
        "dpsk disjoint parts + refit": (ComposedEvent((disjoint, fit)), m + 1, 1),
        "dpsk disjoint parts, refit='selected'": (disjoint, m, 1),
        "dpsk random stopping (logarithmic, mean 10), refit='selected'": (
            _random_stopping(fit, selection_epsilon, 0.0),
            None,
            None,
        ),
        "dpsk random stopping (geometric, mean 10), refit='selected'": (
            _random_stopping(fit, selection_epsilon, 1.0),
            None,
            None,
        ),
        "dpsk random stopping (logarithmic, mean 10) + refit": (
            ComposedEvent((_random_stopping(fit, selection_epsilon, 0.0), fit)),
            None,
            None,
        ),
    }


def _random_stopping(fit, selection_epsilon, shape):
    """The best of a random number of trials, each a fit and a noisy score on disjoint units."""
    score = Laplace(epsilon=selection_epsilon, sensitivity=1.0, random_state=0).privacy_event()
    return RepeatAndSelectEvent(ParallelEvent((fit, score)), float(N_CANDIDATES), shape)


def accounting_tables(kind):
    """Part 1: ε of a 10-candidate search, one fit at ε = 1 (selection at 1): one table per kind of fit."""
    fits = {"pure-DP fits": candidate_cost(_estimator(kind, 1.0, data_norm=1.0), {})}
    if kind == "logistic":
        fits["(eps, delta) fits, Gaussian objective perturbation (a bare (eps, delta) event)"] = candidate_cost(
            _estimator(kind, 1.0, delta=DELTA, data_norm=1.0), {}
        )
    sigma = 3.7306316  # a Gaussian-mechanism fit (e.g. noisy gradients) that is (1, 1e-5)-DP
    fits["Gaussian-mechanism fits (sigma = 3.73)"] = GaussianEvent(sigma)
    reporter = BudgetAccountant(delta=1.0, slack=DELTA)  # explicit deltas add; the rest at delta = 1e-5
    tables = []
    for label, fit in fits.items():
        one = reporter.total(spent_budget=[fit])
        rows = []
        for design, (event, n_fits, n_selections) in _search_costs(fit, 1.0).items():
            if n_fits is None:
                basic = "no bound (random number of fits)"
            else:
                basic = f"({n_fits * one.epsilon + n_selections:.4g}, {n_fits * one.delta:.2g})"
            try:
                total = reporter.total(spent_budget=[event])
                ours = f"({total.epsilon:.4g}, {total.delta:.2g})"
            except TypeError:  # random stopping needs fits with a Renyi-DP curve
                ours = "not applicable: needs fits with a Renyi-DP curve"
            rows.append(
                {
                    "design": design,
                    "dpsk (epsilon, delta)": ours,
                    "basic composition of every release (epsilon, delta)": basic,
                }
            )
        title = (
            f"Privacy cost of a {N_CANDIDATES}-candidate search (each fit at epsilon = 1, selection at 1), "
            f"{label}; one fit: ({one.epsilon:.4g}, {one.delta:.2g})"
        )
        tables.append((title, rows))
    return tables


def _budget_split(total, design, m):
    """(fit ε, selection ε, refit) so that the recorded total of a design over ``m`` candidates is ``total``."""
    if design == "disjoint + refit":  # max(f, s) + f
        return total / 2, total / 2, True
    if design == "disjoint, selected":  # max(f, s)
        return total, total, "selected"
    if design == "5-fold + refit":  # (k - 1) m f + s + f, with s = f
        share = total / ((FOLDS - 1) * m + 2)
        return share, share, True
    if design == "random stopping, selected":  # <= 2 max(f, s) for the logarithmic law
        return total / 2, total / 2, "selected"
    raise ValueError(design)


#: Candidates: dpsk's default regularisation rule (None) and a range around it.
GRID = {"C": [None, 1e-3, 3e-3, 1e-2, 3e-2]}
DESIGNS = ("disjoint + refit", "disjoint, selected", "5-fold + refit", "random stopping, selected")


def _dp_search(design, kind, total, data_norm, seed):
    grid = GRID if kind == "logistic" else {"bounds": [(0.0, 1.0), (0.0, 0.5)]}
    fit_eps, sel_eps, refit = _budget_split(total, design, len(next(iter(grid.values()))))
    est = _estimator(kind, fit_eps, data_norm=data_norm)
    if design.startswith("random"):
        return RandomizedSearchCV(est, grid, n_iter=N_CANDIDATES, epsilon=sel_eps, refit=refit, random_state=seed)
    cv = FOLDS if design.startswith("5-fold") else "disjoint"
    return GridSearchCV(est, grid, cv=cv, epsilon=sel_eps, refit=refit, random_state=seed)


def accuracy_table(kind, total, repeats, n_train=None):
    """Part 2: test accuracy at a total budget (on the first ``n_train`` training rows if given)."""
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    from sklearn.model_selection import GridSearchCV as SkGridSearchCV

    from dpsk.datasets import load_adult

    train, test = load_adult(), load_adult(subset="test")
    X, y, X_test, y_test = train.data[:n_train], train.target[:n_train], test.data, test.target
    rows = {}

    def add(name, epsilon, accuracy):
        eps_list, acc_list = rows.setdefault(name, ([], []))
        eps_list.append(epsilon)
        acc_list.append(accuracy)

    for seed in range(repeats):
        est = _estimator(kind, total, data_norm=train.data_norm).set_params(random_state=seed)
        fitted = est.fit(X, y)
        add("dpsk fixed default (one fit)", get_epsilon(fitted.privacy_spent_, 0.0), fitted.score(X_test, y_test))
        if kind == "logistic":  # what a search protects against: a poor fixed choice
            fitted = est.set_params(C=1.0).fit(X, y)
            add(
                "dpsk fixed C=1 (scikit-learn's default C)",
                get_epsilon(fitted.privacy_spent_, 0.0),
                fitted.score(X_test, y_test),
            )
        for design in DESIGNS:
            acc = BudgetAccountant(epsilon=total * (1 + 1e-9), delta=0.0)
            search = _dp_search(design, kind, total, train.data_norm, seed).set_params(accountant=acc).fit(X, y)
            add(f"dpsk search: {design}", acc.total().epsilon, search.score(X_test, y_test))
    if kind == "logistic":
        grid = {"C": [c for c in GRID["C"] if c is not None] + [1.0]}
        add(
            "non-private: scikit-learn default (C=1)",
            np.inf,
            SkLogisticRegression(max_iter=1000).fit(X, y).score(X_test, y_test),
        )
        search = SkGridSearchCV(SkLogisticRegression(max_iter=1000), grid, cv=FOLDS).fit(X, y)
        add(f"non-private: scikit-learn GridSearchCV over C, cv={FOLDS}", np.inf, search.score(X_test, y_test))
    table = [
        {
            "method": name,
            "recorded total epsilon": max(eps),
            "test accuracy": np.mean(accs),
            "std": np.std(accs) if len(accs) > 1 else "",
        }
        for name, (eps, accs) in rows.items()
    ]
    rows_used = f", first {len(y)} training rows" if n_train is not None else ""
    return f"Adult test accuracy at a total budget epsilon = {total:g} ({kind}, {repeats} seeds{rows_used})", table


def run(quick=False, epsilon=1.0, repeats=None, kind=None, accounting_only=False):
    """Part 1's tables and Part 2's (``quick``: 1 seed instead of 3, the first 8,000 training rows)."""
    if kind is None:
        try:
            import dpsk.linear_model  # noqa: F401

            kind = "logistic"
        except ImportError:
            kind = "toy"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        tables = accounting_tables(kind)
        if not accounting_only:
            tables.append(accuracy_table(kind, epsilon, repeats or (1 if quick else 3), 8000 if quick else None))
    return tables


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
