# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Speed of the clipping kernels (dpsk._core._clip, _accumulate) against numpy and scikit-learn.

Prints one markdown table per dtype. Every row times a dpsk kernel (with its default
threads, and with ``n_threads=1``) against the numpy expression computing the same thing
and, where the issue sets a target, against a reference:

* row clipping: target within 2x of a plain ``X.copy()`` (both allocate their output);
* Gram matrix: target within 2x of numpy's ``X.T @ X`` (no clipping at all);
* k-means pass: compared with a one-iteration ``KMeans(max_iter=1).fit`` of
  scikit-learn (public API; it also validates X and runs a final assignment pass).

All timings of one table come from the same run, interleaved (each repetition times
every candidate once) and reduced to the best of ``--repeats``, so that ratios stay
meaningful on a busy machine (n = 10⁶, d = 20, best of 7; ``--quick``: n = 10⁵, best
of 3). Run: ``python benchmarks/bench_clip.py [--quick]``.
"""

import os

import numpy as np
from _family_common import best_seconds, main
from threadpoolctl import threadpool_limits

from dpsk._core import _accumulate as A
from dpsk._core import _clip as K
from dpsk._core._common import _effective_n_threads


def sklearn_lloyd_iteration(X, centers, n_threads):
    """A one-iteration scikit-learn KMeans fit on X from ``centers``.

    Public API only: the fit also validates X and runs a final assignment pass, so it
    costs more than one bare Lloyd iteration (the like-for-like estimator comparison, at
    the same number of iterations, is in ``bench_cluster.py``).
    """
    from sklearn.cluster import KMeans

    km = KMeans(len(centers), init=centers, n_init=1, max_iter=1, algorithm="lloyd")
    return "KMeans(max_iter=1).fit", lambda: km.fit(X)


def numpy_kmeans_sums(X, centers, lower, upper):
    C = np.clip(X, lower, upper)
    dots = C @ centers.T
    labels = np.argmin((centers**2).sum(axis=1) - 2 * dots, axis=1)
    count = np.bincount(labels, minlength=len(centers))
    sums = np.zeros(centers.shape)
    np.add.at(sums, labels, C)
    inertia = ((C - centers[labels]) ** 2).sum()
    return count, sums, inertia


def numpy_class_sums(X, y_index, n_classes, lower, upper):
    C = np.clip(X, lower, upper)
    return [(C[y_index == k].sum(axis=0), (C[y_index == k] ** 2).sum(axis=0)) for k in range(n_classes)]


def numpy_l2_clip(X, max_norm):
    return X * np.minimum(1, max_norm / np.linalg.norm(X, axis=1))[:, None]


def numpy_linear_stats(X, y, lower, upper, y_lower, y_upper):
    C = np.clip(X, lower, upper)
    c = np.clip(y, y_lower, y_upper)
    return len(X), C.sum(axis=0), c.sum(), C.T @ C, C.T @ c, c @ c


def rows_for(X, y, n_threads):
    """[(operation, {candidate: callable}, baseline name, reference name or None)]."""
    n, d = X.shape
    lower, upper = -1.5 * np.ones(d), 1.5 * np.ones(d)
    norms = np.linalg.norm(X.astype(np.float64), axis=1)
    max_norm = float(np.median(norms))  # half of the rows get clipped
    max_norm_l1 = float(np.median(np.abs(X.astype(np.float64)).sum(axis=1)))
    y_index = (np.arange(n) % 3).astype(np.intp)
    rng = np.random.default_rng(1)
    centers = X[rng.choice(n, 8, replace=False)].astype(np.float64)
    lloyd_name, lloyd = sklearn_lloyd_iteration(X, centers, n_threads)

    def ours(func, *args, **kwargs):
        return {
            "dpsk": lambda: func(*args, **kwargs),
            "dpsk 1 thread": lambda: func(*args, n_threads=1, **kwargs),
        }

    return [
        (
            "L2 row clip",
            {**ours(K.clip_rows_l2, X, max_norm), "numpy": lambda: numpy_l2_clip(X, max_norm), "X.copy()": X.copy},
            "numpy",
            "X.copy()",
        ),
        (
            "L1 row clip",
            {
                **ours(K.clip_rows_l1, X, max_norm_l1),
                "numpy": lambda: X * np.minimum(1, max_norm_l1 / np.abs(X).sum(axis=1))[:, None],
                "X.copy()": X.copy,
            },
            "numpy",
            "X.copy()",
        ),
        (
            "bounds clip",
            {**ours(K.clip_bounds, X, lower, upper), "numpy": lambda: np.clip(X, lower, upper), "X.copy()": X.copy},
            "numpy",
            "X.copy()",
        ),
        (
            "clipped sums",
            {
                **ours(A.clipped_sums, X, lower, upper),
                "numpy": lambda: ((C := np.clip(X, lower, upper)).sum(axis=0), (C**2).sum(axis=0)),
            },
            "numpy",
            None,
        ),
        (
            "class sums (3)",
            {
                **ours(A.clipped_class_sums, X, y_index, 3, lower, upper),
                "numpy": lambda: numpy_class_sums(X, y_index, 3, lower, upper),
            },
            "numpy",
            None,
        ),
        (
            "Gram, bounds",
            {
                **ours(A.clipped_gram, X, lower=lower, upper=upper),
                "numpy": lambda: (C := np.clip(X, lower, upper)).T @ C,
                "X.T @ X": lambda: X.T @ X,
            },
            "numpy",
            "X.T @ X",
        ),
        (
            "Gram, L2 norm",
            {
                **ours(A.clipped_gram, X, max_norm=max_norm),
                "numpy": lambda: (C := numpy_l2_clip(X, max_norm)).T @ C,
                "X.T @ X": lambda: X.T @ X,
            },
            "numpy",
            "X.T @ X",
        ),
        (
            "linear stats",
            {
                **ours(A.clipped_linear_stats, X, y, -2.0, 2.0, lower=lower, upper=upper),
                "numpy": lambda: numpy_linear_stats(X, y, lower, upper, -2.0, 2.0),
            },
            "numpy",
            None,
        ),
        (
            "k-means pass (k=8)",
            {
                **ours(A.clipped_kmeans_sums, X, centers, lower, upper),
                "numpy": lambda: numpy_kmeans_sums(X, centers, lower, upper),
                lloyd_name: lloyd,
            },
            "numpy",
            lloyd_name,
        ),
    ]


def run(quick=False, d=20):
    """One table per dtype: times (ms) of each kernel, numpy and the reference."""
    n, repeats = (100_000, 3) if quick else (1_000_000, 7)
    n_threads = _effective_n_threads(None)
    rng = np.random.default_rng(0)
    out = []
    for dtype in (np.float32, np.float64):
        X = rng.standard_normal((n, d)).astype(dtype)
        y = (X.astype(np.float64) @ rng.standard_normal(d)).astype(dtype)
        rows = []
        # BLAS threads as scikit-learn and numpy would use them by default.
        with threadpool_limits(limits=n_threads):
            for name, candidates, baseline, reference in rows_for(X, y, n_threads):
                t = {key: 1e3 * value for key, value in best_seconds(candidates, repeats).items()}
                row = {
                    "operation": name,
                    "dpsk ms": t["dpsk"],
                    "dpsk 1 thread ms": t["dpsk 1 thread"],
                    "numpy ms": t[baseline],
                    "dpsk / numpy": t["dpsk"] / t[baseline],
                    "reference": reference or "",
                    "reference ms": t[reference] if reference else "",
                    "dpsk / reference": t["dpsk"] / t[reference] if reference else "",
                }
                rows.append(row)
        title = (
            f"{np.dtype(dtype).name}: n={n}, d={d}, best of {repeats} interleaved runs, {n_threads} threads "
            f"(os.cpu_count()={os.cpu_count()})"
        )
        out.append((title, rows))
    return out


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
