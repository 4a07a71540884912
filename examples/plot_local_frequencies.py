"""
=================================================
Frequencies and a mean under local privacy
=================================================

With *local* differential privacy no one is trusted with the raw values: each user
randomizes their own answer on their own device and sends only the report. The server
aggregates the reports into unbiased estimates (post-processing: it spends nothing).
This example estimates which of 64 apps 20,000 users use most, with optimal local
hashing (Wang, Blocki, Li & Jha 2017), and their mean daily screen time with one
randomized bit per user.
"""

# %%
# Each user randomizes their own value
# ------------------------------------
#
# The domain (64 apps) and ε are public. ``make_randomizer("auto", ...)`` picks the
# protocol of smallest variance for them: here optimal local hashing (OLH), since
# d = 64 >= 3e^ε + 2. One user keeps a budget of their own: the report is charged to it.

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dpsk import BudgetAccountant
from dpsk.local import FrequencyEstimator, MeanEstimator, OneBitMean, choose_protocol, make_randomizer

EPSILON, APPS, USERS = 1.0, 64, 20_000
rng = np.random.default_rng(0)
popularity = 1.0 / np.arange(1, APPS + 1) ** 1.1
apps = rng.choice(APPS, size=USERS, p=popularity / popularity.sum())
print(f"protocol chosen for d = {APPS}, epsilon = {EPSILON}: {choose_protocol(EPSILON, APPS)}")

client = make_randomizer("auto", epsilon=EPSILON, n_categories=APPS, random_state=0)
alice = BudgetAccountant(epsilon=2.0)  # one user's own budget
alice_report = client.randomise(apps[0], accountant=alice)
print(f"one report (hash seed a, b and bucket y): {alice_report.tolist()}")
print(f"the user's own budget: spent {alice.total().epsilon:g} of {alice.epsilon:g}")
reports = client.randomise(apps[1:])  # everyone else (one report each)

# %%
# The server aggregates
# ---------------------
#
# ``FrequencyEstimator`` reads reports only. Its estimates are unbiased, with the
# variance of Wang et al.'s formula, the same for every app (``variance_``).

server = FrequencyEstimator(protocol="auto", epsilon=EPSILON, n_categories=APPS)
server.fit(np.vstack([alice_report[None, :], reports]))
truth = np.bincount(apps, minlength=APPS) / USERS
sd = np.sqrt(server.variance_)
print(f"standard deviation of each frequency: {sd:.4f}")
top = np.argsort(server.frequencies_)[::-1][:5]
print(f"top 5 apps estimated: {sorted(top.tolist())}, true: {sorted(np.argsort(truth)[::-1][:5].tolist())}")
inside = np.mean(np.abs(server.frequencies_ - truth) <= 2 * sd)
print(f"apps within 2 standard deviations of the truth: {inside:.0%}")

# %%
# A private mean with one bit per user
# ------------------------------------
#
# Screen time in hours, public bounds (0, 12): each user sends one bit, 1 with a
# probability that grows with their value (Duchi et al. 2018).

hours = np.clip(rng.gamma(3.0, 1.3, USERS), 0.0, 12.0)
bits = OneBitMean(epsilon=EPSILON, bounds=(0.0, 12.0), random_state=1).randomise(hours)
mean = MeanEstimator(epsilon=EPSILON, bounds=(0.0, 12.0)).fit(bits)
sd_mean = mean.variance_**0.5
print(f"mean screen time: {mean.mean_:.2f} h (standard deviation at most {sd_mean:.2f}), true {hours.mean():.2f} h")

# %%
# Estimated against true frequencies
# ----------------------------------

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.bar(np.arange(APPS), truth, color="0.8", label="true frequency")
ax.errorbar(np.arange(APPS), server.frequencies_, yerr=2 * sd, fmt=".", color="C0", label="OLH estimate ± 2 sd")
ax.set_xlabel("app")
ax.set_ylabel("fraction of users")
ax.set_title(f"Local DP, ε = {EPSILON:g}, {USERS:,} users")
ax.legend()
fig.tight_layout()
output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "local_frequencies.png", dpi=120)
