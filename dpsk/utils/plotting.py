# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plotting helpers (need matplotlib, imported only when a plot is drawn)."""

from collections.abc import Mapping

import numpy as np

__all__ = ["plot_privacy_utility"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "dpsk.utils.plotting needs matplotlib, which is not installed: pip install matplotlib"
        ) from exc
    return plt


def plot_privacy_utility(results, *, ax=None, spread="std", baseline=True, references=None, xscale="log", legend=True):
    """Plot test score against ε: one line per estimator, its spread and its baseline.

    Parameters
    ----------
    results : Bunch or list of Bunch
        Output of :func:`dpsk.model_selection.privacy_utility_curve` (one per estimator),
        or any mapping with ``epsilons``, ``mean`` and ``std`` (and optionally
        ``scores``, ``baseline``, ``label`` and ``score_name``).
    ax : matplotlib.axes.Axes or None, default=None
        Axes to draw on; ``None`` creates a figure.
    spread : {"std", "range"} or None, default="std"
        Band drawn around each mean: ± one standard deviation over the seeds, the range
        (min to max) of the scores, or none.
    baseline : bool, default=True
        Draw each result's non-private baseline (when it has one) as a dashed horizontal
        line of the same colour.
    references : dict of str to float or None, default=None
        Further horizontal reference lines, e.g. ``{"majority class": 0.76}``, in grey.
    xscale : str, default="log"
        Scale of the ε axis (``"log"`` or ``"linear"``).
    legend : bool, default=True
        Add a legend.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ImportError
        If matplotlib is not installed.

    Notes
    -----
    **Privacy.** Plotting spends nothing: it draws what
    :func:`~dpsk.model_selection.privacy_utility_curve` computed (and charged). The
    baseline line is as private as the baseline is (usually not at all).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from dpsk.utils.plotting import plot_privacy_utility
    >>> curve = {"epsilons": [0.1, 1.0, 10.0], "mean": [0.70, 0.80, 0.84],
    ...          "std": [0.05, 0.02, 0.01], "baseline": 0.85, "label": "LogisticRegression"}
    >>> ax = plot_privacy_utility(curve, references={"majority class": 0.76})
    >>> ax.get_xscale()
    'log'
    """
    if spread not in ("std", "range", None):
        raise ValueError(f'spread must be "std", "range" or None, got {spread!r}')
    curves = [results] if isinstance(results, Mapping) else list(results)
    if not curves:
        raise ValueError("results is empty: nothing to plot")
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    score_names = set()
    for curve in curves:
        epsilons = np.asarray(curve["epsilons"], dtype=np.float64)
        mean = np.asarray(curve["mean"], dtype=np.float64)
        (line,) = ax.plot(epsilons, mean, marker="o", label=curve.get("label"))
        color = line.get_color()
        if spread == "std":
            std = np.asarray(curve["std"], dtype=np.float64)
            ax.fill_between(epsilons, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
        elif spread == "range":
            scores = np.asarray(curve["scores"], dtype=np.float64)
            ax.fill_between(epsilons, scores.min(axis=1), scores.max(axis=1), color=color, alpha=0.2, linewidth=0)
        if baseline and curve.get("baseline") is not None:
            name = curve.get("label")
            ax.axhline(
                curve["baseline"],
                color=color,
                linestyle="--",
                linewidth=1,
                label=f"{name} (non-private)" if name else "non-private",
            )
        score_names.add(curve.get("score_name", "score"))
    for name, value in (references or {}).items():
        ax.axhline(value, color="0.5", linestyle=":", linewidth=1, label=name)
    ax.set_xscale(xscale)
    ax.set_xlabel("privacy budget \N{GREEK SMALL LETTER EPSILON} of each fit")
    ax.set_ylabel(f"test {score_names.pop()}" if len(score_names) == 1 else "test score")
    if legend:
        ax.legend()
    return ax
