"""
==========================================
One privacy budget for a whole Pipeline
==========================================

A model is rarely one estimator: features are scaled, then a classifier is fitted.
Each step that learns from the data reads it, so each must be private and each
spends part of the budget. This example builds a pipeline of a DP scaler and a DP
classifier with :func:`dpsk.pipeline.make_pipeline` (scikit-learn's
:func:`~sklearn.pipeline.make_pipeline`, with one change), fits it under one
:class:`~dpsk.BudgetAccountant`, shows what each step spent and what is left, and
shows why the change matters: a pipeline the budget cannot afford is refused before
any step reads the data, where scikit-learn's pipeline spends its first steps for
nothing.
"""

# %%
# The data and the budget
# -----------------------
#
# The Adult census data, encoded with its public schema: five numeric columns scaled
# into [0, 1] with documented ranges, then one-hot columns. The accountant holds a
# budget of ε = 1.5; the model gets ε = 1, split between its steps: 0.2 to learn the
# scaling of the numeric columns, 0.8 to the classifier.

import os
from pathlib import Path

import matplotlib.pyplot as plt
from sklearn import pipeline as sklearn_pipeline
from sklearn.base import clone
from sklearn.compose import ColumnTransformer

from dpsk import BudgetAccountant, BudgetExceededError
from dpsk.accounting import check_budget
from dpsk.datasets import ADULT_SCHEMA, load_adult
from dpsk.linear_model import LogisticRegression
from dpsk.pipeline import make_pipeline
from dpsk.preprocessing import StandardScaler

train, test = load_adult(subset="train"), load_adult(subset="test")
numeric = list(range(len(ADULT_SCHEMA["numeric"])))  # the first five columns
accountant = BudgetAccountant(epsilon=1.5)

# %%
# The pipeline
# ------------
#
# Every DP step needs public sensitivity assumptions. The scaler clips the numeric
# columns to their public bounds [0, 1] (it knows them from the schema); the classifier
# scales down any row whose L2 norm exceeds ``data_norm``. After standardisation a
# value is a few units at most for typical rows, so ``data_norm=5`` is a public choice
# that clips few rows. The one-hot columns pass through unchanged: a stateless step
# learns nothing and costs nothing.
#
# Fitting inside ``with accountant:`` makes it the accountant of every step, without
# passing it to each one. ``dpsk.pipeline.make_pipeline`` is scikit-learn's
# ``make_pipeline`` (the result is a scikit-learn ``Pipeline``), except that every fit
# first checks the cost of all its DP steps together, before any of them reads the data.

scaler = ColumnTransformer(
    [("numeric", StandardScaler(epsilon=0.2, bounds=(0.0, 1.0)), numeric)],
    remainder="passthrough",
)
classifier = LogisticRegression(epsilon=0.8, data_norm=5.0, classes=[0, 1])
pipe = make_pipeline(scaler, classifier)
with accountant:
    pipe.fit(train.data, train.target)
print(f"test accuracy: {pipe.score(test.data, test.target):.3f}")

# %%
# What each step spent
# --------------------
#
# Each fitted DP step keeps its cost as ``privacy_spent_`` (an immutable privacy
# event), and the accountant holds the same spends in its ledger. The logistic
# regression's cost is itself made of two releases: 99% of its ε for the perturbed
# objective, 1% for a little output noise that makes the guarantee cover the
# approximate solution the solver returns.

fitted_scaler = pipe.named_steps["columntransformer"].named_transformers_["numeric"]
fitted_classifier = pipe.named_steps["logisticregression"]
for name, step in [("scaler", fitted_scaler), ("classifier", fitted_classifier)]:
    epsilon = accountant.total(spent_budget=[step.privacy_spent_]).epsilon
    parts = " + ".join(f"{event.epsilon:.3f}" for event in step.privacy_spent_.flatten())
    print(f"{name:10s} epsilon = {epsilon:.3f}  (releases: {parts})")
print()
print(accountant.summary())

# %%
# The whole pipeline is checked before the data is read
# ------------------------------------------------------
#
# Half an ε is left, and fitting the pipeline again would need 1. Before it fits
# anything, the pipeline finds the cost of each DP step from its hyper-parameters (no
# data is read) and checks their sum on the accountant; :func:`~dpsk.accounting.check_budget`
# runs the same check on any estimator and reports the costs it found. The refit is
# refused before the scaler reads a row, and nothing is spent.

print(
    "costs found without data:",
    {
        name: round(accountant.total(spent_budget=[cost]).epsilon, 3)
        for name, cost in check_budget(pipe, BudgetAccountant()).costs.items()
    },
)


def fit_again(pipeline):
    """Fit ``pipeline`` under the accountant: the refusal, and the spends recorded meanwhile."""
    spends_before = len(accountant)
    try:
        with accountant:
            pipeline.fit(train.data, train.target)
    except BudgetExceededError as exc:
        return str(exc), len(accountant) - spends_before
    return "not refused", len(accountant) - spends_before


refusal, spends = fit_again(pipe)
print("refused:", refusal.split(" spend on it")[0])
print(f"spends recorded by the refused fit: {spends}")

# %%
# scikit-learn's pipeline, for comparison
# ---------------------------------------
#
# scikit-learn's ``Pipeline`` fits step by step, and each DP step checks only its own
# cost when its turn comes: the scaler, first in line, fits and spends its 0.2; the
# classifier's check then fails before it reads a single row. The scaler's 0.2 is
# spent on a model that is never finished. (dpsk's model-selection tools, such as
# :func:`~dpsk.model_selection.cross_val_score` and
# :class:`~dpsk.model_selection.GridSearchCV`, also add up the costs of all steps and
# check them before anything is fitted.)

plain = sklearn_pipeline.make_pipeline(clone(scaler), clone(classifier))  # the same steps, unfitted
refusal, spends = fit_again(plain)
print("scikit-learn's pipeline refused:", refusal.split(". ")[0])
print(f"spends recorded by scikit-learn's pipeline before the refusal: {spends}")
print(accountant.summary())

# %%
# A picture of the budget
# -----------------------

# The ledger, in order: the first fit's two steps, then the scaler of scikit-learn's
# refused pipeline (dpsk's refused pipeline spent nothing).
ledger = [accountant.total(spent_budget=[event]).epsilon for event in accountant.spent_budget]
labels = ["scaler", "classifier", "scaler (sklearn)", "remaining"]
colors = ["C0", "C1", "C0", "0.85"]
fig, ax = plt.subplots(figsize=(7, 1.6))
left = 0.0
for label, color, width in zip(labels, colors, [*ledger, accountant.remaining().epsilon]):
    ax.barh(0, width, left=left, height=0.6, color=color, edgecolor="white")
    ax.text(left + width / 2, 0, f"{label}\nε = {width:.2f}", ha="center", va="center", fontsize=9)
    left += width
ax.set_xlim(0, accountant.epsilon)
ax.set_yticks([])
ax.set_xlabel("privacy budget ε")
ax.set_title("The accountant's ledger: one spend per DP step")
fig.tight_layout()

output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "pipeline_budget.png", dpi=120)
plt.show()
