# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of dpsk's noise kernels against numpy and diffprivlib (prints a markdown table).

Run from the repository root after building the kernels::

    python benchmarks/bench_noise.py            # n = 1e6 and 1e7
    python benchmarks/bench_noise.py --quick    # n = 1e5 and 1e6, fewer repeats

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
  environment (``/work/.venv-dpl``, or ``$DPSK_DIFFPRIVLIB_PYTHON``) at a smaller n; the
  per-value rate is measured there and *extrapolated* linearly to the table's n.

Targets: the default path at numpy speed or better, >= 100x faster than diffprivlib,
the secure generator and the safe Laplace each within 3x of the default path.
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np

from dpsk._core._noise import (
    add_gaussian,
    add_gaussian_lattice,
    add_laplace,
    add_laplace_lattice,
    lattice_granularity,
)
from dpsk._core._random import SecureBitGenerator

DIFFPRIVLIB_PYTHON = os.environ.get("DPSK_DIFFPRIVLIB_PYTHON", "/work/.venv-dpl/bin/python")
DIFFPRIVLIB_N = 100_000
DIFFPRIVLIB_SCRIPT = """
import sys, time
from diffprivlib.mechanisms import GaussianAnalytic, Laplace
n = int(sys.argv[1])
for name, mech in (("laplace", Laplace(epsilon=1.0, sensitivity=1.0)),
                   ("gaussian", GaussianAnalytic(epsilon=1.0, delta=1e-5, sensitivity=1.0))):
    values = [0.0] * n
    start = time.perf_counter()
    out = [mech.randomise(v) for v in values]
    print(name, (time.perf_counter() - start) / n)
"""


def best_times(candidates, repeats):
    """Best-of-``repeats`` seconds per candidate, timing the candidates interleaved."""
    best = {name: float("inf") for name in candidates}
    for _ in range(repeats):
        for name, run in candidates.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def diffprivlib_seconds_per_value():
    """Per-value seconds of diffprivlib's randomise, measured in its own environment."""
    if not os.path.exists(DIFFPRIVLIB_PYTHON):
        return None
    result = subprocess.run(
        [DIFFPRIVLIB_PYTHON, "-c", DIFFPRIVLIB_SCRIPT, str(DIFFPRIVLIB_N)],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        print(f"diffprivlib run failed:\n{result.stderr}", file=sys.stderr)
        return None
    return {line.split()[0]: float(line.split()[1]) for line in result.stdout.splitlines()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args()
    sizes = [10**5, 10**6] if args.quick else [10**6, 10**7]

    dpl = diffprivlib_seconds_per_value()
    rows = []  # (comparison, n, candidate, seconds, baseline name)

    for n in sizes:
        repeats = 3 if n >= 10**7 else 7
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

        # comparison -> {candidate: (function, baseline candidate)}
        lap_text, gau_text = "dpsk add_laplace (textbook)", "dpsk add_gaussian (textbook)"
        groups = {
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
                    lambda: add_laplace_lattice(x, b, g_lap, secure), lap_text + ", secure"),
                gau_text: (lambda: add_gaussian(x, sigma, pcg), gau_text),
                "dpsk add_gaussian_lattice": (lambda: add_gaussian_lattice(x, sigma, g_gauss, pcg), gau_text),
            },
        }
        for group, candidates in groups.items():
            times = best_times({name: run for name, (run, _) in candidates.items()}, repeats)
            for name, (_, base) in candidates.items():
                rows.append((group, n, name, times[name], times[base], base))
        if dpl is not None:
            lap = next(r[3] for r in rows if r[1] == n and r[2] == "dpsk add_laplace")
            gau = next(r[3] for r in rows if r[1] == n and r[2] == "dpsk add_gaussian")
            for kind, ours, label in (("laplace", lap, "dpsk add_laplace"), ("gaussian", gau, "dpsk add_gaussian")):
                extrapolated = dpl[kind] * n
                rows.append(("diffprivlib per-value randomise (extrapolated)", n,
                             f"diffprivlib {kind} (measured at n={DIFFPRIVLIB_N})", extrapolated, ours, label))

    print("| comparison | n | candidate | time (ms) | ns / value | time / baseline time | baseline |")
    print("|---|---|---|---|---|---|---|")
    for group, n, name, seconds, base_seconds, base in rows:
        ratio = seconds / base_seconds
        print(f"| {group} | {n:.0e} | {name} | {seconds * 1e3:.1f} | {seconds / n * 1e9:.1f} "
              f"| {ratio:.2f} | {base} |")
    if dpl is None:
        print("\n(diffprivlib rows skipped: no diffprivlib environment found)")


if __name__ == "__main__":
    main()
