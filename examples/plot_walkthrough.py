"""
===================================
A walkthrough of dpsk, cell by cell
===================================

A tour of dpsk in the order a notebook would take it: the data and its public bounds,
a private fit, the accountant that tracks the budget, a private statistic, and an
empirical audit of a privacy claim. Each cell runs as it is in Jupyter; in a notebook
the accountant displays as bars of the budget spent.
"""

# %%
# The data
# --------
#
# The bundled Adult census data: 32,561 people, whether their income exceeds $50K.
# :func:`dpsk.datasets.load_adult` encodes it with the published schema only (no
# statistic of the rows is used), so the encoding costs no privacy.

import functools
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dpsk import BudgetAccountant, PrivacyLeakWarning, stats
from dpsk.audit import audit, mechanism_sampler
from dpsk.datasets import ADULT_SCHEMA, load_adult
from dpsk.linear_model import LogisticRegression
from dpsk.mechanisms import Laplace

adult = load_adult()
test = load_adult(subset="test")
print(adult.data.shape, "values in", (adult.data.min(), adult.data.max()))
print("first features:", adult.feature_names[:6])

# %%
# Bounds: what the model may assume
# ---------------------------------
#
# Differential privacy bounds how much one person can change the result, and that
# needs bounds on the data. A DP estimator takes them as parameters; if you leave them
# out, it estimates them privately with 10 % of its ε. Asking for them to be derived
# from the data (``"data"``) warns: the bounds themselves then leak (the largest row
# norm is one person's data).

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    leaky = LogisticRegression(epsilon=1.0, data_norm="data", classes=[0, 1]).fit(adult.data, adult.target)
for warning in caught:
    if issubclass(warning.category, PrivacyLeakWarning):
        print("PrivacyLeakWarning:", str(warning.message)[:120], "...")
print("data_norm derived from the data:", leaky.data_norm_)

# %%
# The schema gives the bound without looking at the rows: five numeric values in
# [0, 1] and eight one-hot blocks make a row norm of at most √13.

print("public data_norm:", adult.data_norm)

# %%
# A private fit, with an accountant
# ---------------------------------
#
# One :class:`~dpsk.BudgetAccountant` holds the budget. Inside ``with accountant:``,
# every DP fit checks its cost against it *before* reading the data, then records the
# spend.

accountant = BudgetAccountant(epsilon=3.0)
with accountant:
    clf = LogisticRegression(epsilon=1.0, data_norm=adult.data_norm, classes=[0, 1]).fit(adult.data, adult.target)
print(f"test accuracy {clf.score(test.data, test.target):.3f}; cost {clf.privacy_spent_}")

# %%
# The accountant
# --------------
#
# In a notebook, an accountant as the last expression of a cell shows bars of the
# ε and δ spent (its HTML view); :meth:`~dpsk.BudgetAccountant.summary` says the same
# in text, with the composition theorem behind the total.

print(accountant.summary())
accountant  # noqa: B018 (the last expression of a cell is displayed)

# %%
# A private statistic
# -------------------
#
# :mod:`dpsk.stats` has the usual statistics with privacy. The age column was scaled
# into [0, 1] with the public range [17, 90]; the mean age at ε = 0.5, with the size of
# its noise (``return_error=True``, free to compute):

low, high = ADULT_SCHEMA["numeric"]["age"]
with accountant:
    age = stats.mean(adult.data[:, 0], epsilon=0.5, bounds=(0.0, 1.0), return_error=True)
print(f"mean age {low + (high - low) * age.value:.2f} ± {(high - low) * age.noise_std:.3f} (noise std)")
print(accountant.summary())

# %%
# Auditing a privacy claim
# ------------------------
#
# Is a mechanism as private as it claims? :func:`dpsk.audit.audit` runs it many times
# on two neighbouring inputs and tests the claim with a statistical test at
# α = 10⁻⁶. A Laplace mechanism for queries of sensitivity 1 at ε = 1, audited on two
# inputs 1 apart, passes. Audited on inputs 2 apart (a query whose sensitivity was
# underestimated), the same claim of ε = 1 fails, with a certified lower bound on
# the real ε.

laplace = functools.partial(Laplace, epsilon=1.0, sensitivity=1.0)
sampler = mechanism_sampler(laplace)
honest = audit(sampler, (0.0, 1.0), epsilon=1.0, n_samples=50_000, random_state=0)
wrong = audit(sampler, (0.0, 2.0), epsilon=1.0, n_samples=50_000, random_state=0)
print(f"neighbours 1 apart: {honest.verdict}, epsilon >= {honest.epsilon_lower_bound:.2f}")
print(f"neighbours 2 apart: {wrong.verdict}, epsilon >= {wrong.epsilon_lower_bound:.2f}")

# %%
# The picture behind the audit: the output distributions on the two neighbours. ε
# bounds the log-ratio of their densities; at distance 2 the ratio reaches e².

rng = np.random.default_rng(0)
fig, ax = plt.subplots(figsize=(7, 3.5))
bins = np.linspace(-8, 10, 73)
for shift, style in [(0.0, "C0"), (1.0, "C1"), (2.0, "C3")]:
    outputs = sampler(shift, 100_000, rng)
    ax.hist(outputs, bins=bins, density=True, histtype="step", color=style, label=f"input {shift:g}")
ax.set_yscale("log")
ax.set_xlabel("mechanism output")
ax.set_ylabel("density")
ax.set_title("Laplace mechanism, ε = 1, sensitivity 1")
ax.legend()
fig.tight_layout()

output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "walkthrough_audit.png", dpi=120)
plt.show()
