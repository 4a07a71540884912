# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Histogram gradient boosting: accuracy and AUC against ε, design choices, regression.

* Adult (the standard train/test split) on its 13 documented columns: the five numeric
  ones with their documented ranges as ``bounds`` (``schema_bounds``), the eight
  categorical ones as integer codes (the public category lists; "?" and unlisted values
  get one more code) with ``categorical_features``. ``fnlwgt`` (no documented range) is
  left out. dpsk's ``HistGradientBoostingClassifier`` with its defaults ("auto" rounds
  and learning rate, depth 3, 32 bins, cyclic features, public cuts, clip 0.7, δ = 1e-6) and
  its former defaults (before 2026-11-26: cuts by gain, clip 1, a total shrinkage of 2 per
  feature; ``former_defaults``) at ε ∈ {0.1, 0.5, 1, 2, 5},
  test accuracy and AUC, mean over 10 seeds (2 with ``--quick``; the seed drives the
  features drawn per node and the noise), next to scikit-learn's non-private
  ``HistGradientBoostingClassifier`` (defaults, same columns, native categorical
  support), dpsk's ``LogisticRegression`` (δ = 1e-6, on ``load_adult``'s one-hot [0, 1]
  encoding with its public ``data_norm``) and dpsk's ``RandomForestClassifier`` (same
  one-hot data, ``bounds=(0, 1)``).
* InterpretML's DP-EBM (``interpret-core``; rows skipped when it is not installed) on
  the same raw columns, δ = 1e-6, documented ranges as ``privacy_bounds``, at ε ∈ {0.5,
  1, 4}: defaults, and learning rate 0.1 with 1,000 rounds (the issue's tuned anchor).
* Design at ε = 1 (same data and seeds): the features of each node (``max_features``):
  DP-EBM's cyclic rounds (the default: every node of round t on feature t mod d), one
  drawn at random per node (the same noise), a third, all of them.
* Fit time: 10⁶ rows × 20 features (10⁵ with ``--quick``), 100 rounds of depth 3, 32
  bins, one thread (``threadpool_limits(1)``), against scikit-learn's
  ``HistGradientBoostingClassifier`` with the same rounds, depth and bins.
* Friedman #1 (20 000 training and 5 000 test rows, ``bounds=(0, 1)``, ``bounds_y=(-5,
  35)`` from the generating formula, as ``bench_forest_regressor.py``): R² at ε ∈ {0.5,
  1, 5} against dpsk's forest and scikit-learn's ``HistGradientBoostingRegressor``; dpsk's
  boosting with its defaults, the former defaults (cuts by gain, shrinkage 2), and
  ``bounds_y`` left out (released privately inside the fit).

* Public cuts (``thresholds="auto"``, the default since 2026-11-26, means ``"grid"`` at
  finite ε): Adult at every ε and Friedman #1 at ε ∈ {0.5, 1, 5}, the defaults against cuts
  by noisy gain (``thresholds="gain"``) and (Adult) against the former clip 1, same seeds;
  and the same on a validation split (80/20, seed 0) of Adult's *training* rows
  (``validation``, where the defaults were chosen), with the noise-free ceilings (ε = 10⁶)
  and scikit-learn's additive boosting (``interaction_cst="no_interactions"``).
* The decision threshold (``threshold``; 2026-11-27, issue 22): on the same validation split at
  ε = 1, held-out accuracy at the margin 0, at the threshold most accurate on the training rows
  (chosen without noise: the best case of a private recalibration round) and at the oracle
  threshold of the held-out rows.
* The feature schedule (``schedule``; 2026-11-27, issue 22): on the same validation split, the
  adaptive schedule (the default) against the cyclic one, the same seeds, paired.

Run: ``python benchmarks/bench_boosting.py [--quick] [--only adult,friedman,...]``
(sections: adult, design, dpebm, friedman, time, grid, validation, threshold, schedule). A leaf per category
(2026-11-26, not adopted) was measured by the section ``categories`` of commit e1cd29b.
"""

import contextlib
import math
from unittest import mock

import numpy as np
from _family_common import main
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingClassifier as SkHGBClassifier
from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBRegressor
from sklearn.metrics import r2_score, roc_auc_score
from threadpoolctl import threadpool_limits

from dpsk.datasets import load_adult
from dpsk.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    _boosting_plan,
)
from dpsk.linear_model import LogisticRegression

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
DELTA = 1e-6


def adult_columns(subset):
    """(X, y, bounds, categorical mask): documented numeric ranges and category codes."""
    data = load_adult(subset=subset, as_frame=True)
    columns, lower, upper, categorical = [], [], [], []
    for name, (low, high) in data.schema["numeric"].items():
        columns.append(data.data[name].to_numpy(dtype=np.float64))
        lower.append(low)
        upper.append(high)
        categorical.append(False)
    for name, categories in data.schema["categorical"].items():
        codes = {c: i for i, c in enumerate(categories)}
        columns.append(data.data[name].map(lambda v, c=codes: c.get(v, len(c))).to_numpy(dtype=np.float64))
        lower.append(0.0)
        upper.append(float(len(categories)))
        categorical.append(True)
    X = np.column_stack(columns)
    return X, data.target.to_numpy().astype(int), (np.array(lower), np.array(upper)), np.array(categorical)


def _scores(model, X, y):
    scores = model.decision_function(X) if hasattr(model, "decision_function") else model.predict_proba(X)[:, 1]
    if scores.ndim == 2:
        scores = scores[:, 1]
    return float(np.mean(model.predict(X) == y)), float(roc_auc_score(y, scores))


def _row(model, epsilon, results, **extra):
    acc, auc = np.array(results).T
    return {
        "model": model,
        "ε": epsilon,
        "accuracy": f"{acc.mean():.4f} ± {acc.std():.4f}",
        "AUC": f"{auc.mean():.4f} ± {auc.std():.4f}",
        "seeds": len(results),
        **extra,
    }


def former_defaults(active):
    """The defaults before 2026-11-26 while ``active``: a total shrinkage of 2 per feature
    (``STEPS_PER_FEATURE``); the callers also pass ``thresholds="gain"`` (and, for the
    classifier, ``clip_gradients=1``)."""
    return mock.patch.object(_boosting_plan, "STEPS_PER_FEATURE", 2.0) if active else contextlib.nullcontext()


#: The classifier's former defaults (with ``former_defaults``).
FORMER = {"thresholds": "gain", "clip_gradients": 1.0}


def adult_rows(seeds):
    X, y, bounds, categorical = adult_columns("train")
    X_test, y_test, _, _ = adult_columns("test")
    onehot, onehot_test = load_adult(), load_adult(subset="test")
    public = dict(bounds=bounds, categorical_features=categorical, classes=[0, 1], delta=DELTA)
    rows = []
    sk = SkHGBClassifier(categorical_features=categorical, random_state=0).fit(X, y)
    rows.append(_row("scikit-learn HistGradientBoosting (non-private)", math.inf, [_scores(sk, X_test, y_test)]))
    for epsilon in EPSILONS:
        for label, params in (("defaults", {}), ("former defaults", FORMER)):
            with former_defaults(bool(params)):
                fits = [
                    HistGradientBoostingClassifier(epsilon=epsilon, random_state=s, **public, **params).fit(X, y)
                    for s in seeds
                ]
            rows.append(
                _row(f"dpsk HistGradientBoosting ({label})", epsilon, [_scores(m, X_test, y_test) for m in fits])
            )
        lr = [
            LogisticRegression(
                epsilon=epsilon, delta=DELTA, data_norm=float(onehot.data_norm), classes=[0, 1], random_state=s
            ).fit(onehot.data, onehot.target)
            for s in seeds
        ]
        rows.append(
            _row("dpsk LogisticRegression", epsilon, [_scores(m, onehot_test.data, onehot_test.target) for m in lr])
        )
        forests = [
            RandomForestClassifier(epsilon=epsilon, bounds=(0.0, 1.0), classes=[0, 1], random_state=s).fit(
                onehot.data, onehot.target
            )
            for s in seeds
        ]
        rows.append(
            _row("dpsk RandomForest", epsilon, [_scores(m, onehot_test.data, onehot_test.target) for m in forests])
        )
    return rows


def dpebm_model(epsilon, bounds, categorical, seed, tuned=False):
    """InterpretML's DP-EBM on the raw columns (δ = 1e-6, one thread), or None without interpret.

    Defaults, or ``tuned``: learning rate 0.1 and 1,000 rounds (the issue's validation-tuned
    anchor). The numeric columns' ``privacy_bounds`` are their documented ranges.
    """
    try:
        from interpret.privacy import DPExplainableBoostingClassifier
    except ImportError:
        return None
    lower, upper = bounds
    numeric = np.flatnonzero(~categorical)
    return DPExplainableBoostingClassifier(
        feature_types=["nominal" if c else "continuous" for c in categorical],
        privacy_bounds={int(j): (float(lower[j]), float(upper[j])) for j in numeric},
        epsilon=epsilon,
        delta=DELTA,
        n_jobs=1,
        random_state=seed,
        **(dict(learning_rate=0.1, max_rounds=1000) if tuned else {}),
    )


def dpebm_rows(seeds, epsilons=(0.5, 1.0, 4.0)):
    """DP-EBM (defaults and tuned) on Adult's raw columns; no rows when interpret is not installed."""
    X, y, bounds, categorical = adult_columns("train")
    X_test, y_test, _, _ = adult_columns("test")
    rows = []
    for tuned in (False, True):
        for epsilon in epsilons:
            models = [dpebm_model(epsilon, bounds, categorical, s, tuned) for s in seeds]
            if models[0] is None:
                return [{"model": "InterpretML DP-EBM: not installed (pip install interpret-core)", "ε": "-"}]
            results = [_scores(m.fit(X, y), X_test, y_test) for m in models]
            label = "lr 0.1, 1,000 rounds" if tuned else "defaults"
            rows.append(_row(f"InterpretML DP-EBM ({label})", epsilon, results))
    return rows


def design_rows(seeds):
    X, y, bounds, categorical = adult_columns("train")
    X_test, y_test, _, _ = adult_columns("test")
    public = dict(bounds=bounds, categorical_features=categorical, classes=[0, 1], delta=DELTA)
    rows = []
    for label, max_features in (
        ("cyclic, feature t mod d in round t (default)", None),
        ("one drawn at random per node", 1),
        ("a third, drawn per node", 1 / 3),
        ("all", 1.0),
    ):
        fits = [
            HistGradientBoostingClassifier(epsilon=1.0, max_features=max_features, random_state=s, **public).fit(X, y)
            for s in seeds
        ]
        rows.append(_row(f"features per node: {label}", 1.0, [_scores(m, X_test, y_test) for m in fits]))
    return rows


def friedman_rows(seeds):
    rows = []
    splits = [
        (
            *make_friedman1(n_samples=20_000, n_features=10, noise=1.0, random_state=s),
            *make_friedman1(n_samples=5_000, n_features=10, noise=1.0, random_state=10_000 + s),
        )
        for s in seeds
    ]
    public = dict(bounds=(0.0, 1.0), bounds_y=(-5.0, 35.0))
    sk = [r2_score(yt, SkHGBRegressor(random_state=0).fit(X, y).predict(Xt)) for X, y, Xt, yt in splits]
    rows.append({"model": "scikit-learn HistGradientBoosting (non-private)", "ε": math.inf, "R²": _mean(sk)})
    variants = (
        ("defaults", public),
        ("former defaults", {**public, "thresholds": "gain"}),
        ("defaults, bounds_y private", {"bounds": public["bounds"]}),
    )
    for epsilon in (0.5, 1.0, 5.0):
        for label, params in variants:
            with former_defaults("thresholds" in params):
                ours = [
                    r2_score(
                        yt,
                        HistGradientBoostingRegressor(epsilon=epsilon, random_state=s, **params).fit(X, y).predict(Xt),
                    )
                    for s, (X, y, Xt, yt) in zip(seeds, splits)
                ]
            rows.append({"model": f"dpsk HistGradientBoosting ({label}; δ = 1e-6)", "ε": epsilon, "R²": _mean(ours)})
        forest = [
            r2_score(yt, RandomForestRegressor(epsilon=epsilon, random_state=s, **public).fit(X, y).predict(Xt))
            for s, (X, y, Xt, yt) in zip(seeds, splits)
        ]
        rows.append({"model": "dpsk RandomForest (pure ε)", "ε": epsilon, "R²": _mean(forest)})
    return rows


GRID_VARIANTS = (
    ("defaults: public cuts, clip 0.7", {}),
    ('cuts by noisy gain, clip 0.7, thresholds="gain"', {"thresholds": "gain"}),
    ("public cuts, clip 1, clip_gradients=1", {"clip_gradients": 1.0}),
)


def _adult_grid(seeds, X, y, X_eval, y_eval, epsilons, variants=GRID_VARIANTS):
    _, _, bounds, categorical = adult_columns("train")
    public = dict(bounds=bounds, categorical_features=categorical, classes=[0, 1], delta=DELTA)
    rows = []
    for epsilon in epsilons:
        for label, params in variants:
            fits = [
                HistGradientBoostingClassifier(epsilon=epsilon, random_state=s, **public, **params).fit(X, y)
                for s in seeds
            ]
            rows.append(
                _row(f"dpsk HistGradientBoosting ({label})", epsilon, [_scores(m, X_eval, y_eval) for m in fits])
            )
    return rows


def grid_rows(seeds):
    """Adult (test split) at every ε and Friedman #1 at ε ∈ {0.5, 1, 5}: cuts by noisy gain
    (the default) against public staggered cuts (``thresholds="grid"``), same seeds."""
    X, y, _, _ = adult_columns("train")
    X_test, y_test, _, _ = adult_columns("test")
    rows = _adult_grid(seeds, X, y, X_test, y_test, EPSILONS)
    public = dict(bounds=(0.0, 1.0), bounds_y=(-5.0, 35.0))
    for epsilon in (0.5, 1.0, 5.0):
        for label, params in GRID_VARIANTS[:2]:
            r2 = []
            for s in seeds:
                Xf, yf = make_friedman1(n_samples=20_000, n_features=10, noise=1.0, random_state=s)
                Xt, yt = make_friedman1(n_samples=5_000, n_features=10, noise=1.0, random_state=10_000 + s)
                model = HistGradientBoostingRegressor(epsilon=epsilon, random_state=s, **public, **params)
                r2.append(r2_score(yt, model.fit(Xf, yf).predict(Xt)))
            label = label.replace(", clip 0.7", "")  # the regressor's clip: a quarter of bounds_y's width
            rows.append({"model": f"Friedman #1 R²: dpsk ({label})", "ε": epsilon, "R²": _mean(r2)})
    return rows


def _validation_split():
    """Adult's training rows ``(X, y, bounds, categorical)`` and the row indices of their
    validation split (80/20, seed 0), where the defaults are chosen."""
    X, y, bounds, categorical = adult_columns("train")
    order = np.random.default_rng(0).permutation(len(y))
    return X, y, bounds, categorical, order[: int(0.8 * len(y))], order[int(0.8 * len(y)) :]


def validation_rows(seeds):
    """The same variants on a validation split (80/20, seed 0) of Adult's training rows, with the
    noise-free ceilings (ε = 10⁶) and scikit-learn's boosting with and without interactions."""
    X, y, _, categorical, fit, held = _validation_split()
    rows = _adult_grid(seeds, X[fit], y[fit], X[held], y[held], (0.1, 1.0, 5.0))
    rows += _adult_grid(seeds[:1], X[fit], y[fit], X[held], y[held], (1e6,), GRID_VARIANTS[:2])
    for label, extra in (("", {}), (", additive", {"interaction_cst": "no_interactions"})):
        sk = SkHGBClassifier(categorical_features=categorical, random_state=0, **extra).fit(X[fit], y[fit])
        rows.append(
            _row(f"scikit-learn HistGradientBoosting (non-private{label})", math.inf, [_scores(sk, X[held], y[held])])
        )
    return rows


def threshold_rows(seeds, epsilon=1.0):
    """Validation split (80/20, seed 0) of Adult's training rows at the defaults: held-out accuracy at
    the margin 0, at the margin threshold most accurate on the training rows (chosen without noise:
    the best case of any monotone recalibration, which moves the predicted class only through where
    it crosses 0), and at the threshold best on the held-out rows themselves (an oracle)."""
    X, y, bounds, categorical, fit, held = _validation_split()
    public = dict(bounds=bounds, categorical_features=categorical, classes=[0, 1], delta=DELTA)
    shifts = np.linspace(-1.0, 1.0, 81)
    scores = []
    for s in seeds:
        model = HistGradientBoostingClassifier(epsilon=epsilon, random_state=s, **public).fit(X[fit], y[fit])
        train, test = model.decision_function(X[fit]), model.decision_function(X[held])
        chosen = shifts[np.argmax([np.mean((train + c > 0) == y[fit]) for c in shifts])]
        accuracy = [np.mean((test + c > 0) == y[held]) for c in shifts]
        scores.append((np.mean((test > 0) == y[held]), np.mean((test + chosen > 0) == y[held]), max(accuracy)))
    scores = np.array(scores)
    labels = ("margin 0 (defaults)", "threshold chosen on the training rows", "threshold best on the held-out rows")
    return [
        {"model": label, "ε": epsilon, "accuracy": f"{scores[:, i].mean():.4f} ± {scores[:, i].std():.4f}"}
        for i, label in enumerate(labels)
    ] + [
        {
            "model": "paired difference (training-rows threshold - margin 0), ± standard error",
            "ε": epsilon,
            "accuracy": f"{np.mean(scores[:, 1] - scores[:, 0]):+.4f} ± "
            f"{np.std(scores[:, 1] - scores[:, 0]) / math.sqrt(len(seeds)):.4f}",
            "seeds": len(seeds),
        }
    ]


def schedule_rows(seeds, epsilons=(0.5, 1.0, 2.0, 5.0)):
    """Validation split (80/20, seed 0) of Adult's training rows: the adaptive feature schedule (the
    default since 2026-11-27) against the cyclic one (``ADAPTIVE_SCHEDULE`` off), the same seeds,
    with the paired difference ± its standard error."""
    X, y, bounds, categorical, fit, held = _validation_split()
    public = dict(bounds=bounds, categorical_features=categorical, classes=[0, 1], delta=DELTA)
    rows = []
    for epsilon in epsilons:
        scores = {}
        for adaptive in (True, False):
            with mock.patch.object(_boosting_plan, "ADAPTIVE_SCHEDULE", adaptive):
                scores[adaptive] = np.array(
                    [
                        _scores(
                            HistGradientBoostingClassifier(epsilon=epsilon, random_state=s, **public).fit(
                                X[fit], y[fit]
                            ),
                            X[held],
                            y[held],
                        )
                        for s in seeds
                    ]
                )
        for adaptive, label in ((True, "adaptive schedule (defaults)"), (False, "cyclic schedule")):
            rows.append(_row(label, epsilon, scores[adaptive]))
        diff = scores[True] - scores[False]
        se = diff.std(axis=0) / math.sqrt(len(seeds))
        rows.append(
            {
                "model": "paired difference (adaptive - cyclic), ± standard error",
                "ε": epsilon,
                "accuracy": f"{diff[:, 0].mean():+.4f} ± {se[0]:.4f}",
                "AUC": f"{diff[:, 1].mean():+.4f} ± {se[1]:.4f}",
                "seeds": len(seeds),
            }
        )
    return rows


def fit_time_rows(n_rows, n_features=20, rounds=100):
    """Fit time on synthetic (n_rows × n_features), ``rounds`` rounds of depth 3, 32 bins, one thread:
    dpsk's default schedule (cyclic) and every feature per node, against scikit-learn's."""
    import time

    rng = np.random.default_rng(0)
    X = rng.random((n_rows, n_features))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n_rows) > 0.75).astype(int)
    common = dict(max_iter=rounds, learning_rate=0.1, max_bins=32)
    models = {
        "scikit-learn HistGradientBoosting (max_depth=3, no early stopping)": SkHGBClassifier(
            max_depth=3, early_stopping=False, random_state=0, **common
        ),
        "dpsk HistGradientBoosting (cyclic, default)": HistGradientBoostingClassifier(
            bounds=(0.0, 1.0), classes=[0, 1], random_state=0, **common
        ),
        "dpsk HistGradientBoosting (every feature per node)": HistGradientBoostingClassifier(
            max_features=1.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=0, **common
        ),
    }
    rows, reference = [], None
    for name, model in models.items():
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        reference = reference or seconds
        rows.append(
            {"model": name, "rows": n_rows, "fit (s)": f"{seconds:.1f}", "× scikit-learn": f"{seconds / reference:.2f}"}
        )
    return rows


def _mean(scores):
    return f"{np.mean(scores):.3f} ± {np.std(scores):.3f}"


#: How the titles of the sections on Adult's test split begin (the plot draws only those).
ADULT_TEST_TITLE = "Adult, test split:"

SECTIONS = ("adult", "design", "dpebm", "friedman", "time", "grid", "validation", "threshold", "schedule")


def run(quick=False, only=SECTIONS):
    """Adult accuracy/AUC against ε, the features-per-node design, Friedman #1 R² (``quick``: 2 seeds);
    ``only``: the sections to run (see ``SECTIONS``)."""
    seeds = list(range(2 if quick else 10))
    sections = {
        "adult": (f"{ADULT_TEST_TITLE} accuracy and AUC ({len(seeds)} seeds, mean ± sd)", lambda: adult_rows(seeds)),
        "design": ("Adult at ε = 1: features drawn per node", lambda: design_rows(seeds)),
        "dpebm": (f"{ADULT_TEST_TITLE} InterpretML DP-EBM ({len(seeds)} seeds)", lambda: dpebm_rows(seeds)),
        "friedman": (f"Friedman #1, test R² ({len(seeds)} seeds)", lambda: friedman_rows(seeds)),
        "time": (
            "Fit time, one thread, 100 rounds of depth 3, 32 bins",
            lambda: fit_time_rows(10**5 if quick else 10**6),
        ),
        "grid": (f"Public cuts against cuts by noisy gain ({len(seeds)} seeds, mean ± sd)", lambda: grid_rows(seeds)),
        "validation": (
            f"Validation split of Adult's training rows ({len(seeds)} seeds; ε = 10⁶: 1 seed)",
            lambda: validation_rows(seeds),
        ),
        "threshold": (
            f"Validation split at ε = 1: the decision threshold ({len(seeds)} seeds)",
            lambda: threshold_rows(seeds),
        ),
        "schedule": (
            f"Validation split: adaptive against cyclic feature schedule ({len(seeds)} seeds, paired)",
            lambda: schedule_rows(seeds),
        ),
    }
    with threadpool_limits(1):  # accuracy only: scikit-learn's OpenMP threads would only contend
        return [(title, rows()) for name, (title, rows) in sections.items() if name in only]


def plot(result, out):
    """Adult test accuracy against ε: dpsk's boosting, LogisticRegression, the forest, DP-EBM.

    From the test-split sections only (``adult``, ``dpebm``): a run with ``--only`` and neither of
    them draws nothing, rather than a plot of validation or regression rows."""
    curves = {}
    for title, rows in result:
        if not title.startswith(ADULT_TEST_TITLE):
            continue
        for row in rows:
            if isinstance(row.get("ε"), float) and math.isfinite(row["ε"]) and "accuracy" in row:
                curves.setdefault(row["model"], []).append((row["ε"], float(row["accuracy"].split()[0])))
    if not curves:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, points in curves.items():
        if name.startswith("features per node"):
            continue
        eps, acc = zip(*sorted(points))
        ax.plot(eps, acc, marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("ε (δ = 1e-6)")
    ax.set_ylabel("Adult test accuracy")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "boosting_accuracy_vs_epsilon.png"
    fig.savefig(path, dpi=120)
    return [path]


if __name__ == "__main__":
    import sys

    if "--only" in sys.argv:  # python bench_boosting.py --only adult,friedman [--quick]
        at = sys.argv.index("--only")
        chosen = tuple(sys.argv.pop(at + 1).split(","))
        sys.argv.pop(at)
        main(lambda quick=False: run(quick, chosen), __doc__.splitlines()[0])
    else:
        main(run, __doc__.splitlines()[0])
