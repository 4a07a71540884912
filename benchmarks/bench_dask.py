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

HistGradientBoostingClassifier (``boosting_rows``): 4·10⁵ × 20 rows (``--quick``: 2·10⁴)
in 8 chunks on a ``distributed.LocalCluster`` of 2 worker processes, against in memory.

Run: ``python benchmarks/bench_dask.py [--quick]``.

Out of core (issue 18): ``python benchmarks/bench_dask.py --rows 1e8 [--reference 1e7]
[--workers 1,2] [--only GaussianNB,PCA] [--dask-ml]`` fits GaussianNB, LinearRegression, PCA,
StandardScaler, ``stats.mean`` and ``stats.quantile`` on an n × 20 float64 array that
``dask.array.random`` generates chunk by chunk where it is used (never materialised:
10⁸ rows would be 16 GB), on a ``distributed.LocalCluster`` of 1 and 2 worker processes
of one thread each: the time of each fit, the time of one pass that only generates the
data, the peak resident memory of a worker, and the throughput against the in-memory fit
of the same estimator at ``--reference`` rows. ``--dask-ml`` adds dask-ml's non-private
StandardScaler, PCA (tsqr) and LinearRegression (L-BFGS) on the same lazy array.
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
    return rows + logistic_rows(quick) + boosting_rows(quick)


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


# -- HistGradientBoostingClassifier on a 2-worker LocalCluster (dpsk.dask._boosting) ----------


def boosting_rows(quick=False, n=None):
    """HistGradientBoostingClassifier (20 rounds, quantile bins) in memory and on Dask with a
    ``distributed.LocalCluster`` of 2 worker processes of one thread each (8 chunks), the
    same Generator: the model must be the same bitwise; and on the same array with Dask's
    threaded scheduler in this process (no per-graph latency). The Dask fit makes a validating
    pass, two passes per level of quantile edges for all the features (2 × 5 here) and two per
    round, each a graph of a few tasks per chunk: on small data its time is the
    scheduler's per-graph overhead."""
    import dask
    import dask.array as da
    import distributed

    from dpsk.ensemble import HistGradientBoostingClassifier

    n = n or (20_000 if quick else 400_000)
    X, _ = _data(n)
    y = _labels(X)

    def make():
        return HistGradientBoostingClassifier(
            max_iter=20, bounds=(-1.0, 1.0), classes=[0, 1], random_state=np.random.PCG64(0)
        )

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            Xd, yd = da.from_array(X, chunks=(n // 8, D)).persist(), da.from_array(y, chunks=n // 8).persist()
            memory, on_dask = make().fit(X, y), make().fit(Xd, yd)

            local = da.from_array(X, chunks=(n // 8, D)), da.from_array(y, chunks=n // 8)  # not on the cluster

            def threaded():
                with dask.config.set(scheduler="threads"):  # in this process: no per-graph latency
                    return make().fit(*local)

            candidates = {"memory": lambda: make().fit(X, y), "dask": lambda: make().fit(Xd, yd), "threads": threaded}
            best = best_seconds(candidates, 2)
    same = all(np.array_equal(getattr(memory, a), getattr(on_dask, a)) for a in ("_feature", "_mask", "_values"))
    row = timing_row("HistGradientBoostingClassifier (2-worker LocalCluster)", n, 8, best)
    return [{**row, "same model bitwise": same, "on Dask, threaded scheduler (s)": best["threads"]}]


# -- out of core: a lazily generated array on a distributed LocalCluster ------------------

#: Columns of the out-of-core array, its public bounds, and rows per chunk (16 MB).
OOC_D, OOC_BOUNDS, OOC_CHUNK = 20, (0.0, 1.0), 100_000


def _ooc_data(n, chunk=OOC_CHUNK, seed=0):
    """X uniform on [0, 1)^20 (``dask.array.random``: each chunk made where it is used,
    never materialised), y = X·w + noise and labels (X₀ > ½), all lazy."""
    import dask.array as da

    state = da.random.RandomState(seed)
    X = state.random_sample((n, OOC_D), chunks=(chunk, OOC_D))
    w = np.linspace(-1.0, 1.0, OOC_D)
    y = X @ w + state.normal(scale=0.1, size=n, chunks=chunk)
    labels = (X[:, 0] > 0.5).astype(np.int64)
    return X, y, labels


def _ooc_fits():
    """(name, fit(X, y, labels)) of the out-of-core run: dpsk on whatever X is (numpy or Dask)."""
    from dpsk import stats
    from dpsk.decomposition import PCA
    from dpsk.naive_bayes import GaussianNB

    lo, hi = OOC_BOUNDS
    return [
        ("GaussianNB", lambda X, y, c: GaussianNB(bounds=OOC_BOUNDS, classes=[0, 1], random_state=0).fit(X, c)),
        (
            "LinearRegression",
            lambda X, y, c: LinearRegression(bounds_X=OOC_BOUNDS, bounds_y=(-12.0, 12.0), random_state=0).fit(X, y),
        ),
        ("PCA", lambda X, y, c: PCA(n_components=5, bounds=OOC_BOUNDS, random_state=0).fit(X)),
        ("StandardScaler", lambda X, y, c: StandardScaler(bounds=OOC_BOUNDS, random_state=0).fit(X)),
        ("stats.mean", lambda X, y, c: stats.mean(X, bounds=OOC_BOUNDS, axis=0, random_state=0)),
        ("stats.quantile", lambda X, y, c: stats.quantile(X[:, 0], 0.5, bounds=(lo, hi), random_state=0)),
    ]


def _ooc_dask_ml():
    """(name, fit(X, y, labels)) of dask-ml's non-private counterparts on the same lazy
    array (``--dask-ml``): their default solvers; each pass over X makes it again."""
    dml = _dask_ml()
    if dml is None:
        return []
    import dask_ml.decomposition

    return [
        ("dask-ml StandardScaler", lambda X, y, c: dml.preprocessing.StandardScaler().fit(X)),
        ("dask-ml PCA", lambda X, y, c: dask_ml.decomposition.PCA(n_components=5, svd_solver="tsqr").fit(X)),
        ("dask-ml LinearRegression", lambda X, y, c: dml.linear_model.LinearRegression(solver="lbfgs").fit(X, y)),
    ]


class _PeakMemory:
    """Peak resident memory of each worker process, sampled every ``interval`` seconds, and
    the CPU seconds the workers used meanwhile (``cpu``: less sensitive than wall time to
    the other jobs of a shared machine)."""

    def __init__(self, client, interval=0.25):
        import threading

        self.client, self.interval, self.peak, self.cpu = client, interval, {}, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    @staticmethod
    def _rss():
        import psutil

        return psutil.Process().memory_info().rss

    @staticmethod
    def _cpu():
        import psutil

        times = psutil.Process().cpu_times()
        return times.user + times.system

    def _cpu_total(self):
        return sum(self.client.run(self._cpu).values())

    def _poll(self):
        while not self._stop.is_set():
            for worker, rss in self.client.run(self._rss).items():
                self.peak[worker] = max(self.peak.get(worker, 0), rss)
            self._stop.wait(self.interval)

    def __enter__(self):
        self.peak = {worker: rss for worker, rss in self.client.run(self._rss).items()}
        self.cpu = -self._cpu_total()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.cpu += self._cpu_total()


def run_out_of_core(n_rows, n_reference, workers=(1, 2), names=None, dask_ml=False):
    """Rows: each fit on the lazy n_rows × 20 array on a LocalCluster of 1 and 2 worker
    processes (one thread each), against the in-memory fit at ``n_reference`` rows;
    ``dask_ml``: also dask-ml's non-private fits on the same array (no in-memory reference)."""
    import time

    from distributed import Client, LocalCluster

    fits = [(name, fit) for name, fit in _ooc_fits() if names is None or name in names]
    reference, reference_cpu = {}, {}
    if n_reference:
        X, y, labels = (a.compute() for a in _ooc_data(n_reference))
        for name, fit in fits:
            start, cpu = time.perf_counter(), time.process_time()
            fit(X, y, labels)
            reference[name] = time.perf_counter() - start
            reference_cpu[name] = time.process_time() - cpu
        del X, y, labels
    rows = []
    for n_workers in workers:
        with (
            LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            X, y, labels = _ooc_data(n_rows)
            small = _ooc_data(OOC_CHUNK * n_workers)
            theirs = _ooc_dask_ml() if dask_ml else []
            for _, fit in fits + theirs:  # warm-up: the workers import dpsk and Dask's modules once
                fit(*small)
            with _PeakMemory(client) as generating:  # one pass making the data: every fit's floor
                start = time.perf_counter()
                X.sum().compute()
                generate = time.perf_counter() - start
            for name, fit in fits + theirs:
                with _PeakMemory(client) as memory:
                    start = time.perf_counter()
                    fit(X, y, labels)
                    seconds = time.perf_counter() - start
                memory_rate = n_reference / reference[name] if name in reference else float("nan")
                memory_cpu_rate = n_reference / reference_cpu[name] if name in reference else float("nan")
                fit_cpu = memory.cpu - generating.cpu  # the workers' CPU beyond making X
                rows.append(
                    {
                        "estimator": name,
                        "rows": n_rows,
                        "workers": n_workers,
                        "chunks": len(X.chunks[0]),
                        "Dask fit (s)": seconds,
                        "generating X alone (s)": generate,
                        "rows/s on Dask": n_rows / seconds,
                        f"rows/s in memory ({n_reference:.0e} rows)": memory_rate,
                        "Dask / in-memory throughput": n_rows / seconds / memory_rate,
                        # the wall time minus the data-making pass (they overlap in the fit's
                        # tasks, so this is an estimate of the fit's own share, not a measurement)
                        "Dask (fit minus making X) / in-memory throughput": (
                            n_rows / (seconds - generate) / memory_rate if seconds > generate else float("nan")
                        ),
                        "workers' CPU (s)": memory.cpu,
                        "of which making X (s)": generating.cpu,
                        "rows per CPU-s beyond making X, Dask / in memory": (
                            n_rows / fit_cpu / memory_cpu_rate if fit_cpu > 0 else float("nan")
                        ),
                        "peak memory per worker (MB)": max(memory.peak.values()) / 2**20,
                    }
                )
                print(rows[-1], flush=True)
    return rows


def _out_of_core_main():
    import argparse
    import os

    from _family_common import render

    parser = argparse.ArgumentParser(description="Out-of-core dpsk fits on a lazily generated Dask array")
    parser.add_argument("--rows", type=float, required=True, help="rows of the lazy array (e.g. 1e7, 1e8)")
    parser.add_argument("--reference", type=float, default=1e7, help="rows of the in-memory reference (0: none)")
    parser.add_argument("--workers", default="1,2", help="worker processes to compare, e.g. 1,2")
    parser.add_argument("--only", default=None, help="comma-separated estimators (default: all)")
    parser.add_argument("--dask-ml", action="store_true", help="also dask-ml's non-private fits on the same array")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    result = run_out_of_core(
        int(args.rows),
        int(args.reference),
        tuple(int(w) for w in args.workers.split(",")),
        None if args.only is None else args.only.split(","),
        dask_ml=args.dask_ml,
    )
    print(render(result))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    import sys

    if any(arg.startswith("--rows") for arg in sys.argv[1:]):
        _out_of_core_main()
    else:
        main(run, __doc__.splitlines()[0])
