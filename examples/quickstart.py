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
        # Boosted trees from noisy gradient histograms; rounds and learning rate follow ε.
        # δ = 1e-6 (discrete Gaussian noise over the rounds); the others here are pure ε.
        "HistGradientBoostingClassifier": (
            lambda eps: HistGradientBoostingClassifier(epsilon=eps, delta=1e-6, bounds=(0.0, 1.0), **common),
            lambda: sk_ensemble.HistGradientBoostingClassifier(random_state=0),
        ),
    }


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
    accountant = BudgetAccountant(epsilon=40.0, delta=1e-5)
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
    print(f"\nDone in {time.perf_counter() - start:.1f} s.")


if __name__ == "__main__":
    main()
