# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private quantile bin edges of histogram gradient boosting (``bin_strategy="quantile"``).

The edges of a numeric feature with ``2**L`` bins are released by recursive medians
(the "approximate quantiles" recursion of Kaplan, Schnapp & Stemmer 2022), each median
by dpsk's exact exponential-mechanism quantile (:class:`dpsk.stats._quantile.QuantileQuery`,
reused as is) inside the public (or privately released) range of the feature:

* level 0: the median of the feature's values in its range ``[a, b]``, released as ``m``;
* level l: each of the ``2**l`` sub-ranges ``[a', b']`` cut by the edges released so
  far gets the median of the values it holds (``a' < x <= b'``; the first also holds
  ``x <= a``, the last ``x > b``), released the same way.

Privacy: given the edges released before level l (adaptive composition), a row lies in
exactly one sub-range of level l, so adding or removing it changes the scores of one
selection only: the ``2**l`` selections of a level are a parallel composition
(:class:`~dpsk.accounting.ParallelEvent`), and the ``L`` levels of ``p`` numeric
features compose sequentially, ``L p`` exponential-mechanism selections of ε_q each. Every
selection is made, also on an empty sub-range (a uniform bin), so the event is fixed by
the public parameters before any value is read. Skewed features (a mass at one value)
keep their resolution where the other values are: a sub-range holding only the mass
cuts nothing useful, the others split the rest.

Budget: a share ``QUANTILE_SHARE`` of the fit's budget. With δ > 0 the trees' noise is
discrete Gaussian, composed in zCDP, and an ε_q-exponential-mechanism selection is
ε_q²/8-zCDP (bounded range, Cesar & Rogers 2021): the edges get ``QUANTILE_SHARE`` of
ρ = zcdp_rho(ε, δ), ``ε_q = sqrt(8 · share · ρ / (L p))``, the trees the rest of ρ. With
δ = 0, ``ε_q = share · ε / (L p)`` (basic composition), the trees the rest of ε.
"""

import math

import numpy as np

from dpsk.accounting import ComposedEvent, ParallelEvent
from dpsk.stats._quantile import QuantileQuery

__all__ = ["QUANTILE_SHARE", "QuantileEdges"]

#: Share of the fit's budget (ρ with δ > 0, ε with δ = 0) spent on quantile bin edges.
QUANTILE_SHARE = 0.1
#: Below 1 by a few ulps: the selections' ε_q, so that their composition stays within its share.
_SAFETY = 1.0 - 2.0**-40


def n_levels(max_bins):
    """L: levels of recursive medians for at most ``max_bins`` bins (``2**L <= max_bins``)."""
    return max(1, int(math.floor(math.log2(max_bins))))


class QuantileEdges:
    """The plan and the release of the quantile edges of ``n_numeric`` features (see the module docstring).

    Parameters
    ----------
    epsilon, delta : float
        The budget the share is taken from (the fit's, after the row count and the box).
    n_numeric : int
        Number of numeric features (``p``).
    max_bins : int
        The fit's ``max_bins``: ``L = floor(log2(max_bins))`` levels.

    Attributes
    ----------
    fraction : float
        The fraction of the budget left for the trees (1 when nothing is released).
    epsilon_each : float
        ε_q of one selection.
    event : PrivacyEvent or None
        The cost of every edge release (None without numeric features or at ε = ∞).
    """

    def __init__(self, epsilon, delta, n_numeric, max_bins):
        from dpsk.accounting._calibration import zcdp_rho

        self.levels = n_levels(max_bins)
        self.n_numeric = int(n_numeric)
        self.exact = math.isinf(epsilon)
        self.fraction, self.event, self.epsilon_each = 1.0, None, math.inf
        if self.exact or self.n_numeric == 0:
            return
        selections = self.levels * self.n_numeric
        if delta > 0:
            self.epsilon_each = math.sqrt(8.0 * QUANTILE_SHARE * zcdp_rho(epsilon, delta) / selections) * _SAFETY
        else:
            self.epsilon_each = QUANTILE_SHARE * epsilon / selections * _SAFETY
        self.fraction = 1.0 - QUANTILE_SHARE
        one = self._query(None).event
        self.event = ComposedEvent(  # in the order of the draws: level by level, column by column
            tuple(ParallelEvent((one,) * 2**level) for level in range(self.levels) for _ in range(self.n_numeric))
        )

    def _query(self, rng):
        return QuantileQuery(np.array([0.5]), epsilon=self.epsilon_each, n_outputs=1, bins=None, rng=rng)

    def release(self, X, lower, upper, rng):
        """The edges of every column of ``X`` (numeric, validated), in its range ``[lower, upper]``:
        a list of sorted, distinct edge arrays (after the spend). ε = ∞: the exact recursive medians.

        The draws go level by level, and within a level column by column: a level of every
        column needs only the edges drawn before it, so on Dask one pair of passes over the
        data serves a whole level (``dpsk.dask._boosting.release_edges``)."""
        edges = [np.empty(0)] * X.shape[1]
        for _ in range(self.levels):
            for j in range(X.shape[1]):
                edges[j] = self._split(X[:, j], float(lower[j]), float(upper[j]), edges[j], rng)
        return [np.unique(e) for e in edges]

    def _median(self, values, low, high, rng):
        if self.exact:
            return float(np.median(np.clip(values, low, high))) if values.size else low / 2 + high / 2
        with np.errstate(over="ignore"):  # a subnormal sub-range: QuantileQuery takes its exact path
            return float(self._query(rng).release(values[:, None], [low], [high])[0, 0])

    def _split(self, x, low, high, edges, rng):
        """One level: the ``edges`` of a column with its values ``x`` and the medians of their sub-ranges."""
        cuts = np.concatenate([[low], edges, [high]])
        side = np.searchsorted(edges, x, side="left")  # sub-range of each value: x <= edge goes left
        new = [self._median(x[side == r], cuts[r], cuts[r + 1], rng) for r in range(edges.size + 1)]
        return np.sort(np.concatenate([edges, new]))
