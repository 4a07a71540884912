# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private medians: dpsk's default 2**32-bin grid, its 4096-bin grid and diffprivlib's median.

diffprivlib is version 0.6.6 (``tools.median``).

Data on [0, 1] (public bounds (0, 1)): uniform, and a skewed Beta(0.5, 8) (median about
0.03, most values packed near 0). n in {10², 10⁴, 10⁶}, ε in {0.1, 1}. RMSE against
numpy's median over seeds (the same seeds for every method), and the best wall time of
one call. diffprivlib (Smith 2011: the exponential mechanism over the intervals between
sorted values, weighted by length, then a uniform point; continuous, inverse-CDF
sampling in floating point) runs in its own environment through a subprocess.
"""

import time

import numpy as np
from _family_common import main, run_diffprivlib

from dpsk import stats

DISTRIBUTIONS = {
    "uniform": lambda rng, n: rng.uniform(0, 1, n),
    "beta(0.5, 8)": lambda rng, n: rng.beta(0.5, 8, n),
}

DPL_MEDIAN = """
from diffprivlib import tools
out = []
for i in range(int(count)):
    x, eps = globals()[f"x{i}"], float(epsilons[i])
    values, times = [], []
    for s in range(int(seeds[i])):
        t = time.perf_counter(); values.append(float(tools.median(x, epsilon=eps, bounds=(0, 1), random_state=s)))
        times.append(time.perf_counter() - t)
    out.append({"values": values, "time": min(times)})
print(json.dumps(out))
"""


def _cases(quick):
    sizes = (10**2, 10**4, 10**5) if quick else (10**2, 10**4, 10**6)
    for name, draw in DISTRIBUTIONS.items():
        for n in sizes:
            x = draw(np.random.default_rng(0), n)
            for eps in (0.1, 1.0):
                seeds = (20 if quick else 50) if n >= 10**6 or (quick and n >= 10**5) else (50 if quick else 300)
                yield name, n, eps, seeds, x


def _rmse(values, truth):
    return float(np.sqrt(np.mean((np.asarray(values, dtype=float) - truth) ** 2)))


def _dpsk(x, eps, bins, seeds):
    values, times = [], []
    for s in range(seeds):
        start = time.perf_counter()
        values.append(float(stats.median(x, epsilon=eps, bounds=(0, 1), bins=bins, random_state=s)))
        times.append(time.perf_counter() - start)
    return values, min(times)


def _diffprivlib(cases):
    """diffprivlib's values and best time for every case (one subprocess), or None."""
    arrays = {f"x{i}": x for i, (_, _, _, _, x) in enumerate(cases)}
    arrays.update(
        count=np.array(len(cases)), epsilons=np.array([c[2] for c in cases]), seeds=np.array([c[3] for c in cases])
    )
    result = run_diffprivlib(DPL_MEDIAN, arrays, timeout=3600)
    return result if isinstance(result, list) else None


def run(quick=False):
    """One row per (distribution, n, ε): RMSE and time of each method."""
    cases = list(_cases(quick))
    dpl = _diffprivlib(cases)
    rows = []
    for i, (name, n, eps, seeds, x) in enumerate(cases):
        truth = float(np.median(x))
        fine, fine_t = _dpsk(x, eps, None, seeds)
        coarse, coarse_t = _dpsk(x, eps, 4096, seeds)
        row = {
            "data": name,
            "n": n,
            "eps": eps,
            "seeds": seeds,
            "RMSE fine (2^32)": _rmse(fine, truth),
            "RMSE 4096 bins": _rmse(coarse, truth),
        }
        if dpl is not None:
            row["RMSE diffprivlib"] = _rmse(dpl[i]["values"], truth)
        row["ms fine"] = 1e3 * fine_t
        row["ms 4096"] = 1e3 * coarse_t
        if dpl is not None:
            row["ms diffprivlib"] = 1e3 * dpl[i]["time"]
        rows.append(row)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
