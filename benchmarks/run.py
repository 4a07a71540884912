# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Run every benchmark in one go: one results document (markdown), plots and raw results.

Usage, from the repository root with dpsk installed::

    python benchmarks/run.py                        # everything, full sizes (long)
    python benchmarks/run.py --quick --out /tmp/b   # smoke test: small n, 2 seeds (minutes)
    python benchmarks/run.py --only accuracy,fit_time  # re-run two, keep the others' results
    python benchmarks/run.py --no-diffprivlib       # dpsk and scikit-learn only
    python benchmarks/run.py --quick --progress     # a progress bar over the benchmarks

Every ``benchmarks/bench_*.py`` with a ``run(quick)`` function is found and run in this
process (see ``_family_common`` for the protocol). diffprivlib 0.6.6 does not import with
scikit-learn >= 1.9, so it runs in a separate environment: the interpreter at
``$DPSK_DIFFPRIVLIB_PYTHON`` (default ``benchmarks/.venv-diffprivlib/bin/python``, or
``--diffprivlib-python``); when it is missing, this script creates a virtual environment
there and installs ``diffprivlib==0.6.6`` and ``scikit-learn<1.8`` into it, saying so.

Written to ``--out`` (default ``benchmarks/results``): ``README.md`` (the header with the
machine, versions and command, the headline ratios, then a section per benchmark with its
tables and how long it took), ``results.json`` (every row, unformatted) and PNG plots
(accuracy vs ε per dataset, fit time vs n, and each benchmark's own).

``--only`` refreshes part of a document: the benchmarks it names replace theirs in the
``results.json`` already in ``--out`` (a full run's or a quick run's, as this one is), the
others are kept as they were, and the document is rebuilt from all of them. Every
benchmark's row says when it ran, on which commit and at what load, so a merged document
never passes an old figure off as new. ``--fresh`` discards the old results instead.
"""

import argparse
import datetime
import importlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import _family_common as common  # noqa: E402

DPL_REQUIREMENTS = ["diffprivlib==0.6.6", "scikit-learn<1.8"]
DPL_PROBE = (
    "import json, diffprivlib, numpy, sklearn; "
    "print(json.dumps({'diffprivlib': diffprivlib.__version__, 'scikit-learn': sklearn.__version__, "
    "'numpy': numpy.__version__}))"
)
NON_PRIVATE = "scikit-learn (non-private)"


# --- diffprivlib's environment -------------------------------------------------------------


def _probe(python):
    """diffprivlib's versions in that interpreter, or the reason it does not import."""
    try:
        done = subprocess.run([python, "-c", DPL_PROBE], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(done.stdout.strip().splitlines()[-1])


def diffprivlib_environment(python, create=True, log=print):
    """Find (or create) diffprivlib's environment: ``(python or None, versions or reason)``."""
    import sklearn

    why = (
        f"diffprivlib 0.6.6 does not import with scikit-learn >= 1.9 (this run uses "
        f"{sklearn.__version__}), so it runs in a separate environment"
    )
    venv = Path(python).parent.parent
    if os.path.exists(python):
        info = _probe(python)
        if isinstance(info, dict):
            log(
                f"diffprivlib: using {python} (diffprivlib {info['diffprivlib']}, scikit-learn "
                f"{info['scikit-learn']}): {why}."
            )
            return python, info
        if not create or not (venv / "pyvenv.cfg").exists():
            return None, f"{python} does not import diffprivlib ({info})"
        log(
            f"diffprivlib: {python} does not import it ({info}); {why}: installing "
            f"{' '.join(DPL_REQUIREMENTS)} into {venv}."
        )
    else:
        if not create:
            return None, f"{python} not found"
        log(
            f"diffprivlib: {python} not found; {why}: creating a virtual environment at {venv} "
            f"and installing {' '.join(DPL_REQUIREMENTS)} into it (a minute or two)."
        )
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            return None, f"could not create {venv}: {exc}"
    try:
        subprocess.run([python, "-m", "pip", "install", "--quiet", *DPL_REQUIREMENTS], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        return None, f"could not install {' '.join(DPL_REQUIREMENTS)} into {venv}: {exc}"
    info = _probe(python)
    if not isinstance(info, dict):
        return None, f"{python} still does not import diffprivlib ({info})"
    log(f"diffprivlib: installed diffprivlib {info['diffprivlib']} with scikit-learn {info['scikit-learn']} in {venv}.")
    return python, info


# --- the machine ---------------------------------------------------------------------------


def _first_line(path, key):
    try:
        with open(path) as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith(key)), None)
    except OSError:
        return None


def _git(*args):
    try:
        done = subprocess.run(["git", "-C", str(HERE), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine(command):
    """What the results depend on: hardware, load, versions, the command."""
    import numpy
    import scipy
    import sklearn

    import dpsk

    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    memory = _first_line("/proc/meminfo", "MemTotal")
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    try:
        from threadpoolctl import threadpool_info

        blas = (
            ", ".join(
                f"{p.get('internal_api')} {p.get('version')} ({p.get('num_threads')} threads)"
                for p in threadpool_info()
                if p.get("user_api") == "blas"
            )
            or "unknown"
        )
    except ImportError:
        blas = "unknown"
    return {
        "CPU": _first_line("/proc/cpuinfo", "model name") or platform.processor() or platform.machine(),
        "cores": f"{cores} (usable by this process: {usable})",
        "memory": f"{int(memory.split()[0]) / 2**20:.1f} GiB" if memory else "unknown",
        "system": platform.platform(),
        "BLAS": blas,
        "Python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "dpsk": dpsk.__version__ + (f" (git {commit}{', with local changes' if dirty else ''})" if commit else ""),
        "command": command,
    }


# --- running -------------------------------------------------------------------------------


def discover(only=None):
    """``[(name, module or the import error's traceback)]`` of every bench_*.py with ``run``."""
    wanted = None if not only else {name.removeprefix("bench_").removesuffix(".py") for name in only}
    found = []
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem
        if wanted is not None and name.removeprefix("bench_") not in wanted:
            continue
        try:
            module = importlib.import_module(name)
        except Exception:  # a benchmark that cannot be imported is reported, not fatal
            found.append((name, traceback.format_exc()))
            continue
        if callable(getattr(module, "run", None)):
            found.append((name, module))
        else:
            print(f"skipping {name}: no run(quick) function")
    if wanted is not None:
        missing = wanted - {name.removeprefix("bench_") for name, _ in found}
        if missing:
            raise SystemExit(f"no benchmark named {', '.join(sorted(missing))} (with a run function) in {HERE}")
    return found


def run_one(name, module, quick, out):
    """Run one benchmark: ``{"seconds", "sections"/"error", "plots", "doc"}``."""
    record = {"doc": (getattr(module, "__doc__", None) or "").strip() if not isinstance(module, str) else ""}
    start = time.perf_counter()
    if isinstance(module, str):
        record["error"] = module
    else:
        try:
            result = module.run(quick=quick)
            record["sections"] = common.sections(result)
            plot = getattr(module, "plot", None)
            record["plots"] = [Path(p).name for p in plot(result, out)] if plot is not None else []
        except Exception:
            record["error"] = traceback.format_exc()
    record["seconds"] = time.perf_counter() - start
    return record


def run_stamp(started, meta, load):
    """When, on what code and at what load a benchmark ran (kept with its record)."""
    return {"date": f"{started:%Y-%m-%d %H:%M}", "dpsk": meta.get("dpsk", "unknown"), "load": load}


def previous_results(path, quick):
    """The records of an earlier run in ``path`` (results.json) to merge with, or ``{}``.

    A record written before the stamps existed gets its run's date, version and load from
    that run's header. Records of a quick run never mix with a full run's, or the reverse.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    meta = raw.get("meta", {})
    if bool(meta.get("quick")) != bool(quick):
        print(f"not merging with {path}: it holds a {'quick' if meta.get('quick') else 'full'} run")
        return {}
    stamp = {
        "date": str(meta.get("date", "unknown"))[:16].replace("T", " "),
        "dpsk": meta.get("dpsk", "unknown"),
        "load": meta.get("load average (1, 5, 15 min)", "unknown"),
    }
    records = raw.get("benchmarks", {})
    for record in records.values():
        record.setdefault("run", stamp)
    return records


def run_all(benchmarks, quick, out, show_progress=False):
    """Run ``benchmarks`` (from :func:`discover`) in order: ``{name: record}``.

    With ``show_progress``, dpsk's progress bar (tqdm when installed, a few plain lines on
    standard error otherwise) counts the finished benchmarks.
    """
    items = enumerate(benchmarks, 1)
    if show_progress:
        from dpsk.utils._progress import progress

        items = progress(items, len(benchmarks), "benchmarks", unit="benchmark")
    results = {}
    for i, (name, module) in items:
        print(f"[{i}/{len(benchmarks)}] {name} ...", flush=True)
        results[name] = record = run_one(name, module, quick, out)
        status = "FAILED" if "error" in record else "done"
        print(f"[{i}/{len(benchmarks)}] {name} {status} in {_duration(record['seconds'])}", flush=True)
        if "error" in record:
            print(record["error"], file=sys.stderr)
    return results


# --- headline tables and plots -------------------------------------------------------------


def _rows(results, keys):
    """Every row of every benchmark that has all of ``keys``."""
    return [
        row
        for record in results.values()
        for _, rows in record.get("sections", [])
        for row in rows
        if all(key in row for key in keys)
    ]


ACCURACY_KEYS = ("dataset", "model", "library", "epsilon", "accuracy", "std")
FIT_KEYS = ("estimator", "n", "dpsk (s)", "scikit-learn (s)", "diffprivlib (s)")


def _n(n):
    exponent = math.log10(n)
    return f"1e{exponent:.0f}" if exponent.is_integer() else f"{n:,}"


def fit_time_headline(results):
    rows = _rows(results, FIT_KEYS)
    if not rows:
        return ""
    sizes = sorted({row["n"] for row in rows})
    table = {}
    for row in rows:
        line = table.setdefault(row["estimator"], {"estimator": row["estimator"]})
        dpl = row["dpsk / diffprivlib"] if row["dpsk / diffprivlib"] != "" else row["diffprivlib (s)"]
        line[f"n={_n(row['n'])}: / scikit-learn"] = row["dpsk / scikit-learn"]
        line[f"n={_n(row['n'])}: / diffprivlib"] = dpl
    for line in table.values():  # same column order everywhere
        for n in sizes:
            line.setdefault(f"n={_n(n)}: / scikit-learn", "")
            line.setdefault(f"n={_n(n)}: / diffprivlib", "")
    return (
        "### Fit time: dpsk's time divided by scikit-learn's and by diffprivlib's\n\n"
        "Below 1: dpsk is faster. Settings (iterations, solvers) and absolute times are in the "
        'fit-time section below; "n/a": diffprivlib has no such estimator.\n\n' + common.markdown(list(table.values()))
    )


def accuracy_headline(results):
    """Per dataset: a line per (classifier, private library), a column per ε, then the baseline."""
    rows = _rows(results, ACCURACY_KEYS)
    parts = []
    for dataset in dict.fromkeys(row["dataset"] for row in rows):
        part = [row for row in rows if row["dataset"] == dataset]
        private = [row for row in part if row["epsilon"] != math.inf]
        columns = [f"ε={common.fmt(e)}" for e in sorted({row["epsilon"] for row in private})]
        baseline = {row["model"]: f"{row['accuracy']:.3f}" for row in part if row["library"] == NON_PRIVATE}
        table = {}
        for row in private:
            line = table.setdefault(
                (row["model"], row["library"]),
                {"model": row["model"], "library": row["library"], **dict.fromkeys(columns, "")},
            )
            line[f"ε={common.fmt(row['epsilon'])}"] = f"{row['accuracy']:.3f} ± {row['std']:.3f}"
            line[NON_PRIVATE] = baseline.get(row["model"], "")
        models = list(dict.fromkeys(row["model"] for row in part))
        ordered = sorted(table.values(), key=lambda line: models.index(line["model"]))  # stable: libraries in order
        majority = [f"{row['accuracy']:.3f}" for row in part if row["model"] == "majority class"]
        seeds = max((row["seeds"] for row in private), default=0)
        parts.append(
            f"### Test accuracy on {dataset} (mean ± std over {seeds} seeds"
            + (f"; majority class: {majority[0]}" if majority else "")
            + ")\n\n"
            + common.markdown(ordered)
        )
    return "\n\n".join(parts)


def panels(titles, draw, suptitle, path, columns):
    """A figure of one panel per title, ``draw(ax, title)`` each; returns [path], or [] without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return []
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(columns, len(titles))
    lines = math.ceil(len(titles) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.3 * columns, 3.3 * lines), squeeze=False)
    for ax, title in zip(axes.flat, titles):
        draw(ax, title)
        ax.set_title(title)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(titles) :]:
        ax.set_visible(False)
    fig.suptitle(suptitle)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def plot_accuracy(results, out):
    """accuracy_vs_epsilon_<dataset>.png: one panel per classifier, every library and the baselines."""
    rows = _rows(results, ACCURACY_KEYS)
    paths = []
    for dataset in dict.fromkeys(row["dataset"] for row in rows):
        part = [row for row in rows if row["dataset"] == dataset]
        models = [m for m in dict.fromkeys(row["model"] for row in part) if m != "majority class"]
        majority = [row["accuracy"] for row in part if row["model"] == "majority class"]
        colours = {
            library: f"C{i}"
            for i, library in enumerate(dict.fromkeys(row["library"] for row in part if row["epsilon"] != math.inf))
        }

        def draw(ax, model, part=part, majority=majority, colours=colours):
            mine = [row for row in part if row["model"] == model]
            for library in dict.fromkeys(row["library"] for row in mine):
                points = sorted(
                    (row["epsilon"], row["accuracy"], row["std"]) for row in mine if row["library"] == library
                )
                if points[0][0] == math.inf:
                    ax.axhline(points[0][1], color="black", linestyle="--", label=library)
                    continue
                eps, acc, std = zip(*points)
                ax.errorbar(eps, acc, yerr=std, marker="o", capsize=3, label=library, color=colours[library])
            if majority:
                ax.axhline(majority[0], color="grey", linestyle=":", label="majority class")
            ax.set(xscale="log", xlabel="ε", ylabel="test accuracy")

        if models:
            path = out / f"accuracy_vs_epsilon_{dataset.lower().replace(' ', '_')}.png"
            paths += panels(models, draw, f"{dataset}: test accuracy vs ε (mean ± std over seeds)", path, 3)
    return paths


def plot_fit_time(results, out):
    """fit_time_vs_n.png: one panel per estimator, the three libraries on log-log axes."""
    rows = _rows(results, FIT_KEYS)
    estimators = list(dict.fromkeys(row["estimator"] for row in rows))

    def draw(ax, estimator):
        mine = sorted((row for row in rows if row["estimator"] == estimator), key=lambda row: row["n"])
        for key, label in (
            ("dpsk (s)", "dpsk"),
            ("scikit-learn (s)", "scikit-learn"),
            ("diffprivlib (s)", "diffprivlib"),
        ):
            points = [(row["n"], row[key]) for row in mine if isinstance(row[key], float)]
            if points:
                ax.plot(*zip(*points), marker="o", label=label)
        ax.set(xscale="log", yscale="log", xlabel="n (rows, d = 20)", ylabel="fit time (s)")

    if not estimators:
        return []
    return panels(estimators, draw, "Fit time vs n (best of several runs)", out / "fit_time_vs_n.png", 4)


# --- the document --------------------------------------------------------------------------


def _duration(seconds):
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def document(meta, dpl, results, plots, quick, started, seconds, merged=()):
    lines = ["# dpsk benchmark results", ""]
    lines.append(f"Written by `{meta['command']}` on {started:%Y-%m-%d %H:%M} UTC; the run took {_duration(seconds)}.")
    if merged:
        lines += [
            "",
            f"**Merged:** this run refreshed {', '.join(f'`{name}`' for name in merged)}; the other "
            "benchmarks are kept from earlier runs, each with the date, commit and load it ran at "
            "(the table below and each section's first line).",
        ]
    if quick:
        lines += ["", "**Quick run** (`--quick`: small n, 2 seeds): a smoke test, not the reference figures."]
    lines += [
        "",
        "Every ratio is measured within this run: the candidates of one comparison are timed "
        "interleaved (best of several runs) so that load from other processes affects both alike. "
        "The load average below says how busy the machine was.",
        "",
    ]
    lines += ["## Machine and versions", "", "| | |", "|---|---|"]
    lines += [f"| {key} | {value if key != 'command' else '`' + value + '`'} |" for key, value in meta.items()]
    lines.append(f"| diffprivlib | {dpl} |")
    lines += ["", "## Benchmarks", ""]
    contents = [
        {
            "benchmark": name,
            "what": record["doc"].splitlines()[0] if record["doc"] else "",
            "took": _duration(record["seconds"]),
            "run (UTC)": record["run"]["date"] if "run" in record else "",
            "status": "failed" if "error" in record else "ok",
        }
        for name, record in results.items()
    ]
    lines += [common.markdown(contents), ""]
    headline = [part for part in (fit_time_headline(results), accuracy_headline(results)) if part]
    if headline or plots:
        lines += ["## Headline", ""]
        lines += ["\n\n".join(headline), ""]
        lines += [f"![{path.stem}]({path.name})" for path in plots]
        lines.append("")
    for name, record in results.items():
        lines += [f"## {name} (took {_duration(record['seconds'])})", ""]
        if "run" in record:
            run = record["run"]
            lines += [f"Run {run['date']} UTC on dpsk {run['dpsk']}; load average {run['load']}.", ""]
        if record["doc"]:
            lines += [record["doc"], ""]
        if "error" in record:
            lines += ["**Failed:**", "", "```", record["error"].rstrip(), "```", ""]
            continue
        for title, rows in record["sections"]:
            if title:
                lines += [f"### {title}", ""]
            lines += [common.markdown(rows), ""]
        lines += [f"![{Path(p).stem}]({p})" for p in record.get("plots", [])]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _jsonable(value):
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke-test sizes: small n, 2 seeds (minutes)")
    parser.add_argument("--only", help="comma-separated benchmark names (e.g. accuracy,fit_time or bench_noise)")
    parser.add_argument("--out", type=Path, default=common.RESULTS, help="output folder (default benchmarks/results)")
    parser.add_argument("--no-diffprivlib", action="store_true", help="skip diffprivlib (no environment is created)")
    parser.add_argument(
        "--progress",
        "--verbose",
        action="store_true",
        help="a progress bar over the benchmarks (tqdm when installed, plain lines otherwise)",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="with --only: drop the other benchmarks' earlier results instead of merging",
    )
    parser.add_argument(
        "--diffprivlib-python",
        default=common.DPL_PYTHON,
        help="interpreter of diffprivlib's environment (default $DPSK_DIFFPRIVLIB_PYTHON or "
        "benchmarks/.venv-diffprivlib/bin/python); created if missing",
    )
    args = parser.parse_args(argv)
    command = " ".join(
        shlex.quote(a) for a in ["python", os.path.relpath(__file__), *(sys.argv[1:] if argv is None else argv)]
    )
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    benchmarks = discover(args.only.split(",") if args.only else None)

    if args.no_diffprivlib:
        common.DPL_PYTHON, dpl = None, "skipped (--no-diffprivlib)"
        print("diffprivlib: skipped (--no-diffprivlib)")
    else:
        python, info = diffprivlib_environment(args.diffprivlib_python)
        common.DPL_PYTHON = python
        if python is None:
            print(f"diffprivlib: unavailable: {info}; its columns say so")
            dpl = f"unavailable: {info}"
        else:
            dpl = (
                f"{info['diffprivlib']} with scikit-learn {info['scikit-learn']} and numpy {info['numpy']}, "
                f"in its own environment (`{python}`): diffprivlib 0.6.6 does not import with scikit-learn >= 1.9"
            )

    meta = machine(command)
    load_start = os.getloadavg() if hasattr(os, "getloadavg") else None
    results = run_all(benchmarks, args.quick, args.out, show_progress=args.progress)
    load = "unknown"
    if load_start is not None:
        end = os.getloadavg()
        load = (
            f"{', '.join(f'{x:.2f}' for x in load_start)} at the start; {', '.join(f'{x:.2f}' for x in end)} at the end"
        )
        meta["load average (1, 5, 15 min)"] = load
    for record in results.values():
        record["run"] = run_stamp(started, meta, load)
    merged = ()
    if args.only and not args.fresh:
        earlier = previous_results(args.out / "results.json", args.quick)
        if set(earlier) - set(results):
            merged = tuple(results)
            results = dict(sorted((earlier | results).items()))
    meta["command"] = meta.pop("command")
    plots = plot_accuracy(results, args.out) + plot_fit_time(results, args.out)
    seconds = time.perf_counter() - clock
    text = document(meta, dpl, results, plots, args.quick, started, seconds, merged)
    (args.out / "README.md").write_text(text, encoding="utf-8")
    raw = {
        "meta": meta | {"diffprivlib": dpl, "quick": args.quick, "date": started.isoformat(), "seconds": seconds},
        "benchmarks": results,
    }
    (args.out / "results.json").write_text(
        json.dumps(raw, indent=1, default=_jsonable, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"wrote {args.out / 'README.md'}, {args.out / 'results.json'} and {len(plots)} plots in {_duration(seconds)}")
    return 1 if any("error" in record for record in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
