# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dask: fit time of LinearRegression and StandardScaler on a chunked array.

A float64 array of n × 20 (n = 4·10⁶, 610 MB; ``--quick``: 2·10⁵) in row chunks of
2.5·10⁵ rows (``--quick``: 2.5·10⁴), made in memory once, then fitted

* in memory by dpsk (the numpy array: the reference),
* on the Dask array by dpsk with Dask's default threaded scheduler (same statistics and,
  with the same Generator, the same model bitwise: checked here too),
* by dask-ml's non-private ``StandardScaler`` / ``LinearRegression`` (solver "lbfgs")
  on the same Dask array, when dask-ml is installed (optional: not a dependency of
  dpsk; "unavailable" otherwise).

Best of 3 interleaved runs (``--quick``: 2). The Dask rows time the whole fit: the
per-chunk exact kernels, the tree reduction and the one noisy release on the client.

Run: ``python benchmarks/bench_dask.py [--quick]``.
"""

import numpy as np
from _family_common import best_seconds, main

from dpsk.linear_model import LinearRegression
from dpsk.preprocessing import StandardScaler

D = 20


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, D))
    y = X @ rng.uniform(-1.0, 1.0, D) + rng.normal(scale=0.1, size=n)
    return X, y


def _dask_ml():
    try:
        import dask_ml.linear_model
        import dask_ml.preprocessing
    except ImportError:
        return None
    return dask_ml


def run(quick=False):
    """Rows of fit times (seconds) and their ratios; ``quick``: a small array."""
    import dask
    import dask.array as da

    n, chunk, repeats = (200_000, 25_000, 2) if quick else (4_000_000, 250_000, 3)
    X, y = _data(n)
    Xd, yd = da.from_array(X, chunks=(chunk, D)).persist(), da.from_array(y, chunks=chunk).persist()
    dml = _dask_ml()
    models = {
        "StandardScaler": (
            lambda: StandardScaler(bounds=(-1.0, 1.0), random_state=np.random.PCG64(0)),
            (X,),
            (Xd,),
            None if dml is None else lambda: dml.preprocessing.StandardScaler().fit(Xd),
        ),
        "LinearRegression": (
            lambda: LinearRegression(bounds_X=(-1.0, 1.0), bounds_y=(-25.0, 25.0), random_state=np.random.PCG64(0)),
            (X, y),
            (Xd, yd),
            None if dml is None else lambda: dml.linear_model.LinearRegression(solver="lbfgs").fit(Xd, yd),
        ),
    }
    rows = []
    with dask.config.set(scheduler="threads"):
        for name, (make, memory, chunked, theirs) in models.items():
            same = make().fit(*memory), make().fit(*chunked)
            attribute = "mean_" if name == "StandardScaler" else "coef_"
            identical = np.array_equal(getattr(same[0], attribute), getattr(same[1], attribute))
            candidates = {
                "memory": lambda make=make, data=memory: make().fit(*data),
                "dask": lambda make=make, data=chunked: make().fit(*data),
            }
            if theirs is not None:
                candidates["dask-ml"] = theirs
            best = best_seconds(candidates, repeats)
            rows.append({**timing_row(name, n, len(Xd.chunks[0]), best), "same model bitwise": identical})
    return rows + logistic_rows(quick)


# -- LogisticRegression: the distributed Newton (dpsk.dask._newton) ------------------------


def timing_row(name, n, n_chunks, best):
    """The columns every row of this benchmark has, from ``best_seconds``' times."""
    return {
        "estimator": name,
        "n": n,
        "d": D,
        "chunks": n_chunks,
        "dpsk in memory (s)": best["memory"],
        "dpsk on Dask (s)": best["dask"],
        "Dask / in memory": best["dask"] / best["memory"],
        "rows/s on Dask": n / best["dask"],
        "dask-ml, non-private (s)": best.get("dask-ml", "unavailable"),
        "dpsk / dask-ml": best["dask"] / best["dask-ml"] if "dask-ml" in best else "",
    }


def _labels(X, seed=1):
    rng = np.random.default_rng(seed)
    return (X @ rng.uniform(-1.0, 1.0, D) + rng.logistic(size=X.shape[0]) > 0).astype(np.int64)


def logistic_rows(quick=False):
    """LogisticRegression in memory, on Dask (the certified distributed Newton) and dask-ml's
    non-private Newton solver (``solver="newton"``, its default tolerance) on the same array.

    dpsk runs Newton to its certified tolerance (``tol=1e-6``: it cannot release an
    uncertified iterate); the Newton steps of each fit are reported. The Dask fit's
    coefficients are compared with the in-memory fit's (same Generator): they differ by
    the solvers' stopping points only.
    """
    import dask
    import dask.array as da

    n, chunk, repeats = (200_000, 25_000, 2) if quick else (4_000_000, 250_000, 2)
    X, _ = _data(n)
    y = _labels(X)
    Xd, yd = da.from_array(X, chunks=(chunk, D)).persist(), da.from_array(y, chunks=chunk).persist()
    dml = _dask_ml()

    def make():
        from dpsk.linear_model import LogisticRegression

        return LogisticRegression(
            epsilon=1.0, data_norm=float(np.sqrt(D)), classes=[0, 1], random_state=np.random.PCG64(0)
        )

    def theirs():
        return dml.linear_model.LogisticRegression(solver="newton").fit(Xd, yd)

    with dask.config.set(scheduler="threads"):
        memory, on_dask = make().fit(X, y), make().fit(Xd, yd)
        candidates = {"memory": lambda: make().fit(X, y), "dask": lambda: make().fit(Xd, yd)}
        if dml is not None:
            candidates["dask-ml"] = theirs
        best = best_seconds(candidates, repeats)
    return [
        {
            **timing_row("LogisticRegression", n, len(Xd.chunks[0]), best),
            "same model bitwise": bool(np.array_equal(memory.coef_, on_dask.coef_)),
            "max |coef difference|": float(np.max(np.abs(memory.coef_ - on_dask.coef_))),
            "Newton steps (memory, Dask)": f"{memory.n_iter_[0]}, {on_dask.n_iter_[0]}",
        }
    ]


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
