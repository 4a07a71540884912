# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""plot_privacy_utility: what it draws, and a clear error without matplotlib."""

import doctest
import sys

import numpy as np
import pytest

import dpsk.utils.plotting as plotting
from dpsk.utils.plotting import plot_privacy_utility

CURVE = {
    "epsilons": np.array([0.1, 1.0, 10.0]),
    "scores": np.array([[0.6, 0.7, 0.8], [0.78, 0.8, 0.82], [0.84, 0.85, 0.86]]),
    "mean": np.array([0.7, 0.8, 0.85]),
    "std": np.array([0.1, 0.02, 0.01]),
    "baseline": 0.86,
    "label": "model A",
    "score_name": "accuracy",
}


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_clear_error_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_privacy_utility(CURVE)


def test_docstring_examples(plt):
    assert doctest.testmod(plotting, optionflags=doctest.ELLIPSIS).failed == 0


def test_one_curve_with_band_and_baseline(plt):
    ax = plot_privacy_utility(CURVE)
    (line, baseline) = ax.get_lines()
    np.testing.assert_allclose(line.get_xdata(), CURVE["epsilons"])
    np.testing.assert_allclose(line.get_ydata(), CURVE["mean"])
    assert np.allclose(baseline.get_ydata(), 0.86) and baseline.get_linestyle() == "--"
    assert baseline.get_color() == line.get_color()
    (band,) = ax.collections
    low, high = band.get_paths()[0].vertices[:, 1].min(), band.get_paths()[0].vertices[:, 1].max()
    assert low == pytest.approx(0.6) and high == pytest.approx(0.86)  # mean ± std
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "test accuracy"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["model A", "model A (non-private)"]


def test_spread_options(plt):
    ax = plot_privacy_utility(CURVE, spread="range", baseline=False, legend=False, xscale="linear")
    (band,) = ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(0.6) and ys.max() == pytest.approx(0.86)  # min and max of the scores
    assert len(ax.get_lines()) == 1 and ax.get_legend() is None and ax.get_xscale() == "linear"
    ax = plot_privacy_utility(CURVE, spread=None)
    assert not ax.collections
    with pytest.raises(ValueError, match="spread"):
        plot_privacy_utility(CURVE, spread="iqr")
    with pytest.raises(ValueError, match="empty"):
        plot_privacy_utility([])


def test_several_curves_on_given_axes_with_references(plt):
    fig, ax = plt.subplots()
    other = {**CURVE, "label": "model B", "mean": CURVE["mean"] - 0.05, "baseline": None, "score_name": "R^2"}
    returned = plot_privacy_utility([CURVE, other], ax=ax, references={"majority class": 0.76})
    assert returned is ax
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["model A", "model A (non-private)", "model B", "majority class"]
    assert lines[0].get_color() != lines[2].get_color()
    assert lines[3].get_linestyle() == ":"
    assert ax.get_ylabel() == "test score"  # the curves measure different scores
