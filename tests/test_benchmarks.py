# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Smoke tests of benchmarks/ (seconds; no diffprivlib): every benchmark is found and
exposes run(quick), one tiny section runs, and the runner writes its document."""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def runner(monkeypatch):
    """benchmarks/run.py as a module, with diffprivlib switched off."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("dpsk_benchmarks_run", BENCHMARKS / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module.common, "DPL_PYTHON", None)
    return module


def test_every_benchmark_is_discovered_and_exposes_run(runner):
    found = dict(runner.discover())
    files = {path.stem for path in BENCHMARKS.glob("bench_*.py")}
    assert set(found) == files
    for name, module in found.items():
        assert not isinstance(module, str), f"{name} does not import:\n{module}"
        assert callable(module.run)


def test_only_selects_and_rejects_unknown_names(runner):
    assert [name for name, _ in runner.discover(["fit_time", "bench_noise"])] == ["bench_fit_time", "bench_noise"]
    with pytest.raises(SystemExit, match="no benchmark named nothing"):
        runner.discover(["nothing"])


def test_tiny_fit_time_section_without_diffprivlib(runner):
    import bench_fit_time

    rows = bench_fit_time.run(sizes=[300], names=["GaussianNB", "StandardScaler"])
    assert [row["estimator"] for row in rows] == ["GaussianNB", "StandardScaler"]
    for row in rows:
        assert row["n"] == 300 and row["d"] == 20
        assert row["dpsk (s)"] > 0 and row["scikit-learn (s)"] > 0 and row["dpsk seeded (s)"] > 0
        assert row["dpsk / scikit-learn"] == pytest.approx(row["dpsk (s)"] / row["scikit-learn (s)"])
        assert row["diffprivlib (s)"] == "unavailable" and row["dpsk / diffprivlib"] == ""


def test_forest_fit_time_scales_scikit_learn_from_fewer_trees(runner, monkeypatch):
    """scikit-learn's forest is timed on fewer trees at large n, scaled to 100, and the row says so."""
    import bench_fit_time
    import numpy as np

    _, theirs, note, scale = bench_fit_time.forest(np.empty((10**6, 20)), None)  # shape only: nothing is fitted
    assert theirs["scikit-learn"].n_estimators == 4 and scale == {"scikit-learn": 25.0}
    assert "timed on 4 trees, x 25" in note
    (row,) = bench_fit_time.run(sizes=[300], names=["RandomForestClassifier"])
    assert row["scikit-learn setting"] == "100 trees of depth 10, n_jobs=1"  # all 100 trees at small n
    assert row["dpsk (s)"] > 0 and row["scikit-learn (s)"] > 0
    # At 2e4 rows scikit-learn fits 50 trees: its time counts twice (a fake timer, nothing is fitted).
    monkeypatch.setattr(bench_fit_time, "best_seconds", lambda candidates, repeats: dict.fromkeys(candidates, 2.0))
    (row,) = bench_fit_time.run(sizes=[20_000], names=["RandomForestClassifier"])
    assert (row["dpsk (s)"], row["scikit-learn (s)"], row["dpsk / scikit-learn"]) == (2.0, 4.0, 0.5)
    assert row["scikit-learn setting"].endswith("timed on 50 trees, x 2")


def test_missing_diffprivlib_environment_is_not_created_when_told(runner, tmp_path):
    python, reason = runner.diffprivlib_environment(str(tmp_path / "venv" / "bin" / "python"), create=False)
    assert python is None and "not found" in reason
    assert not (tmp_path / "venv").exists()


def test_markdown_escapes_pipes_and_formats_numbers(runner):
    text = runner.common.markdown([{"a": "|x|", "b": 1 / 3}, {"b": math.inf, "c": 2}])
    assert text.splitlines() == ["| a | b | c |", "|---|---|---|", "| \\|x\\| | 0.3333 |  |", "|  | ∞ | 2 |"]


def test_document_headline_and_plots(runner, tmp_path):
    """A fake benchmark's records reach the headline tables, the plots and the document."""
    common = runner.common
    fake = type(sys)("bench_fake")
    fake.__doc__ = "A fake benchmark.\n\nMore words."
    fake.run = lambda quick: [
        (
            "accuracy",
            [
                common.accuracy_record("toy", "majority class", "-", math.inf, [0.6]),
                common.accuracy_record("toy", "Model", "scikit-learn (non-private)", math.inf, [0.9]),
                common.accuracy_record("toy", "Model", "dpsk", 1.0, [0.8, 0.82]),
                common.accuracy_record("toy", "Model", "diffprivlib", 1.0, [0.7, 0.72]),
            ],
        ),
        (
            "fit time",
            [
                common.fit_time_record("Model", n, 20, 0.1 * n / 1e4, 0.2 * n / 1e4, "unavailable")
                for n in (10**4, 10**5)
            ],
        ),
    ]
    broken = type(sys)("bench_broken")
    broken.run = lambda quick: 1 / 0
    results = {
        name: runner.run_one(name, module, True, tmp_path)
        for name, module in (("bench_fake", fake), ("bench_broken", broken))
    }
    assert "ZeroDivisionError" in results["bench_broken"]["error"]
    plots = runner.plot_accuracy(results, tmp_path) + runner.plot_fit_time(results, tmp_path)
    if importlib.util.find_spec("matplotlib") is not None:
        assert sorted(p.name for p in plots) == ["accuracy_vs_epsilon_toy.png", "fit_time_vs_n.png"]
        assert all(p.stat().st_size > 0 for p in plots)
    text = runner.document(
        {"CPU": "test", "command": "python benchmarks/run.py --quick"},
        "skipped",
        results,
        plots,
        True,
        runner.datetime.datetime(2024, 1, 1),
        12.0,
    )
    assert "**Quick run**" in text and "`python benchmarks/run.py --quick`" in text
    assert "| Model | 0.5 | unavailable | 0.5 | unavailable |" in text  # the ratios at both n
    assert "| Model | dpsk | 0.810 ± 0.010 | 0.900 |" in text and "majority class: 0.600" in text
    assert "## bench_broken" in text and "**Failed:**" in text


def _fake_benchmarks():
    fakes = []
    for name in ("bench_a", "bench_b", "bench_c"):
        fake = type(sys)(name)
        fake.run = lambda quick: []
        fakes.append((name, fake))
    return fakes


def test_progress_prints_plain_lines_without_tqdm(runner, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    results = runner.run_all(_fake_benchmarks(), True, tmp_path, show_progress=True)
    assert list(results) == ["bench_a", "bench_b", "bench_c"]
    err = capsys.readouterr().err
    assert "benchmarks: 1/3 benchmarks done" in err and "benchmarks: 3/3 benchmarks done" in err
    runner.run_all(_fake_benchmarks(), True, tmp_path)  # without --progress: no bar
    assert "benchmarks done" not in capsys.readouterr().err


def test_progress_uses_tqdm_when_installed(runner, tmp_path, monkeypatch):
    seen = {}

    def fake_tqdm(iterable, total, desc, unit, file):
        seen.update(total=total, desc=desc, unit=unit)
        return iterable

    module = type(sys)("tqdm.auto")
    module.tqdm = fake_tqdm
    monkeypatch.setitem(sys.modules, "tqdm", type(sys)("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    runner.run_all(_fake_benchmarks(), True, tmp_path, show_progress=True)
    assert seen == {"total": 3, "desc": "benchmarks", "unit": "benchmark"}


def test_progress_flag_reaches_the_runner(runner, tmp_path, monkeypatch):
    seen = {}

    def fake_run_all(benchmarks, quick, out, show_progress=False):
        seen["show_progress"] = show_progress
        return {}

    monkeypatch.setattr(runner, "run_all", fake_run_all)
    monkeypatch.setattr(runner, "discover", lambda only=None: [])
    monkeypatch.setattr(runner, "machine", lambda command: {"command": command})
    assert runner.main(["--no-diffprivlib", "--progress", "--out", str(tmp_path)]) == 0
    assert seen == {"show_progress": True}


def test_small_data_chooses_on_cross_validation_of_the_training_rows(runner, monkeypatch):
    """bench_small_data: candidates see only training rows until the choice is made, and the
    choice follows the cross-validated accuracy even when the test split would disagree."""
    import bench_small_data
    import numpy as np

    views, (y, y_test), *_ = bench_small_data.breast_cancer()
    train, test = views["linear"]
    training_rows = {row.tobytes() for row in train}
    labels = {row.tobytes(): label for row, label in zip(train, y)}
    seen = []

    class Memoriser:
        """Right on every training row, wrong on every other row (a test-split loser)."""

        def __init__(self, seed):
            self.seed = seed

        def fit(self, X, y):
            seen.extend(row.tobytes() for row in X)
            return self

        def score(self, X, y):
            seen.extend(row.tobytes() for row in X)
            predicted = np.array([labels.get(row.tobytes(), 1 - label) for row, label in zip(X, y)])
            return float(np.mean(predicted == y))

    class Majority(Memoriser):
        def score(self, X, y):
            seen.extend(row.tobytes() for row in X)
            return float(np.mean(y == 1))

    fakes = {"default (C=None)": ("linear", Majority), "memoriser": ("linear", Memoriser)}
    monkeypatch.setattr(bench_small_data, "candidates", lambda: fakes)
    (_, cv_rows), (_, test_rows) = bench_small_data.run(quick=True, adult=False)
    # The default before the change, then the 2 candidates: 2 seeds, 5 folds of fit + score each;
    # then two reference rows (the real default at other ε), which take no part in the choice.
    cross_validation = seen[: 3 * 2 * 5 * len(train)]
    assert set(cross_validation) == training_rows and [row["fits"] for row in cv_rows] == [10] * 5
    assert all(row["candidate (ε = 1 in total)"].startswith("reference, not a candidate") for row in cv_rows[3:])
    assert set(seen[len(cross_validation) :]) - training_rows  # only the test table reads the test split
    assert test_rows[-1]["model"].startswith("dpsk, memoriser (best by CV)")
    assert "mean 0.0000" in test_rows[-1]["test accuracy"]  # chosen although it fails the test split


def _run_only(runner, monkeypatch, out, name, *flags):
    """``run.py --only name`` with one fake benchmark that writes a row naming itself."""
    fake = type(sys)(name)
    fake.run = lambda quick: [{"model": name, "accuracy": 0.5}]
    monkeypatch.setattr(runner, "discover", lambda only=None: [(name, fake)])
    monkeypatch.setattr(runner, "machine", lambda command: {"dpsk": f"test ({name})", "command": command})
    assert runner.main(["--no-diffprivlib", "--only", name, "--out", str(out), *flags]) == 0
    return (out / "README.md").read_text(encoding="utf-8")


def test_only_merges_with_the_earlier_results_and_stamps_each(runner, tmp_path, monkeypatch):
    _run_only(runner, monkeypatch, tmp_path, "bench_a")
    text = _run_only(runner, monkeypatch, tmp_path, "bench_b")
    assert "## bench_a" in text and "## bench_b" in text  # bench_a kept from the first run
    assert "**Merged:** this run refreshed `bench_b`" in text
    assert "on dpsk test (bench_a)" in text and "on dpsk test (bench_b)" in text  # each row's own run
    text = _run_only(runner, monkeypatch, tmp_path, "bench_b", "--fresh")
    assert "## bench_a" not in text and "Merged" not in text
    _run_only(runner, monkeypatch, tmp_path, "bench_a")
    text = _run_only(runner, monkeypatch, tmp_path, "bench_b", "--quick")  # never mixes quick and full
    assert "## bench_a" not in text and "Merged" not in text
