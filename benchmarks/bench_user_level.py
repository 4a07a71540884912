# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""User-level privacy (issue 8): the paper's experiments, the mean comparison, timings.

Reproduces "Smoothly Bounding User Contributions in Differential Privacy" (Epasto et al.,
NeurIPS 2020) with dpsk's public API:

1. **Regression with label privacy (§6, Figures 1 and 2).** ``make_regression(n, d=10,
   noise=20, bias=0)`` with user row counts from a Zipf law truncated to 1..100
   (P(k) ∝ k^-α; the paper's generator is in its appendix, which we do not have;
   spec-user-contrib.md §4.3 explains why truncation reproduces its trends), ε ∈ {1, 2, 3},
   10 repetitions. Methods, all :class:`~dpsk.linear_model.LabelPrivateLinearRegression`:
   (a) smooth/generalised weighting (``method="optimal"``), (b) sample limiting at the
   threshold minimising the exact variance (``"limit"``), (c) all data, OLS plus noise
   (``"ols"``). Metric: the paper's average squared prediction error mean((Xβ̃ − y)²) on
   the data, averaged over repetitions. As in the paper, σ² is "public knowledge"
   computed by OLS and the label range is the data's — **not private**, for reproduction
   only (the library's defaults are data-independent).
2. **The mean (§3).** Exact variances (Lemma 2 / Claims 1–2) of the best weighted
   average and the best sample limiting on Zipf instances: Theorem 3 puts the ratio in
   [1, 4]; and a Monte-Carlo check of ``dpsk.stats.mean`` (``public_user_counts=True``)
   smooth against ``contribution_bound="limit"``.
3. **Timing.** User-level mean of 10⁷ rows and 10⁵ users (target < 2 s), against numpy's
   mean and dpsk's item-level mean in the same run; the grouping kernel against
   ``np.unique``.
4. **Item-level statistics against diffprivlib** (``dpsk.stats`` vs
   ``diffprivlib.tools``, in its own venv through a subprocess): error over 10 seeds and
   time. diffprivlib treats n as public (replace-one neighbours) while dpsk's default
   relation is add/remove and releases a noisy count as well.

Run ``python benchmarks/bench_user_level.py [--quick] [--out FOLDER]`` (or
``benchmarks/run.py``); the plots (``bench_user_level_n.png``,
``bench_user_level_alpha.png``) go to ``benchmarks/results/`` or ``--out``.
"""

import time

import numpy as np
from _family_common import best_seconds, main, run_diffprivlib
from sklearn.datasets import make_regression

from dpsk import stats
from dpsk._core._groups import group_codes
from dpsk.linear_model import LabelPrivateLinearRegression
from dpsk.stats._contribution import best_limit_threshold, limit_variance, smooth_threshold, smooth_variance

METHODS = {"smooth (GWA)": "optimal", "limit, best h": "limit", "all data (OLS)": "ols"}


def zipf_groups(n, alpha, rng, cap=100):
    """User ids for n rows: users' row counts i.i.d. Zipf(α) on 1..cap, the last truncated."""
    k = np.arange(1, cap + 1)
    p = k ** -float(alpha)
    p /= p.sum()
    counts = []
    while sum(counts) < n:
        counts.extend(rng.choice(k, size=64, p=p).tolist())
    counts = np.array(counts)
    total = np.cumsum(counts)
    m = int(np.searchsorted(total, n)) + 1
    counts = counts[:m]
    counts[-1] -= int(total[m - 1] - n)
    return np.repeat(np.arange(m), counts)


def regression_errors(n, alpha, epsilon, seed):
    """Average squared prediction error of the three methods on one synthetic dataset."""
    X, y = make_regression(n_samples=n, n_features=10, noise=20, bias=0.0, random_state=seed)
    groups = zipf_groups(n, alpha, np.random.default_rng(seed))
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    sigma2 = float(np.mean((y - X @ beta) ** 2))  # "public knowledge", as in the paper
    out = {}
    for label, method in METHODS.items():
        reg = LabelPrivateLinearRegression(
            epsilon=epsilon,
            bounds_y=(float(y.min()), float(y.max())),
            noise_variance=sigma2,
            method=method,
            fit_intercept=False,
            random_state=seed,
        )
        reg.fit(X, y, groups=groups)
        out[label] = float(np.mean((X @ reg.coef_ - y) ** 2))
        out[label + " h"] = reg.threshold_
    out["users"] = int(groups.max()) + 1
    return out


def regression_rows(quick=False):
    """Error vs n (α = 1.5) for each ε, and error vs α (n = 3000, ε = 1)."""
    reps = 2 if quick else 10
    ns = [600, 1800] if quick else [600, 1200, 1800, 2400, 3000]
    epsilons = [1.0] if quick else [1.0, 2.0, 3.0]
    alphas = [1.0, 2.0] if quick else [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    configs = [("n", n, 1.5, eps) for eps in epsilons for n in ns]
    configs += [("alpha", 1800 if quick else 3000, a, 1.0) for a in alphas]
    rows = []
    for sweep, n, alpha, eps in configs:
        runs = [regression_errors(n, alpha, eps, seed) for seed in range(reps)]
        row = {
            "sweep": sweep,
            "n": n,
            "alpha": alpha,
            "epsilon": eps,
            "users": int(np.mean([r["users"] for r in runs])),
        }
        for label in METHODS:
            row[label] = float(np.mean([r[label] for r in runs]))
        row["best h (limit)"] = float(np.median([r["limit, best h h"] for r in runs]))
        row["limit / smooth"] = row["limit, best h"] / row["smooth (GWA)"]
        row["OLS / smooth"] = row["all data (OLS)"] / row["smooth (GWA)"]
        rows.append(row)
    return rows


def mean_rows(quick=False):
    """§3: exact best-variance ratio (limiting / weighting) on Zipf instances; Theorem 3: in [1, 4]."""
    seeds = range(2 if quick else 5)
    rows = []
    for alpha in (0.5, 1.0, 1.5, 2.0, 3.0):
        for eps in (0.1, 1.0, 3.0):
            ratios = []
            for seed in seeds:
                counts = np.bincount(zipf_groups(3000, alpha, np.random.default_rng(seed)))
                var_w, noise_w = 1.0 / 12.0, 2.0 / eps**2  # B = 1, σ² = 1/12 (uniform labels)
                v = smooth_variance(counts, smooth_threshold(counts, var_w, noise_w), var_w, noise_w)
                v_limit = limit_variance(counts, best_limit_threshold(counts, var_w, noise_w), var_w, noise_w)
                ratios.append(v_limit / v)
            rows.append(
                {
                    "alpha": alpha,
                    "epsilon": eps,
                    "var(limit, best h) / var(weighted)": float(np.mean(ratios)),
                    "min": float(np.min(ratios)),
                    "max": float(np.max(ratios)),
                }
            )
    return rows


def mean_monte_carlo_rows(quick=False):
    """dpsk.stats.mean with declared-public counts: smooth vs limit, fresh uniform data per run."""
    reps = 300 if quick else 3000
    rng = np.random.default_rng(7)
    groups = zipf_groups(3000, 1.5, np.random.default_rng(0))
    errors = {}
    for bound in ("smooth", "limit"):
        values = [
            stats.mean(
                rng.uniform(0, 1, groups.size),
                epsilon=1.0,
                bounds=(0, 1),
                groups=groups,
                contribution_bound=bound,
                public_user_counts=True,
                random_state=rng,
            )
            for _ in range(reps)
        ]
        errors[bound] = float(np.mean((np.array(values) - 0.5) ** 2))
    return [
        {
            "alpha": 1.5,
            "epsilon": 1.0,
            "MSE smooth": errors["smooth"],
            "MSE limit": errors["limit"],
            "limit / smooth": errors["limit"] / errors["smooth"],
            "runs": reps,
        }
    ]


def timing_rows(quick=False):
    """User-level mean of 10⁷ rows / 10⁵ users (target < 2 s) and the grouping pass."""
    n, m = (10**6, 10**4) if quick else (10**7, 10**5)
    rng = np.random.default_rng(0)
    groups = rng.integers(0, m, n)
    y = rng.uniform(0, 1, n)
    candidates = {
        "dpsk.stats.mean(groups=), smooth, private h": lambda: stats.mean(
            y, epsilon=1.0, bounds=(0, 1), groups=groups, random_state=0
        ),
        "dpsk.stats.mean(groups=), limit, private h": lambda: stats.mean(
            y, epsilon=1.0, bounds=(0, 1), groups=groups, contribution_bound="limit", random_state=0
        ),
        "dpsk.stats.mean, item level": lambda: stats.mean(y, epsilon=1.0, bounds=(0, 1), random_state=0),
        "numpy mean (no privacy)": lambda: np.mean(y),
        "grouping: dpsk hash pass": lambda: group_codes(groups),
        "grouping: np.unique(return_inverse, return_counts)": lambda: np.unique(
            groups, return_inverse=True, return_counts=True
        ),
    }
    times = best_seconds(candidates, 2 if quick else 3)
    base = times["numpy mean (no privacy)"]
    return [{"rows": n, "users": m, "what": name, "seconds": t, "x numpy mean": t / base} for name, t in times.items()]


DPL_TOOLS = """
from diffprivlib import tools
n, seeds = int(n), int(seeds)
x = np.random.default_rng(0).uniform(0, 1, n)
calls = {
    "mean": lambda s: tools.mean(x, epsilon=1.0, bounds=(0, 1), random_state=s),
    "var": lambda s: tools.var(x, epsilon=1.0, bounds=(0, 1), random_state=s),
    "median": lambda s: tools.median(x, epsilon=1.0, bounds=(0, 1), random_state=s),
    "histogram": lambda s: tools.histogram(x, epsilon=1.0, bins=10, range=(0, 1), random_state=s)[0],
}
out = {}
for name, call in calls.items():
    values, times = [], []
    for s in range(seeds):
        t = time.perf_counter()
        values.append(np.asarray(call(s), dtype=float).tolist())
        times.append(time.perf_counter() - t)
    out[name] = {"values": values, "time": min(times)}
print(json.dumps(out))
"""


def item_level_rows(quick=False):
    """dpsk.stats against diffprivlib.tools on n uniform values, ε = 1: RMSE over seeds and time."""
    n, seeds = (10**5, 10) if quick else (10**6, 50)
    x = np.random.default_rng(0).uniform(0, 1, n)
    truth = {
        "mean": x.mean(),
        "var": x.var(),
        "median": np.median(x),
        "histogram": np.histogram(x, bins=10, range=(0, 1))[0],
    }
    ours = {
        "mean": lambda s: stats.mean(x, epsilon=1.0, bounds=(0, 1), random_state=s),
        "var": lambda s: stats.var(x, epsilon=1.0, bounds=(0, 1), random_state=s),
        "median": lambda s: stats.median(x, epsilon=1.0, bounds=(0, 1), random_state=s),
        "histogram": lambda s: stats.histogram(x, epsilon=1.0, bins=10, range=(0, 1), random_state=s)[0],
    }
    dpl = run_diffprivlib(DPL_TOOLS, {"n": np.array(n), "seeds": np.array(seeds)})
    dpl = dpl if isinstance(dpl, dict) and "mean" in dpl else None
    rows = []
    for name, call in ours.items():
        values, times = [], []
        for s in range(seeds):
            start = time.perf_counter()
            values.append(np.asarray(call(s), dtype=float))
            times.append(time.perf_counter() - start)
        row = {"statistic": name, "n": n, "dpsk RMSE": _rmse(values, truth[name]), "dpsk ms": 1e3 * min(times)}
        if dpl is not None:
            row["diffprivlib RMSE"] = _rmse(np.array(dpl[name]["values"]), truth[name])
            row["diffprivlib ms"] = 1e3 * dpl[name]["time"]
            row["time dpsk / diffprivlib"] = row["dpsk ms"] / row["diffprivlib ms"]
        rows.append(row)
    return rows


def _rmse(values, truth):
    return float(np.sqrt(np.mean((np.asarray(values, dtype=float) - truth) ** 2)))


def run(quick=False):
    """Every table of this benchmark, as (title, rows) sections."""
    return [
        ("regression (label privacy), error vs n and vs alpha", regression_rows(quick)),
        ("mean: exact variance ratio, Theorem 3 bounds it in [1, 4]", mean_rows(quick)),
        ("mean: dpsk.stats.mean, public counts, Monte Carlo", mean_monte_carlo_rows(quick)),
        ("timing", timing_rows(quick)),
        ("item-level statistics vs diffprivlib (eps = 1)", item_level_rows(quick)),
    ]


def _error_panel(ax, rows, key, xlabel, title):
    """One log-scale panel: every method's average squared error against ``key``."""
    for label in METHODS:
        ax.plot([r[key] for r in rows], [r[label] for r in rows], marker="o", label=label)
    ax.set(yscale="log", xlabel=xlabel, ylabel="average squared error", title=title)
    ax.legend()


def plot(result, folder):
    """Error vs n (α = 1.5, each ε) and vs α (ε = 1), log scale, as PNG files in ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reg = dict(result)["regression (label privacy), error vs n and vs alpha"]
    fig, axes = plt.subplots(1, len({r["epsilon"] for r in reg if r["sweep"] == "n"}), figsize=(12, 4), squeeze=False)
    for ax, eps in zip(axes[0], sorted({r["epsilon"] for r in reg if r["sweep"] == "n"})):
        part = [r for r in reg if r["sweep"] == "n" and r["epsilon"] == eps]
        _error_panel(ax, part, "n", "n (rows)", f"error vs n, eps = {eps:g}, alpha = 1.5")
    fig.tight_layout()
    paths = [folder / "bench_user_level_n.png", folder / "bench_user_level_alpha.png"]
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 4))
    part = [r for r in reg if r["sweep"] == "alpha"]
    title = f"error vs alpha, eps = 1, n = {part[0]['n'] if part else ''}"
    _error_panel(ax, part, "alpha", "Zipf alpha (lower: more uneven users)", title)
    fig.tight_layout()
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)
    return paths


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
