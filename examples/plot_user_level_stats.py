"""
=====================================================
User-level statistics on data with many rows per user
=====================================================

Differential privacy protects a *unit*: by default one row. When a person contributes
many rows (sessions, purchases, visits), protecting each row is not protecting the
person: a user with 200 rows is protected only as well as 200 rows together, i.e. with
200 ε. Passing ``groups=`` (a user id per row) to the functions of :mod:`dpsk.stats`
makes the user the unit, whatever their number of rows, by weighting each user's rows
(Epasto et al., "Smoothly Bounding User Contributions in Differential Privacy",
NeurIPS 2020). This example compares item-level and user-level means and medians on
synthetic session data: their accuracy, and what each really guarantees.
"""

# %%
# Synthetic sessions
# ------------------
#
# 3,000 users; the number of sessions per user is heavy-tailed (most users have a few,
# some have hundreds), and each session lasts between 0 and 120 minutes (the public
# bounds: durations are clipped there). Heavy users have longer sessions, so the mean
# over sessions and the mean over users differ.

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dpsk import BudgetAccountant, stats

rng = np.random.default_rng(0)
n_users = 3000
sessions = np.minimum(rng.zipf(1.7, n_users), 500)
users = np.repeat(np.arange(n_users), sessions)
typical = rng.gamma(2.0, 6.0, n_users) + 2.0 * np.log1p(sessions)
minutes = np.clip(typical[users] + rng.normal(0.0, 5.0, users.size), 0.0, 120.0)
BOUNDS = (0.0, 120.0)
print(f"{users.size} sessions of {n_users} users; the heaviest user has {sessions.max()} sessions")
print(f"mean over sessions {minutes.mean():.2f} min; median {np.median(minutes):.2f} min")

# %%
# Item level and user level, same ε
# ---------------------------------
#
# Both releases below cost ε = 1 on the accountant. The item-level mean protects each
# *session* with ε = 1. The user-level mean protects each *user* with ε = 1: it spends
# 10% of ε choosing a contribution threshold h privately, then weighs each user's rows
# by min(1, h / rows), so no user weighs more than h rows. It estimates the mean with
# heavy users capped, not the plain mean over sessions: that is the price of protecting
# them. ``return_error=True`` returns a :class:`~dpsk.stats.DPResult` with the noise's
# standard deviation, computed from public values only (free).

accountant = BudgetAccountant()
with accountant:
    item = stats.mean(minutes, epsilon=1.0, bounds=BOUNDS, return_error=True)
    user = stats.mean(minutes, epsilon=1.0, bounds=BOUNDS, groups=users, return_error=True)
    item_median = stats.median(minutes, epsilon=1.0, bounds=BOUNDS)
    user_median = stats.median(minutes, epsilon=1.0, bounds=BOUNDS, groups=users)
print(f"item-level mean   {item.value:7.3f} (noise std {item.noise_std:.3f})")
print(f"user-level mean   {user.value:7.3f} (noise std {user.noise_std:.3f}, threshold h = {user.threshold:g} rows)")
print(f"item-level median {item_median:7.3f}")
print(f"user-level median {user_median:7.3f}")

# %%
# The cost of each release is its ``privacy_spent``: the item-level mean releases a
# noisy count and a noisy sum; the user-level mean first chooses h (exponential
# mechanism, 10% of ε), then releases the weighted count and sum. Both add up to ε = 1,
# each with its own unit of privacy.

for name, result in [("item-level mean", item), ("user-level mean", user)]:
    parts = [accountant.total(spent_budget=[event]).epsilon for event in result.privacy_spent.flatten()]
    print(f"{name}: epsilon = {' + '.join(f'{p:.3g}' for p in parts)}")
print(accountant.summary())

# %%
# What each release guarantees to a user
# --------------------------------------
#
# Group privacy: an ε-DP release about rows is k·ε-DP for a user with k rows. The
# item-level mean's ε = 1 is 1 for a light user and hundreds for the heaviest. The
# user-level release gives every user ε = 1. The left panel shows the distribution of
# the users' guarantees.

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
levels = np.sort(sessions)  # item level: a user with k rows is protected with k·ε
left.step(levels, np.arange(1, n_users + 1) / n_users, where="post", label="item-level release, ε = 1 per row")
left.axvline(1.0, color="C1", label="user-level release, ε = 1 per user")
left.set_xscale("log")
left.set_xlabel("ε protecting a user")
left.set_ylabel("fraction of users")
left.set_title("The guarantee users get from a release at ε = 1")
left.legend(loc="lower right")
print(f"item level: {np.mean(sessions > 10):.0%} of the users are protected only with epsilon > 10")

# %%
# Accuracy of repeated releases
# -----------------------------
#
# Repeating each release shows its error. The item-level mean is very precise (one
# session changes it very little), but about a quantity in which the heavy users
# dominate, and with a weak guarantee for them. The user-level mean has more noise
# (one user may move it by h sessions' worth) around the capped mean, between the
# mean over sessions and the mean over users. Each repeat is one more release and is
# charged: this is a demonstration, not a recipe.

repeats = 30
with accountant:
    item_runs = [stats.mean(minutes, epsilon=1.0, bounds=BOUNDS) for _ in range(repeats)]
    user_runs = [stats.mean(minutes, epsilon=1.0, bounds=BOUNDS, groups=users) for _ in range(repeats)]
# The quantity the user-level mean estimates: each user's rows weighted by
# min(1, h / rows), with the threshold h of the first release. (Computed from the
# raw data here, for the picture only.)
weights = np.minimum(1.0, user.threshold / sessions)[users]
capped_mean = np.sum(weights * minutes) / np.sum(weights)
jitter = rng.uniform(-0.15, 0.15, repeats)
right.plot(item_runs, 1 + jitter, "o", alpha=0.6, label="item-level releases")
right.plot(user_runs, jitter, "o", alpha=0.6, label="user-level releases")
right.axvline(minutes.mean(), color="C0", linestyle="--", label="mean over sessions")
right.axvline(capped_mean, color="C1", linestyle="--", label=f"mean with users capped at h = {user.threshold:g} rows")
right.axvline(
    np.mean(np.bincount(users, weights=minutes) / sessions), color="0.4", linestyle=":", label="mean over users"
)
right.set_yticks([0, 1], ["user level", "item level"])
right.set_ylim(-0.6, 1.9)
right.set_xlabel("mean session length (minutes)")
right.set_title(f"{repeats} releases of each at ε = 1")
right.legend(fontsize="small", loc="upper left")
fig.tight_layout()
print(accountant.summary())

output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "user_level_stats.png", dpi=120)
plt.show()
