# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""k-means: inertia against scikit-learn and diffprivlib.

* Inertia at ε ∈ {0.1, 1} on ``make_blobs(100000, centers=8, n_features=10)`` (generator
  seed 0), with the stated bounds [-15, 15] on every feature (the generator's centre box
  [-10, 10] plus five unit standard deviations), as a ratio to scikit-learn's
  ``KMeans(8)`` (k-means++, its default single run), 10 seeds; diffprivlib's KMeans
  with the same bounds in the same run. Target at ε = 1: within 1.2× of scikit-learn.

Fit times (same number of Lloyd iterations; target: no slower than scikit-learn) are in
``bench_fit_time.py``.

Run: ``python benchmarks/bench_cluster.py [--quick]``.
"""

import numpy as np
from _family_common import main, mean_std, run_diffprivlib
from sklearn.cluster import KMeans as SkKMeans
from sklearn.datasets import make_blobs

from dpsk.cluster import KMeans

DPL_KMEANS = """
from diffprivlib.models import KMeans
def inertia(C):
    d2 = (X**2).sum(1)[:, None] - 2 * X @ C.T + (C**2).sum(1)
    return float(np.maximum(d2, 0).min(1).sum())
out = [
    inertia(KMeans(8, epsilon=float(epsilon), bounds=(-15.0, 15.0), random_state=int(s)).fit(X).cluster_centers_)
    for s in seeds
]
print(json.dumps(out))
"""


def inertia(X, centres):
    d2 = (X**2).sum(axis=1)[:, None] - 2.0 * X @ centres.T + (centres**2).sum(axis=1)
    return float(np.maximum(d2, 0.0).min(axis=1).sum())


def inertia_rows(n, seeds, epsilons):
    X, _ = make_blobs(n, centers=8, n_features=10, random_state=0)
    reference = np.mean([SkKMeans(8, random_state=s).fit(X).inertia_ for s in seeds])
    rows = []
    for epsilon in epsilons:
        ours = [
            inertia(X, KMeans(8, epsilon=epsilon, bounds=(-15.0, 15.0), random_state=s).fit(X).cluster_centers_)
            / reference
            for s in seeds
        ]
        dpl = run_diffprivlib(DPL_KMEANS, dict(X=X, seeds=np.array(seeds), epsilon=np.array(epsilon)), timeout=600)
        rows.append(
            {
                "benchmark": f"KMeans inertia / scikit-learn's, make_blobs({n}, 8 centres, 10 features)",
                "epsilon": epsilon,
                "dpsk": mean_std(ours),
                "diffprivlib": mean_std(np.asarray(dpl) / reference) if isinstance(dpl, list) else dpl,
                "scikit-learn": "1 (k-means++, 1 run)",
                "target": "<= 1.2" if epsilon == 1.0 else "",
                "met": ("yes" if np.mean(ours) <= 1.2 else "no") if epsilon == 1.0 else "",
            }
        )
    return rows


def run(quick=False):
    """Rows of the k-means benchmark (``quick``: 2 seeds, ε = 1 only)."""
    seeds = list(range(2 if quick else 10))
    return inertia_rows(100_000, seeds, [1.0] if quick else [0.1, 1.0])


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
