# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of dpsk's noise kernels against numpy and diffprivlib (prints a markdown table).

Run from the repository root after building the kernels::

    python benchmarks/bench_noise.py            # n = 1e6 and 1e7
    python benchmarks/bench_noise.py --quick    # n = 1e5 and 1e6, fewer repeats

or as part of ``python benchmarks/run.py``.

Every ratio is computed within this run: the candidates of one comparison are timed
interleaved, and each reported time is the best of several repeats, so that a noisy
(shared) machine affects numerator and denominator alike.

Rows
----
* dpsk ``add_laplace`` / ``add_gaussian`` (in place, x += noise) vs the vectorised numpy
  expression doing the same work (``x += rng.laplace(0, b, n)``;
  ``rng.standard_normal(out=tmp); tmp *= sigma; x += tmp``) on the same PCG64 Generator.
* The same dpsk kernels on ``Generator(SecureBitGenerator())`` vs PCG64, and numpy's own
  ``standard_normal`` on both bit generators.
* The floating-point-safe lattice kernels vs the textbook ones (on the same generator).
* diffprivlib 0.6.6's per-value ``Laplace(epsilon=1, sensitivity=1).randomise`` and
  ``GaussianAnalytic(epsilon=1, delta=1e-5, sensitivity=1).randomise``, run in their own
  environment (``_family_common.run_diffprivlib``) at a smaller n; the
  per-value rate is measured there and *extrapolated* linearly to the table's n.

Targets: the default path at numpy speed or better, >= 100x faster than diffprivlib,
the secure generator and the safe Laplace each within 3x of the default path.
"""

import numpy as np
from _family_common import best_seconds, main, run_diffprivlib

from dpsk._core._noise import (
    add_gaussian,
    add_gaussian_lattice,
    add_laplace,
    add_laplace_lattice,
    lattice_granularity,
)
from dpsk._core._random import SecureBitGenerator

DIFFPRIVLIB_N = 100_000
DPL_RANDOMISE = """
from diffprivlib.mechanisms import GaussianAnalytic, Laplace
n = int(n)
out = {}
for name, mech in (("laplace", Laplace(epsilon=1.0, sensitivity=1.0)),
                   ("gaussian", GaussianAnalytic(epsilon=1.0, delta=1e-5, sensitivity=1.0))):
    values = [0.0] * n
    start = time.perf_counter()
    noisy = [mech.randomise(v) for v in values]
    out[name] = (time.perf_counter() - start) / n
print(json.dumps(out))
"""


def groups_at(n):
    """{comparison: {candidate: (function, baseline candidate)}} on n values."""
    x = np.zeros(n)
    tmp = np.empty(n)
    pcg = np.random.Generator(np.random.PCG64(0))
    secure = np.random.Generator(SecureBitGenerator())
    b, sigma = 1.0, 3.7306
    g_lap = lattice_granularity(b)
    g_gauss = lattice_granularity(sigma, "gaussian")

    def numpy_laplace():
        np.add(x, pcg.laplace(0.0, b, n), out=x)

    def numpy_gaussian():
        pcg.standard_normal(out=tmp)
        np.multiply(tmp, sigma, out=tmp)
        np.add(x, tmp, out=x)

    lap_text, gau_text = "dpsk add_laplace (textbook)", "dpsk add_gaussian (textbook)"
    return {
        "Laplace, x += noise (PCG64)": {
            "numpy rng.laplace": (numpy_laplace, "numpy rng.laplace"),
            "dpsk add_laplace": (lambda: add_laplace(x, b, pcg), "numpy rng.laplace"),
        },
        "Gaussian, x += noise (PCG64)": {
            "numpy standard_normal(out=)": (numpy_gaussian, "numpy standard_normal(out=)"),
            "dpsk add_gaussian": (lambda: add_gaussian(x, sigma, pcg), "numpy standard_normal(out=)"),
        },
        "secure vs default generator": {
            "dpsk add_laplace, PCG64": (lambda: add_laplace(x, b, pcg), "dpsk add_laplace, PCG64"),
            "dpsk add_laplace, secure": (lambda: add_laplace(x, b, secure), "dpsk add_laplace, PCG64"),
            "dpsk add_gaussian, PCG64": (lambda: add_gaussian(x, sigma, pcg), "dpsk add_gaussian, PCG64"),
            "dpsk add_gaussian, secure": (lambda: add_gaussian(x, sigma, secure), "dpsk add_gaussian, PCG64"),
            "numpy standard_normal, PCG64": (lambda: pcg.standard_normal(out=tmp), "numpy standard_normal, PCG64"),
            "numpy standard_normal, secure": (lambda: secure.standard_normal(out=tmp), "numpy standard_normal, PCG64"),
        },
        "floating-point-safe vs textbook": {
            lap_text: (lambda: add_laplace(x, b, pcg), lap_text),
            "dpsk add_laplace_lattice": (lambda: add_laplace_lattice(x, b, g_lap, pcg), lap_text),
            lap_text + ", secure": (lambda: add_laplace(x, b, secure), lap_text + ", secure"),
            "dpsk add_laplace_lattice, secure": (
                lambda: add_laplace_lattice(x, b, g_lap, secure),
                lap_text + ", secure",
            ),
            gau_text: (lambda: add_gaussian(x, sigma, pcg), gau_text),
            "dpsk add_gaussian_lattice": (lambda: add_gaussian_lattice(x, sigma, g_gauss, pcg), gau_text),
        },
    }


def row(group, n, name, seconds, base_seconds, base):
    return {
        "comparison": group,
        "n": f"{n:.0e}",
        "candidate": name,
        "time (ms)": seconds * 1e3,
        "ns / value": seconds / n * 1e9,
        "M values / s": n / seconds / 1e6,
        "time / baseline time": seconds / base_seconds,
        "baseline": base,
    }


def run(quick=False):
    """Rows of the noise benchmark (``quick``: n = 1e5 and 1e6, fewer repeats)."""
    sizes = [10**5, 10**6] if quick else [10**6, 10**7]
    dpl = run_diffprivlib(DPL_RANDOMISE, {"n": np.array(DIFFPRIVLIB_N // 10 if quick else DIFFPRIVLIB_N)})
    rows = []
    for n in sizes:
        repeats = 3 if n >= 10**7 else 7
        ours = {}
        for group, candidates in groups_at(n).items():
            times = best_seconds({name: func for name, (func, _) in candidates.items()}, repeats)
            for name, (_, base) in candidates.items():
                rows.append(row(group, n, name, times[name], times[base], base))
            ours.update(times)
        if isinstance(dpl, dict) and "laplace" in dpl:
            for kind in ("laplace", "gaussian"):
                label = f"dpsk add_{kind}"
                rows.append(
                    row(
                        "diffprivlib per-value randomise (extrapolated)",
                        n,
                        f"diffprivlib {kind} (measured per value)",
                        dpl[kind] * n,
                        ours[label],
                        label,
                    )
                )
    if not (isinstance(dpl, dict) and "laplace" in dpl):
        rows.append({"comparison": f"diffprivlib per-value randomise: {dpl}"})
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
