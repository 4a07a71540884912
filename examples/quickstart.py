"""
==========
Quickstart
==========

Differentially private classifiers on the Adult census data, in one script.

Run ``python examples/quickstart.py`` after ``pip install .``. It trains private models
on the bundled Adult data (income above $50K, 32,561 training rows) at several privacy
budgets ε, prints their test accuracy next to the non-private scikit-learn model and
the majority-class rate, and shows the budget that all the fits spent together, as one
``BudgetAccountant`` recorded it. Needs numpy, scipy, scikit-learn and dpsk only; runs in
well under a minute.

To compare another model, add one line to ``models()``.
"""

import time

import numpy as np
from sklearn import ensemble as sk_ensemble
from sklearn import linear_model as sk_linear_model
from sklearn import naive_bayes as sk_naive_bayes

import dpsk
from dpsk import BudgetAccountant, BudgetExceededError
from dpsk.datasets import ADULT_SCHEMA, load_adult
from dpsk.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from dpsk.linear_model import LogisticRegression
from dpsk.naive_bayes import BernoulliNB, MultinomialNB

#: The privacy budgets to try, from very private to mildly private.
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0)

#: The class labels are public knowledge (the task's definition), not read from the data.
CLASSES = [0, 1]


def models(adult, accountant):
    """name -> (DP model for a given epsilon, its non-private scikit-learn counterpart).

    Every DP model gets its sensitivity assumptions from the public schema of the data,
    never from the rows, and records its spend on ``accountant``.
    """
    # Each row holds 5 numeric values in [0, 1] and 8 one-hot blocks: its L2 norm is at
    # most sqrt(13) (adult.data_norm), its L1 norm (its total count) at most 13, and
    # every feature lies in [0, 1] (the forest's bounds).
    l1_norm = len(ADULT_SCHEMA["numeric"]) + len(ADULT_SCHEMA["categorical"])
    common = {"classes": CLASSES, "accountant": accountant}
    return {
        "LogisticRegression": (
            lambda eps: LogisticRegression(epsilon=eps, data_norm=adult.data_norm, **common),
            lambda: sk_linear_model.LogisticRegression(solver="liblinear"),
        ),
        "MultinomialNB": (
            lambda eps: MultinomialNB(epsilon=eps, data_norm=l1_norm, **common),
            lambda: sk_naive_bayes.MultinomialNB(),
        ),
        "BernoulliNB": (
            lambda eps: BernoulliNB(epsilon=eps, binarize=0.5, **common),
            lambda: sk_naive_bayes.BernoulliNB(binarize=0.5),
        ),
        "RandomForestClassifier": (
            lambda eps: RandomForestClassifier(epsilon=eps, bounds=(0.0, 1.0), **common),
            lambda: sk_ensemble.RandomForestClassifier(random_state=0),
        ),
    }


def category_codes(adult):
    """The numeric columns, then one code per categorical column (its one-hot block's
    index; an all-zero block, an unlisted value, gets one more code)."""
    n_numeric = len(ADULT_SCHEMA["numeric"])
    columns, start = [adult.data[:, :n_numeric]], n_numeric
    for categories in ADULT_SCHEMA["categorical"].values():
        block = adult.data[:, start : start + len(categories)]
        columns.append(np.where(block.any(axis=1), block.argmax(axis=1), len(categories))[:, None])
        start += len(categories)
    return np.hstack(columns)


def boosting(train, test):
    """Private gradient-boosted trees (δ = 1e-6) at ε = 1, on the numeric columns and the
    category codes; rounds and learning rate follow ε (``"auto"``)."""
    X, X_test = category_codes(train), category_codes(test)
    categorical = list(range(len(ADULT_SCHEMA["numeric"]), X.shape[1]))
    accountant = BudgetAccountant(epsilon=1.0, delta=1e-6)
    model = HistGradientBoostingClassifier(
        epsilon=1.0,
        delta=1e-6,
        bounds=(0.0, 1.0),
        categorical_features=categorical,
        classes=CLASSES,
        accountant=accountant,
        random_state=0,
    ).fit(X, train.target)
    public = sk_ensemble.HistGradientBoostingClassifier(categorical_features=categorical, random_state=0)
    baseline = public.fit(X, train.target).score(X_test, test.target)
    print()
    print("Gradient boosting on the category codes (eps=1, delta=1e-6, one spend):")
    print(
        f"  {model.n_iter_} rounds, test accuracy {model.score(X_test, test.target):.3f} "
        f"(non-private scikit-learn: {baseline:.3f})"
    )


def main():
    start = time.perf_counter()
    train, test = load_adult(subset="train"), load_adult(subset="test")
    majority = max(test.target.mean(), 1.0 - test.target.mean())
    print(f"dpsk {dpsk.__version__} quickstart: differentially private classifiers on Adult")
    print(
        f"{train.data.shape[0]:,} training rows, {test.data.shape[0]:,} test rows, "
        f"{train.data.shape[1]} features (encoded with the public schema only)"
    )
    print(f"task: income > $50K; always predicting the majority class scores {majority:.3f}")

    # One accountant for everything: every fit checks its cost against the budget before
    # it reads the data, then records it.
    accountant = BudgetAccountant(epsilon=30.0)
    rows = []
    for name, (private, public) in models(train, accountant).items():
        scores = [private(eps).fit(train.data, train.target).score(test.data, test.target) for eps in EPSILONS]
        baseline = public().fit(train.data, train.target).score(test.data, test.target)
        rows.append((name, scores, baseline))

    print()
    print("Test accuracy (one private fit per cell: the noise differs from run to run)")
    headers = ["model", *(f"eps={eps:g}" for eps in EPSILONS), "non-private"]
    width = max(len(name) for name, _, _ in rows)
    print("  ".join([headers[0].ljust(width), *(h.rjust(8) for h in headers[1:])]))
    for name, scores, baseline in rows:
        print("  ".join([name.ljust(width), *(f"{s:8.3f}" for s in scores), f"{baseline:11.3f}"]))

    print()
    print(f"Privacy budget: one BudgetAccountant shared by all {len(rows) * len(EPSILONS)} fits")
    print(accountant.summary())
    try:
        LogisticRegression(epsilon=10.0, data_norm=train.data_norm, classes=CLASSES, accountant=accountant).fit(
            train.data, train.target
        )
    except BudgetExceededError:
        print("One more fit at eps=10 does not fit the budget: refused before reading the data.")
    print(
        "Each cell is a separate model trained on the same rows, so their budgets add up.\n"
        "Publish one model and its epsilon is the guarantee of each person in the data."
    )
    boosting(train, test)
    print(f"\nDone in {time.perf_counter() - start:.1f} s.")


if __name__ == "__main__":
    main()
