"""
======================================================
Private gradient boosting against ε on the Adult data
======================================================

Test accuracy of :class:`dpsk.ensemble.HistGradientBoostingClassifier` at budgets from
ε = 0.1 to ε = 5 (δ = 1e-6), next to dpsk's
:class:`~dpsk.linear_model.LogisticRegression` and
:class:`~dpsk.ensemble.RandomForestClassifier`, and InterpretML's DP Explainable
Boosting Machine (defaults, at ε = 1) when ``interpret-core`` is installed. One fit per
point on the whole training data: the noise differs from run to run, the benchmark
``benchmarks/bench_boosting.py`` averages 10 seeds.
"""

# %%
# The data and what is public
# ---------------------------
#
# The boosting reads Adult's raw columns: the five numeric ones with their documented
# ranges as ``bounds`` and the eight categorical ones as codes of their published
# category lists (the benchmark's ``adult_columns``). Logistic regression and the
# forest read :func:`dpsk.datasets.load_adult`'s one-hot encoding. The rounds and the
# learning rate of the boosting are ``"auto"``: a public rule of ε and a noisy row count.

import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dpsk import BudgetAccountant
from dpsk.datasets import load_adult
from dpsk.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from dpsk.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_boosting import adult_columns, dpebm_model  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
DELTA = 1e-6
X, y, bounds, categorical = adult_columns("train")
X_test, y_test, _, _ = adult_columns("test")
onehot, onehot_test = load_adult(), load_adult(subset="test")
accountant = BudgetAccountant()

# %%
# One fit per model and budget
# ----------------------------

models = {
    "HistGradientBoosting": lambda e: HistGradientBoostingClassifier(
        epsilon=e, delta=DELTA, bounds=bounds, categorical_features=categorical, classes=[0, 1]
    ),
    "LogisticRegression": lambda e: LogisticRegression(
        epsilon=e, delta=DELTA, data_norm=float(onehot.data_norm), classes=[0, 1]
    ),
    "RandomForest": lambda e: RandomForestClassifier(epsilon=e, bounds=(0.0, 1.0), classes=[0, 1]),
}
scores = {}
for name, make in models.items():
    raw = name == "HistGradientBoosting"
    train, test = (
        ((X, y), (X_test, y_test)) if raw else ((onehot.data, onehot.target), (onehot_test.data, onehot_test.target))
    )
    scores[name] = [make(e).set_params(accountant=accountant).fit(*train).score(*test) for e in EPSILONS]
    print(name, " ".join(f"{s:.3f}" for s in scores[name]))
ebm = dpebm_model(1.0, bounds, categorical, None)
ebm_score = None if ebm is None else float(np.mean(ebm.fit(X, y).predict(X_test) == y_test))
print("DP-EBM (defaults, eps=1):", "not installed" if ebm_score is None else f"{ebm_score:.3f}")
print(f"{len(accountant.spent_budget)} spends")

# %%
# The plot
# --------

fig, ax = plt.subplots(figsize=(6, 4))
for name, values in scores.items():
    ax.plot(EPSILONS, values, marker="o", label=name)
if ebm_score is not None:
    ax.plot([1.0], [ebm_score], marker="s", linestyle="", color="black", label="DP-EBM (defaults)")
ax.set_xscale("log")
ax.set_xlabel("ε")
ax.set_ylabel("test accuracy")
ax.set_title("Adult: private models against ε")
ax.legend()
output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "boosting_vs_epsilon.png", dpi=120)
