"""
=======================================================
Private feature selection and private early stopping
=======================================================

Two tools for choosing *what* to fit on private data without paying for every look:

* :class:`dpsk.feature_selection.SelectKBest` picks the k most informative features
  with the exponential mechanism, inside a :func:`dpsk.pipeline.make_pipeline`, under
  one budget with the classifier after it;
* :class:`dpsk.mechanisms.AboveThreshold` (the sparse vector technique) watches a
  stream of candidate models and stops at the first whose noisy validation accuracy
  reaches a target. However many candidates it looks at, it costs one ε: only the
  answer "above" is paid for.
"""

# %%
# Feature selection in a pipeline
# -------------------------------
#
# breast_cancer, scaled into [-0.5, 0.5] with the ranges published in its description
# (public metadata, as in the benchmarks). The pipeline spends ε = 0.2 to select 5 of
# the 30 features and ε = 0.8 on the classifier: ε = 1 in total on one accountant.

import os
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from dpsk import BudgetAccountant
from dpsk.feature_selection import SelectKBest
from dpsk.linear_model import LogisticRegression
from dpsk.mechanisms import AboveThreshold
from dpsk.pipeline import make_pipeline

data = load_breast_cancer()
section = data.DESCR.split("Summary Statistics")[1]
published = np.array(re.findall(r"^\s*[a-z][^:\n]*\):\s+([\d.]+)\s+([\d.]+)\s*$", section, re.M), dtype=float)
X = np.clip((data.data - published[:, 0]) / (published[:, 1] - published[:, 0]), 0, 1) - 0.5
X_train, X_test, y_train, y_test = train_test_split(
    X, data.target, test_size=0.25, stratify=data.target, random_state=0
)


def classifier(epsilon, n_features, seed=0):
    return LogisticRegression(
        epsilon=epsilon, data_norm=np.sqrt(n_features) / 2, bounds=(-0.5, 0.5), classes=[0, 1], random_state=seed
    )


accountant = BudgetAccountant(epsilon=1.0)
pipe = make_pipeline(SelectKBest(k=5, epsilon=0.2, bounds=(-0.5, 0.5), random_state=0), classifier(0.8, 5))
with accountant:
    pipe.fit(X_train, y_train)
selected = pipe[0].get_support(indices=True)
print("selected features:", [str(data.feature_names[j]) for j in selected])
print(f"pipeline test accuracy: {pipe.score(X_test, y_test):.3f}")
print(f"{accountant!r}: {len(accountant.spent_budget)} spends, epsilon spent {accountant.total().epsilon:.3g}")

# %%
# Private early stopping with AboveThreshold
# ------------------------------------------
#
# Candidates of growing size (the top 2, 4, ..., 12 features, each a private pipeline
# trained on the training rows) are checked one by one against a private validation
# split. The query is the number of validation rows a candidate classifies correctly:
# adding or removing one validation row changes it by at most 1, and in the same
# direction for every candidate, so the queries are *monotonic* (half the noise). The
# run stops at the first candidate above 92% of the validation rows (a public size),
# and answers "below" for the others for free: the whole search of the validation
# data costs the ε = 1 of one AboveThreshold run, charged when it starts.

X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.3, stratify=y_train, random_state=1)
target = 0.92 * len(y_val)
monitor = AboveThreshold(epsilon=1.0, threshold=target, monotonic=True, random_state=0)

budget = BudgetAccountant(epsilon=10.0)
with budget:
    run = monitor.start()  # charged now: epsilon = 1 for the whole run
    sizes, accuracies, stopped_at = [], [], None
    for k in range(2, 14, 2):
        candidate = make_pipeline(
            SelectKBest(k=k, epsilon=0.2, bounds=(-0.5, 0.5), random_state=k), classifier(0.8, k, k)
        )
        candidate.fit(X_fit, y_fit)
        sizes.append(k)
        accuracies.append(candidate.score(X_test, y_test))
        correct = int((candidate.predict(X_val) == y_val).sum())  # exact: only AboveThreshold sees it
        if run.query(correct):
            stopped_at = k
            break
print(f"AboveThreshold stopped at k = {stopped_at} after {len(run.answers_)} candidates")
print(f"early stopping: {len(budget.spent_budget)} spends, epsilon spent {budget.total().epsilon:.3g} of 10")

# %%
# The candidates' test accuracy, and where the private monitor stopped.

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(sizes, accuracies, "o-", label="candidate (test accuracy)")
if stopped_at is not None:
    ax.axvline(stopped_at, color="C1", linestyle="--", label="AboveThreshold stopped")
ax.set_xlabel("features selected (k)")
ax.set_ylabel("test accuracy")
ax.set_ylim(0.5, 1.0)
ax.legend(loc="lower right")
fig.tight_layout()
output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "feature_selection_sparse_vector.png", dpi=120)
