# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""PCA: variance captured by the private top-5 subspace against scikit-learn and diffprivlib.

* Captured variance at ε = 1: trace(V Cov Vᵀ) of the fitted top-5 axes V, as a fraction of
  the non-private top-5's, on ``make_classification(100000, 20)`` (rows bounded by the
  stated ``data_norm = 8``: the generator draws unit-variance Gaussian features, whose
  row norms stay below 8 with overwhelming probability) and on Adult (``load_adult``: the
  public bound √13 on row norms). dpsk's Analyze Gauss (δ = 1e-5) and symmetric Laplace
  (pure ε; calibrated to a private L1 clip of the rows, ``l1_norm="auto"``, since issue 19),
  and diffprivlib's PCA (pure ε, same ``data_norm``, ``bounds`` of the box
  [-8, 8] or [0, 1]) in the same run, 10 seeds. diffprivlib's PCA samples with a
  rejection sampler whose time grows with n·ε; it gets ``dpl_timeout`` seconds (300, or
  20 with ``--quick``, start-up included) per dataset and is reported as not finished
  beyond.

Fit times (target: at most 1.2× scikit-learn's ``PCA(5)`` and under one second at
10⁶ × 20) are in ``bench_fit_time.py``.

Run: ``python benchmarks/bench_decomposition.py [--quick]``.
"""

import numpy as np
from _family_common import main, mean_std, run_diffprivlib
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA as SkPCA

from dpsk.datasets import load_adult
from dpsk.decomposition import PCA

DPL_PCA = """
from diffprivlib.models import PCA
def captured(V):
    return float(np.trace(V @ cov @ V.T) / best)
out = []
start = time.perf_counter()
for seed in seeds:
    pca = PCA(5, epsilon=1.0, data_norm=float(data_norm), bounds=(lower, upper), random_state=int(seed)).fit(X)
    out.append(captured(pca.components_))
    print(json.dumps(out[-1]), flush=True)   # progress, in case the time limit stops us
print(json.dumps({"captured": out, "seconds_per_fit": (time.perf_counter() - start) / len(seeds)}))
"""


def captured_rows(name, X, data_norm, lower, upper, seeds, dpl_timeout):
    cov = np.cov(X.T)
    best = np.sort(np.linalg.eigvalsh(cov))[::-1][:5].sum()

    def captured(components):
        return float(np.trace(components @ cov @ components.T) / best)

    gauss = [
        captured(PCA(5, epsilon=1.0, delta=1e-5, data_norm=data_norm, random_state=s).fit(X).components_) for s in seeds
    ]
    laplace = [captured(PCA(5, epsilon=1.0, data_norm=data_norm, random_state=s).fit(X).components_) for s in seeds]
    arrays = dict(
        X=X,
        cov=cov,
        best=np.array(best),
        seeds=np.array(seeds),
        data_norm=np.array(data_norm),
        lower=np.full(X.shape[1], lower),
        upper=np.full(X.shape[1], upper),
    )
    dpl = run_diffprivlib(DPL_PCA, arrays, timeout=dpl_timeout)
    if dpl is None:
        dpl_cell = "unavailable"
    elif "timeout" in dpl:
        done = dpl["partial"]
        dpl_cell = f"{len(done)} of {len(seeds)} fits in {dpl_timeout:g} s" + (f": {mean_std(done)}" if done else "")
    elif "error" in dpl:
        dpl_cell = f"error: {dpl['error']}"
    else:
        dpl_cell = f"{mean_std(dpl['captured'])} ({dpl['seconds_per_fit']:.1f} s/fit)"
    sklearn = captured(SkPCA(5).fit(X).components_)
    return [
        {
            "benchmark": f"PCA top-5 captured variance, {name}",
            "epsilon": 1.0,
            "dpsk (ε, δ=1e-5)": mean_std(gauss),
            "dpsk (ε)": mean_std(laplace),
            "diffprivlib (ε)": dpl_cell,
            "scikit-learn": f"{sklearn:.3f}",
        },
    ]


def run(quick=False, dpl_timeout=None):
    """Rows of the PCA benchmark (``quick``: 2 seeds, 10⁴ rows)."""
    seeds = list(range(2 if quick else 10))
    n = 10_000 if quick else 100_000
    dpl_timeout = dpl_timeout or (20 if quick else 300)
    X, _ = make_classification(n, 20, random_state=0)
    rows = captured_rows(f"make_classification({n}, 20)", X, 8.0, -8.0, 8.0, seeds, dpl_timeout)
    adult = load_adult()
    rows += captured_rows("Adult", adult.data, adult.data_norm, 0.0, 1.0, seeds, dpl_timeout)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
