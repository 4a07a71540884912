"""
=============================================
Private hyper-parameter search and its budget
=============================================

Tuning hyper-parameters on private data is itself a release: every candidate fitted,
the choice of the best one and the final refit all depend on the data.
:class:`dpsk.model_selection.GridSearchCV` charges all of it, checks the total against
the budget *before* reading the data, selects the best candidate privately (never by
the raw argmax of the validation scores), and reports what each stage cost in
``budget_report_``. This example tunes a private logistic regression on the Adult data
with three search designs and compares what they cost.
"""

# %%
# The estimator and the grid
# --------------------------
#
# Two hyper-parameters matter most for private logistic regression: ``data_norm``, the
# bound rows are clipped to (small: less noise but more clipping), and the
# regularisation ``C`` (``None`` is a data-independent rule made for DP). Every fit
# costs ε = 0.5.

import os
from pathlib import Path

import matplotlib.pyplot as plt

from dpsk import BudgetAccountant
from dpsk.datasets import load_adult
from dpsk.linear_model import LogisticRegression
from dpsk.model_selection import GridSearchCV, RandomizedSearchCV

train, test = load_adult(subset="train"), load_adult(subset="test")
estimator = LogisticRegression(epsilon=0.5, classes=[0, 1])
grid = {"data_norm": [1.0, 2.0, train.data_norm], "C": [None, 0.01]}
accountant = BudgetAccountant(epsilon=12.0)

# %%
# Disjoint parts: the cheapest design
# -----------------------------------
#
# With ``cv="disjoint"`` each of the 6 candidates is fitted on its own random part of
# the data and all are scored on one more part. The parts are disjoint, so the fits and
# the selection compose in parallel: the search costs one fit plus the refit, whatever
# the number of candidates. ``verbose=2`` prints the plan and its cost before anything
# is fitted, then one line per fit (without scores: they depend on the private data).

disjoint = GridSearchCV(estimator, grid, cv="disjoint", epsilon=0.5, accountant=accountant, verbose=2)
disjoint.fit(train.data, train.target)
print("selected:", disjoint.best_params_)

# %%
# ``budget_report_`` holds one row per stage and the total; ``pandas.DataFrame``
# shows it as a table.


def show(report):
    for stage, epsilon, delta in zip(report["stage"], report["epsilon"], report["delta"]):
        print(f"{stage:55s} epsilon={epsilon:<8.4g} delta={delta:.3g}")


show(disjoint.budget_report_)

# %%
# k-fold cross-validation and random stopping
# -------------------------------------------
#
# With ``cv=3`` every candidate is fitted on 3 folds; each row is in 2 training folds,
# so the fits cost 2 × 6 fits. The validation is better (every candidate is fitted on
# two thirds of the data), but the search costs ε = 7 instead of 1. ``verbose=1``
# prints the plan and the cost of each stage (the same rows as ``budget_report_``).
#
# :class:`~dpsk.model_selection.RandomizedSearchCV` with random stopping (Papernot &
# Steinke 2022) runs a *random* number of trials (10 on average), each a random
# candidate fitted on 4/5 of the data with a noisy score, and keeps the best: it costs
# a small multiple of one trial, whatever the number of trials.

kfold = GridSearchCV(estimator, grid, cv=3, epsilon=0.5, accountant=accountant, verbose=1)
kfold.fit(train.data, train.target)

stopping = RandomizedSearchCV(estimator, grid, n_iter=10, epsilon=0.5, accountant=accountant, verbose=1)
stopping.fit(train.data, train.target)
print()
print(accountant.summary())

# %%
# Cost and accuracy of the three designs
# --------------------------------------
#
# Each bar stacks the ε of a design's stages; the black tick is the total charged,
# which can be less than the sum: in the disjoint design the fits and the selection
# read disjoint parts of the data and compose in parallel. Next to each bar, the test
# accuracy of the model the search selected and refitted (the test set is held out:
# scoring the released model on it costs nothing).

searches = {"disjoint parts": disjoint, "3-fold CV": kfold, "random stopping": stopping}
fig, ax = plt.subplots(figsize=(8, 3.2))
for row, search in enumerate(searches.values()):
    report = search.budget_report_
    left = 0.0
    for stage, epsilon in zip(report["stage"][:-1], report["epsilon"][:-1]):
        color = "C2" if stage.startswith("refit") else "C1" if stage.startswith("selection") else "C0"
        ax.barh(row, epsilon, left=left, color=color, edgecolor="white")
        left += epsilon
    total = report["epsilon"][-1]
    ax.plot([total, total], [row - 0.45, row + 0.45], color="black", linewidth=2)
    accuracy = search.score(test.data, test.target)
    ax.text(left + 0.15, row, f"total ε = {total:.2g}, test accuracy {accuracy:.3f}", va="center")
ax.set_yticks(range(len(searches)), list(searches))
ax.invert_yaxis()
ax.set_xlim(0, accountant.epsilon)
ax.set_xlabel("privacy budget ε charged by the search")
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("C0", "C1", "C2")]
ax.legend(
    handles,
    ["candidate fits / trials", "selection", "refit"],
    loc="upper center",
    bbox_to_anchor=(0.5, -0.3),
    ncol=3,
    frameon=False,
)
ax.set_title("Three private searches over the same grid")
fig.tight_layout()

output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "grid_search_budget.png", dpi=120)
plt.show()
