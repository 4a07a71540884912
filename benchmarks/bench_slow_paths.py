# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The slow paths of issue 16, side by side with scikit-learn in one run.

MultinomialNB, PCA(5) and LogisticRegression on Adult (32,561 × 107, one-hot, the
package's copy) and on n × 20 standard normal data (n = 10⁶; 10⁵ with ``--quick``;
MultinomialNB on its absolute values). Every private fit is at ε = 1 with public sensitivity parameters
(``data_norm`` from the data's largest row, which a benchmark may do) and
``random_state=None`` (fresh entropy, the production setting: an integer seed adds a
digest of the data to each fit). scikit-learn: ``MultinomialNB()``, ``PCA(5)``
(``svd_solver="covariance_eigh"``, its choice for tall data), ``LogisticRegression``
with ``newton-cholesky`` at dpsk's ``C_`` and number of Newton steps (tolerance 0).

Times: dpsk, scikit-learn with its default BLAS threads, and scikit-learn with BLAS
limited to one thread (what dpsk does inside its fits, ``dpsk.utils._threads``) are
timed interleaved in this process after one untimed round, best of 5 (3 with
``--quick``), so that load from other processes affects all alike; the load average
(1 min) at the start is in every row. "spread" is the slowest over the fastest of the
repeated fits (wall time); "CPU spread" the same for the process's CPU time (all threads), which load from other
processes disturbs less than the wall time (it still pays for shared caches and cores).
Memory: the peak
of the allocations made during one fit (``tracemalloc``, which numpy reports to), on
top of X. Targets: time and memory within 1.2× of scikit-learn, spread under 1.5×.

PCA(5) runs three ways: with δ > 0, and pure ε (the default ``delta=0``) with the default
``l1_norm="auto"`` (a private L1 clip) or a public ``l1_norm`` (the largest row L1 norm).
``DPSK_BENCH_ONLY=PCA,MultinomialNB`` (an environment variable) keeps the rows whose
estimator starts with one of these (the LogisticRegression rows take minutes).
"""

import os
import time
import tracemalloc
import warnings

import numpy as np
from _family_common import main
from sklearn.decomposition import PCA as SkPCA
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB
from threadpoolctl import threadpool_limits

from dpsk.datasets import load_adult
from dpsk.decomposition import PCA
from dpsk.linear_model import LogisticRegression
from dpsk.naive_bayes import MultinomialNB

CLASSES = [0, 1]


def _times(candidates, repeats):
    """Wall and CPU times (s) of each callable, interleaved over ``repeats`` rounds
    (``cpu`` maps each name to its process CPU times, all threads), after one untimed
    round: the first fit of a process pays one-off costs (scikit-learn's first
    ``validate_data`` discovers narwhals' entry points, about 12 ms, and imports
    ``sklearn.callback``), which fell on whichever candidate ran first."""
    for func in candidates.values():
        func()
    times = {name: [] for name in candidates}
    cpu = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, func in candidates.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            func()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return times, cpu


def _peak_mb(func):
    """Peak MB allocated (tracemalloc) while ``func`` runs."""
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _single_thread(func):
    def run():
        with threadpool_limits(limits=1, user_api="blas"):
            func()

    return run


def _pca_cases(data, X, l2, l1):
    """PCA(5) with δ > 0 ("PCA(5)", the row of the earlier tables), pure ε with the default
    ``l1_norm="auto"`` (a private L1 clip) and pure ε with a public ``l1_norm``."""
    return [
        (
            name,
            data,
            X,
            lambda kw=kw: PCA(5, epsilon=1.0, data_norm=l2, **kw).fit(X),
            lambda: SkPCA(5, svd_solver="covariance_eigh").fit(X),
        )
        for name, kw in (
            ("PCA(5)", {"delta": 1e-5}),
            ('PCA(5), ε, l1_norm="auto"', {}),
            ("PCA(5), ε, public l1_norm", {"l1_norm": l1}),
        )
    ]


def _cases(X_adult, y_adult, X_big, y_big, only=None):
    """(name, data name, X, dpsk fit, scikit-learn fit) of every slow path (``only``: a
    tuple of prefixes, the estimators whose name starts with one)."""
    row_l1 = float(np.abs(X_adult).sum(axis=1).max())
    row_l2 = float(np.linalg.norm(X_adult, axis=1).max())
    cases = [
        (
            "MultinomialNB",
            "Adult",
            X_adult,
            lambda: MultinomialNB(epsilon=1.0, data_norm=row_l1, classes=CLASSES).fit(X_adult, y_adult),
            lambda: SkMultinomialNB().fit(X_adult, y_adult),
        ),
        *_pca_cases("Adult", X_adult, row_l2, row_l1),
    ]
    big = f"{X_big.shape[0]:.0e} × 20"
    counts_big = np.abs(X_big)  # MultinomialNB needs non-negative features
    big_l1 = float(counts_big.sum(axis=1).max())
    big_l2 = float(np.linalg.norm(X_big, axis=1).max())
    cases += [
        (
            "MultinomialNB",
            f"|{big}|",
            counts_big,
            lambda: MultinomialNB(epsilon=1.0, data_norm=big_l1, classes=CLASSES).fit(counts_big, y_big),
            lambda: SkMultinomialNB().fit(counts_big, y_big),
        ),
        *_pca_cases(big, X_big, big_l2, big_l1),
    ]
    if only and not "LogisticRegression".startswith(only):  # its cases fit once to set scikit-learn's C
        return cases
    for data, X, y in (("Adult", X_adult, y_adult), (big, X_big, y_big)):
        norm = float(np.linalg.norm(X, axis=1).max())
        ours = LogisticRegression(epsilon=1.0, data_norm=norm, classes=CLASSES).fit(X, y)
        theirs = SkLogisticRegression(
            solver="newton-cholesky", C=float(ours.C_), max_iter=int(ours.n_iter_.max()), tol=0
        )
        cases.append(
            (
                "LogisticRegression",
                data,
                X,
                lambda X=X, y=y, norm=norm: LogisticRegression(epsilon=1.0, data_norm=norm, classes=CLASSES).fit(X, y),
                lambda X=X, y=y, theirs=theirs: theirs.fit(X, y),
            )
        )
    return cases


def run(quick=False):
    """Time and memory rows (``quick``: 10⁵ rows for the synthetic case, 3 repeats)."""
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0]
    X_adult, y_adult = load_adult(return_X_y=True)
    rng = np.random.default_rng(0)
    n_big = 10**5 if quick else 10**6
    X_big = rng.standard_normal((n_big, 20))
    y_big = (X_big @ rng.standard_normal(20) + rng.logistic(size=n_big) > 0).astype(int)
    repeats = 3 if quick else 5
    time_rows, memory_rows = [], []
    # e.g. "PCA,MultinomialNB": the rows whose estimator starts so
    only = tuple(os.environ.get("DPSK_BENCH_ONLY", "").split(",")) if os.environ.get("DPSK_BENCH_ONLY") else None
    for name, data, X, ours, theirs in _cases(X_adult, y_adult, X_big, y_big, only):
        if only and not name.startswith(only):
            continue
        times, cpu = _times({"dpsk": ours, "sk": theirs, "sk1": _single_thread(theirs)}, repeats)
        best = {key: min(values) for key, values in times.items()}
        time_rows.append(
            {
                "estimator": name,
                "data": data,
                "dpsk (s)": best["dpsk"],
                "scikit-learn (s)": best["sk"],
                "scikit-learn, 1 BLAS thread (s)": best["sk1"],
                "dpsk / scikit-learn": best["dpsk"] / best["sk"],
                "dpsk / scikit-learn 1 thread": best["dpsk"] / best["sk1"],
                "dpsk spread": max(times["dpsk"]) / best["dpsk"],
                "scikit-learn spread": max(times["sk"]) / best["sk"],
                "dpsk CPU spread": max(cpu["dpsk"]) / min(cpu["dpsk"]),
                "scikit-learn 1 thread CPU spread": max(cpu["sk1"]) / min(cpu["sk1"]),
                "load (1 min)": load,
            }
        )
        ours_mb, theirs_mb = _peak_mb(ours), _peak_mb(theirs)
        memory_rows.append(
            {
                "estimator": name,
                "data": data,
                "X (MB)": X.nbytes / 2**20,
                "dpsk peak extra (MB)": ours_mb,
                "scikit-learn peak extra (MB)": theirs_mb,
                "dpsk / scikit-learn": ours_mb / theirs_mb,
            }
        )
    return [(f"Fit time, best of {repeats} interleaved", time_rows), ("Peak memory of one fit", memory_rows)]


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
