# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Every script in examples/ runs, says what it should, and writes only where it is told.

Each example runs in a child interpreter (``run_python``) outside the source tree, so
that the installed dpsk is imported, with matplotlib's Agg backend and the figure
output directory ``DPSK_EXAMPLES_OUTPUT`` in a temporary folder. The gallery examples
(``plot_*.py``) also follow sphinx-gallery's format.
"""

import re
from pathlib import Path

import pytest

from dpsk.utils._testing import run_python

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py")) if EXAMPLES.is_dir() else []

# What each example must print (and, for the gallery, the figures it must save).
EXPECTED = {
    "quickstart.py": (
        [
            "Test accuracy",
            "non-private",
            "BudgetAccountant(epsilon=30.0): 24 spends",
            "composition: basic composition",
            "refused before reading the data",
            "Gradient boosting on the category codes",
        ],
        [],
    ),
    "plot_privacy_utility.py": (
        ["BudgetAccountant(): 4 spends", "LogisticRegression", "RandomForestClassifier"],
        ["privacy_utility.png"],
    ),
    "plot_pipeline_budget.py": (
        [
            "test accuracy",
            "classifier epsilon = 0.800",
            "costs found without data: {'columntransformer__numeric': 0.2, 'logisticregression': 0.8}",
            "refused: Fitting Pipeline would exceed the budget",
            "spends recorded by the refused fit: 0",
            "scikit-learn's pipeline refused: Spend by LogisticRegression",
            "spends recorded by scikit-learn's pipeline before the refusal: 1",
        ],
        ["pipeline_budget.png"],
    ),
    "plot_grid_search.py": (
        [
            "GridSearchCV: privacy cost, checked against the budget before the data is read:",
            "[part 6/6] END",
            "GridSearchCV: Fitting 3 folds for each of 6 candidates, totalling 18 fits",
            "number drawn is kept secret",
            "spent 9.5 of 12",
        ],
        ["grid_search_budget.png"],
    ),
    "plot_user_level_stats.py": (
        ["user-level mean", "threshold h =", "user-level mean: epsilon = 0.1 + 0.45 + 0.45", "64 spends"],
        ["user_level_stats.png"],
    ),
    "plot_feature_selection_sparse_vector.py": (
        [
            "selected features:",
            "BudgetAccountant(epsilon=1.0): 2 spends, epsilon spent 1",
            "AboveThreshold stopped at k =",
            # how many candidates run before the stop depends on the noisy answers, hence
            # on every numerical detail of the candidates' fits: the format, not the count
            " of 10",
        ],
        ["feature_selection_sparse_vector.png"],
    ),
    "plot_local_frequencies.py": (
        [
            "protocol chosen for d = 64, epsilon = 1.0: olh",
            "the user's own budget: spent 1 of 2",
            "apps within 2 standard deviations of the truth:",
            "mean screen time:",
        ],
        ["local_frequencies.png"],
    ),
    "plot_dpsgd_accuracy_vs_epsilon.py": (
        [
            "2000 training rows, 107 features",
            "SGDClassifier (DP-SGD)",
            "MLPClassifier (DP-SGD)",
            "LogisticRegression (objective perturbation)",
            "3 spends",
            "by model",
        ],
        ["dpsgd_accuracy_vs_epsilon.png"],
    ),
    "plot_boosting_vs_epsilon.py": (
        ["HistGradientBoosting", "LogisticRegression", "RandomForest", "DP-EBM (defaults, eps=1):", "15 spends"],
        ["boosting_vs_epsilon.png"],
    ),
    "plot_online_learning.py": (
        ["a stream of 32561 rows in 32 chunks", "progressive accuracy", "3 spends"],
        ["online_learning.png"],
    ),
    "plot_walkthrough.py": (
        ["PrivacyLeakWarning:", "neighbours 1 apart: pass", "neighbours 2 apart: fail", "2 spends"],
        ["walkthrough_audit.png"],
    ),
}

# The examples run one at a time; single-threaded BLAS keeps them from oversubscribing
# the cores when the test suite shares the machine (their output does not depend on it).
CHILD_ENV = {
    "MPLBACKEND": "Agg",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONIOENCODING": "utf-8",
}
RUN = "import runpy, sys; sys.argv = [sys.argv[1]]; runpy.run_path(sys.argv[0], run_name='__main__')"


def test_every_example_is_checked():
    if not SCRIPTS:
        pytest.skip("examples/ is not next to the tests (installed without the source tree)")
    assert {script.name for script in SCRIPTS} == set(EXPECTED)


@pytest.mark.docs
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_example_runs(script, tmp_path, monkeypatch):
    if script.name.startswith("plot_"):
        pytest.importorskip("matplotlib", reason="the gallery examples plot with matplotlib")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    figures = tmp_path / "figures"
    for name, value in {**CHILD_ENV, "DPSK_EXAMPLES_OUTPUT": str(figures)}.items():
        monkeypatch.setenv(name, value)
    result = run_python(RUN, script, cwd=cwd, timeout=600)
    assert result.returncode == 0, f"{script.name} failed:\n{result.stdout}\n{result.stderr}"
    lines, saved = EXPECTED[script.name]
    for line in lines:
        assert line in result.stdout, f"{script.name} did not print {line!r}:\n{result.stdout}"
    for name in saved:
        assert (figures / name).stat().st_size > 0
    assert list(cwd.iterdir()) == [], "the example wrote into its working directory"
    if script.name == "quickstart.py":
        check_quickstart_table(result.stdout)


def check_quickstart_table(stdout):
    """The quickstart's table has an accuracy per budget, and the budget adds them up."""
    lines = stdout.splitlines()
    header = next(line for line in lines if line.startswith("model"))
    epsilons = [float(e) for e in re.findall(r"eps=([0-9.]+)", header)]
    models = ("LogisticRegression", "MultinomialNB", "BernoulliNB", "RandomForestClassifier")
    rows = {
        line.split()[0]: [float(v) for v in line.split()[1:]]
        for line in lines
        if line.split()[:1] and line.split()[0] in models
    }
    assert set(rows) == set(models)
    for values in rows.values():
        assert len(values) == len(epsilons) + 1  # one per budget, then the baseline
        assert all(0.0 <= v <= 1.0 for v in values)
    assert rows["LogisticRegression"][-1] > 0.8  # the non-private baseline learns something
    majority = float(re.search(r"majority class scores ([0-9.]+)", stdout).group(1))
    assert 0.7 < majority < 0.8
    spent = float(re.search(r"epsilon: spent ([0-9.]+) of 30", stdout).group(1))
    assert spent == pytest.approx(len(rows) * sum(epsilons), rel=1e-3)


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_gallery_format(script):
    """sphinx-gallery's format: a docstring opening with an RST title, then ``# %%`` cells."""
    text = script.read_text(encoding="utf-8")
    match = re.match(r'"""\n(=+\n)?(.+)\n(=+)\n\n(\S.*)', text)
    assert match, f"{script.name} must open with a docstring whose first line is a title underlined with '='"
    overline, title, underline = match.group(1), match.group(2), match.group(3)
    assert len(underline) >= len(title)
    if overline:
        assert len(overline.strip()) == len(underline)
    if script.name.startswith("plot_"):
        assert "\n# %%\n" in text
