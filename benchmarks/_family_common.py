# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of the naive Bayes, PCA, k-means and scaler benchmarks (bench_naive_bayes.py, ...).

* :func:`best_seconds` — interleaved best-of-N wall times (``bench_clip.best_times``, in
  seconds), so that ratios measured in one run stay meaningful on a busy machine;
* :func:`run_diffprivlib` — runs a snippet in diffprivlib's own environment
  (``/work/.venv-dpl``, diffprivlib 0.6.6 with scikit-learn 1.7.2) on arrays saved to a
  temporary folder, with a time limit, and returns what the snippet prints as JSON;
* :func:`markdown` — rows (dicts) as a markdown table; :func:`main` — the command line of
  every benchmark (``--quick``).
"""

import argparse
import json
import os
import subprocess
import tempfile
import textwrap

import numpy as np

from bench_clip import best_times

DPL_PYTHON = os.environ.get("DPSK_DIFFPRIVLIB_PYTHON", "/work/.venv-dpl/bin/python")


def best_seconds(candidates, repeats):
    """Best wall time (s) of each callable, interleaved over ``repeats`` rounds."""
    return {name: ms / 1e3 for name, ms in best_times(candidates, repeats).items()}


def run_diffprivlib(code, arrays, timeout):
    """Run ``code`` with diffprivlib; ``arrays`` are loaded as variables; returns its JSON output.

    The snippet sees ``np``, the arrays by name and must print its result as JSON on its
    last line (earlier lines may report progress, one JSON value each, flushed). Returns
    None if diffprivlib is unavailable, and ``{"timeout": timeout, "partial": [...]}`` (the
    progress lines printed in time) if the snippet did not finish.
    """
    if not os.path.exists(DPL_PYTHON):
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
                capture_output=True, text=True, timeout=timeout, check=True,
            )
        except subprocess.TimeoutExpired as exc:
            printed = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return {"timeout": timeout, "partial": [json.loads(line) for line in printed.split("\n") if line.strip()]}
        except subprocess.CalledProcessError as exc:
            return {"error": exc.stderr.strip().splitlines()[-1] if exc.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def mean_std(values):
    values = np.asarray(values, dtype=np.float64)
    return f"{values.mean():.3f} ± {values.std():.3f}"


def markdown(rows):
    """A markdown table of dicts sharing their keys (missing cells are blank)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def main(run, description):
    """Command line of a benchmark: print ``run(quick=...)`` as a markdown table."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="fewer seeds and rows (under a minute)")
    args = parser.parse_args()
    print(markdown(run(quick=args.quick)))
