# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What every benchmark shares (``bench_*.py``; ``run.py`` runs them all).

* :func:`best_seconds` — interleaved best-of-N wall times, so that ratios measured in one
  run stay meaningful on a busy machine;
* :func:`run_diffprivlib` — runs a snippet in diffprivlib's own environment (diffprivlib
  0.6.6 does not import with scikit-learn >= 1.9; ``DPL_PYTHON``, by default
  ``benchmarks/.venv-diffprivlib/bin/python``, overridable by ``$DPSK_DIFFPRIVLIB_PYTHON``; ``run.py``
  creates that environment when it is missing) on arrays saved to a temporary folder,
  with a time limit, and returns what the snippet prints as JSON;
* :func:`markdown`, :func:`sections` — rows (dicts) as markdown tables;
* :func:`accuracy_record`, :func:`fit_time_record` — the rows ``run.py`` reads for its
  headline tables and plots: any benchmark may return them;
* :func:`main` — the command line of a benchmark (``--quick``).

The protocol of a benchmark module: ``run(quick=False)`` returns either a list of rows
(one table) or a list of ``(title, rows)`` pairs (one table each); rows are dicts. An
optional ``plot(result, folder)`` writes PNG files and returns their paths.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

#: The interpreter of diffprivlib's environment; None (``run.py --no-diffprivlib``) skips it.
DPL_PYTHON = os.environ.get(
    "DPSK_DIFFPRIVLIB_PYTHON", str(Path(__file__).resolve().parent / ".venv-diffprivlib" / "bin" / "python")
)
#: Where results (tables, plots) go by default.
RESULTS = Path(__file__).resolve().parent / "results"


def best_seconds(candidates, repeats):
    """Best wall time (s) of each callable, interleaved over ``repeats`` rounds.

    Each round times every candidate once, so that load from other processes affects
    numerator and denominator of a ratio alike.
    """
    best = {name: math.inf for name in candidates}
    for _ in range(repeats):
        for name, func in candidates.items():
            start = time.perf_counter()
            func()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def diffprivlib_available():
    return DPL_PYTHON is not None and os.path.exists(DPL_PYTHON)


def run_diffprivlib(code, arrays, timeout=600):
    """Run ``code`` with diffprivlib; ``arrays`` are loaded as variables; returns its JSON output.

    The snippet sees ``np``, ``json``, ``time``, the arrays by name (0-d arrays for
    scalars) and must print its result as JSON on its last line (earlier lines may report
    progress, one JSON value each, flushed). Returns None if diffprivlib is unavailable,
    ``{"timeout": timeout, "partial": [...]}`` (the progress lines printed in time) if the
    snippet did not finish, and ``{"error": last line of stderr}`` if it failed.
    """
    if not diffprivlib_available():
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "data.npz")
        np.savez(path, **arrays)
        prelude = (
            "import json, time, warnings\nimport numpy as np\nwarnings.filterwarnings('ignore')\n"
            f"_data = np.load({path!r}, allow_pickle=False)\n"
            + "".join(f"{name} = _data[{name!r}]\n" for name in arrays)
        )
        try:
            done = subprocess.run(
                [DPL_PYTHON, "-c", prelude + textwrap.dedent(code)],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=True,
            )
        except subprocess.TimeoutExpired as exc:
            printed = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return {"timeout": timeout, "partial": [json.loads(line) for line in printed.split("\n") if line.strip()]}
        except subprocess.CalledProcessError as exc:
            return {"error": exc.stderr.strip().splitlines()[-1] if exc.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def diffprivlib_cell(result, describe):
    """A table cell for a :func:`run_diffprivlib` result: ``describe(result)`` when it ran."""
    if result is None:
        return "unavailable"
    if isinstance(result, dict) and "timeout" in result:
        return f"not finished in {result['timeout']:g} s"
    if isinstance(result, dict) and "error" in result:
        return f"error: {result['error']}"
    return describe(result)


def mean_std(values):
    values = np.asarray(values, dtype=np.float64)
    return f"{values.mean():.3f} ± {values.std():.3f}"


def accuracy_record(dataset, model, library, epsilon, scores, **extra):
    """A row of test accuracy over seeds; ``run.py`` plots and tabulates these.

    ``library``: "dpsk", "dpsk, δ=1e-6" (any variant starting with the library's name),
    "diffprivlib", or "scikit-learn (non-private)" with ``epsilon=math.inf``;
    ``model="majority class"`` is the constant predictor's rate.
    """
    scores = np.asarray(scores, dtype=np.float64)
    return {
        "dataset": dataset,
        "model": model,
        "library": library,
        "epsilon": float(epsilon),
        "accuracy": float(scores.mean()),
        "std": float(scores.std()),
        "seeds": int(scores.size),
        **extra,
    }


def fit_time_record(estimator, n, d, dpsk, sklearn, dpl=None, **extra):
    """A row of fit times (seconds, or a string such as "not finished in 300 s")."""

    def ratio(a, b):
        return a / b if isinstance(a, float) and isinstance(b, float) else ""

    return {
        "estimator": estimator,
        "n": int(n),
        "d": int(d),
        "dpsk (s)": dpsk,
        "scikit-learn (s)": sklearn,
        "diffprivlib (s)": dpl if dpl is not None else "n/a",
        "dpsk / scikit-learn": ratio(dpsk, sklearn),
        "dpsk / diffprivlib": ratio(dpsk, dpl),
        **extra,
    }


def fmt(value):
    """A table cell: floats to 4 significant digits, infinity as ∞."""
    if isinstance(value, (float, np.floating)):
        if math.isinf(value):
            return "∞"
        return f"{value:.4g}"
    return str(value)


def markdown(rows):
    """A markdown table of dicts sharing their keys (missing cells are blank; "|" escaped)."""
    if not rows:
        return "(no rows)"
    columns = list(dict.fromkeys(key for row in rows for key in row))

    def line(cells):
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"

    lines = [line(columns), "|" + "---|" * len(columns)]
    lines += [line(fmt(row.get(c, "")) for c in columns) for row in rows]
    return "\n".join(lines)


def sections(result):
    """``run()``'s result as a list of ``(title or None, rows)``."""
    if result and isinstance(result[0], tuple):
        return [(title, list(rows)) for title, rows in result]
    return [(None, list(result))]


def render(result):
    """``run()``'s result as markdown: one table per section, titled by ``###``."""
    parts = []
    for title, rows in sections(result):
        parts.append((f"### {title}\n\n" if title else "") + markdown(rows))
    return "\n\n".join(parts)


def main(run, description):
    """Command line of a benchmark: print ``run(quick=...)`` as markdown (and plot it if it can)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="fewer seeds and rows (a minute or so)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder of the plots, if the benchmark draws any")
    args = parser.parse_args()
    result = run(quick=args.quick)
    print(render(result))
    plot = getattr(sys.modules[run.__module__], "plot", None)
    if plot is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for path in plot(result, args.out):
            print(f"wrote {path}")
