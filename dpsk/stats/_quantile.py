# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private quantiles: the exponential mechanism over a public grid of bins.

The public range ``bounds`` is cut into ``bins`` equal bins. For a quantile q of values
with total weight N, bin k covers the ranks ``[R(x_k), R(x_{k+1})]`` (R(x) the weight of
values below x; the last bin closes at N), and scores ``-dist(qN, [R(x_k), R(x_{k+1})])``.
The bins' rank intervals tile [0, N], so the best score is 0. Adding or removing one
record moves every endpoint by 0 or 1 (its weight) and qN by q, so the score moves by at
most max(q, 1 − q) <= 1 per unit of weight; replacing one user's values moves the
endpoints by at most the user's weight and leaves N fixed. The exponential mechanism
(``dpsk.mechanisms.ExponentialMechanism``, sampled exactly) picks a bin; its middle is
released. With probability >= 1 − α the chosen bin's rank interval is within
``(2Δ/ε) ln(bins/α)`` of qN (McSherry & Talwar 2007): the rank error reported by
:meth:`DPResult.rank_error`.

With ``groups``, values are weighted as for the mean (a user's rows weigh at most h), so
that the weighted quantile is the one of Epasto et al. (2020) §4 ("the same weighting
for quantiles"); the quantile algorithm of their appendix is not in our reference, and
this design — weighted ranks, the exponential mechanism on a public grid, h from the
same trade-off with λ_var = q(1 − q) and λ_noise the mechanism's rank variance — is
dpsk's own.
"""

import math

import numpy as np

from dpsk.mechanisms import ExponentialMechanism
from dpsk.stats._common import (
    STATS_DOCS,
    Records,
    as_array,
    as_records,
    compose,
    layout,
    resolve_stat_bounds,
    shape_output,
    split_budget,
)
from dpsk.stats._contribution import Contribution
from dpsk.stats._protocol import StatCall
from dpsk.stats._result import DPResult
from dpsk.utils._docstring import Substitution

__all__ = ["QuantileQuery", "median", "percentile", "quantile"]

def _check_q(q):
    q = np.asarray(q, dtype=np.float64)
    if not np.all((q >= 0) & (q <= 1)):
        raise ValueError("quantiles must lie in [0, 1]")
    return q


class QuantileQuery:
    """The exponential-mechanism releases behind one quantile call (public parameters only).

    Parameters
    ----------
    q : ndarray
        Quantile levels in [0, 1].
    epsilon : float
        Budget, shared equally by the ``q.size × n_outputs`` selections.
    n_outputs : int
    bins : int
        Number of candidate bins per output.
    rng : numpy.random.Generator

    Attributes
    ----------
    event : PrivacyEvent
    """

    def __init__(self, q, *, epsilon, n_outputs, bins, rng):
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
            raise ValueError(f"bins must be an integer >= 1, got {bins!r}")
        self.q = _check_q(q)
        self.bins = int(bins)
        self.n_outputs = int(n_outputs)
        n_selections = self.q.size * self.n_outputs
        self.epsilon_each = split_budget(epsilon, [1.0] * n_selections)[0] if n_selections else epsilon
        self.mechanism = ExponentialMechanism(epsilon=self.epsilon_each, sensitivity=1.0, random_state=rng)
        self.event = compose([self.mechanism.privacy_event()] * n_selections)

    def kappa(self, per_record):
        """λ_noise/λ_var for choosing h: the rank variance 8/ε² of the mechanism (a Laplace
        of scale 2Δ/ε, in units of h·per_record) over the variance q(1 − q) of a weighted
        rank (floored at 0.05 for extreme quantiles)."""
        spread = max(float(np.min(self.q * (1.0 - self.q))) if self.q.size else 0.25, 0.05)
        return 8.0 * per_record / (self.epsilon_each**2 * spread)

    def rank_error(self, unit, alpha):
        """With probability >= 1 − α per selection: |rank − qN| <= this, in weight units.

        The mechanism weighs candidate r by exp(−(z_max − z_r)/2⁴⁰) with integer scores
        z = floor(M s) (``ExponentialMechanism``'s quantisation, M ≈ 2⁴⁰ ε/2): a bin
        whose score is τ below the best has z_max − z_r >= M τ − 1, so
        P(some such bin) <= bins · exp(−(M τ − 1)/2⁴⁰) <= α for the τ below.
        """
        steps = self.mechanism._m  # noqa: SLF001 (the mechanism's score multiplier M)
        return unit * (2.0**40 * math.log(self.bins / alpha) + 1.0) / steps

    def release(self, records, lower, upper, contribution=None):
        """The released quantiles, shape ``(q.size, n_outputs)``.

        ``records``: Records, or an array of shape (n_samples, n_outputs) with one record
        per row (validated finite); ``contribution``: user-level weights, None for item
        level. Estimators (e.g. a scaler needing private ranges) use it like
        ``MomentsQuery``: ``event`` for the cost, then ``release``.
        """
        if not isinstance(records, Records):
            records = Records(records, records.shape[0], 1, (records.shape[1],), (1, records.shape[1]))
        contribution = Contribution() if contribution is None else contribution
        m = records.per_record
        unit = contribution.unit * m
        weights = contribution.weights
        if weights is not None and m > 1:
            weights = np.repeat(weights, m)
        out = np.empty((self.q.size, self.n_outputs))
        for j in range(self.n_outputs):
            edges = np.linspace(lower[j], upper[j], self.bins + 1)
            column = np.clip(records.X[:, j], lower[j], upper[j])
            order = np.argsort(column, kind="stable")
            ranked = column[order]
            cum = np.concatenate([[0.0], np.cumsum(weights[order] if weights is not None else np.ones(ranked.size))])
            total = cum[-1]
            below = cum[np.searchsorted(ranked, edges, side="left")]  # weight of values < edge
            start, stop = below[:-1], np.concatenate([below[1:-1], [total]])
            for k, level in enumerate(self.q):
                target = level * total
                distance = np.maximum(np.maximum(start - target, target - stop), 0.0)
                index = self.mechanism.randomise(-distance / unit)
                out[k, j] = (edges[index] + edges[index + 1]) / 2.0
        return out


def _quantile_statistic(call, a, q, bounds, axis, keepdims, bins, return_error, function):
    arr = as_array(a)
    q = _check_q(q)
    _, _, per_record, out_shape, _ = layout(arr, axis)
    n_outputs = int(np.prod(out_shape, dtype=np.int64))
    query = QuantileQuery(q.reshape(-1), epsilon=call.release_epsilon, n_outputs=n_outputs, bins=bins, rng=call.rng)
    call.check(query.event)
    records = as_records(arr, axis)
    lower, upper = resolve_stat_bounds(bounds, records, function)
    call.spend(records.n_records)
    contribution = call.contribution(kappa=query.kappa(per_record))
    values = query.release(records, lower, upper, contribution)
    shaped = shape_output(values, records, keepdims, records.X.dtype, leading=q.shape)
    if not return_error:
        return shaped
    unit = contribution.unit * per_record
    return DPResult(
        shaped,
        noise_std=None,
        privacy_spent=call.cost,
        mechanism="ExponentialMechanism over equal bins (exact sampling, floating-point safe)",
        rank_error=lambda alpha: query.rank_error(unit, alpha),
        bounds=(lower, upper),
        threshold=contribution.threshold,
    )


@Substitution(**STATS_DOCS)
def quantile(a, q, epsilon=1.0, bounds=None, axis=None, *, keepdims=False, bins=4096, groups=None,
             contribution_bound="smooth", threshold=None, public_user_counts=False, accountant=None,
             random_state=None, return_error=False):
    """Differentially private quantiles of clipped values over ``axis``.

    Parameters
    ----------
    {a}
    q : float or array-like of float
        Quantile levels in [0, 1].
    {epsilon}
        Shared equally by every level of ``q`` and every entry of the result.
    {bounds}
    {axis}
    {keepdims}
    bins : int, default=4096
        The range ``bounds`` is cut into this many equal bins; the middle of one of them
        is released. More bins: finer resolution, a slightly larger rank error
        (logarithmic in ``bins``).
    {user_level}
    {call}
    return_error : bool, default=False
        Return a :class:`DPResult`; its ``rank_error(confidence)`` bounds how many values
        (weight, with ``groups``) lie between the release and the exact quantile. Free of
        privacy cost.

    Returns
    -------
    quantile : float or ndarray, or DPResult
        Shape ``q.shape + result shape``, as numpy; float32 for float32 input.

    Notes
    -----
    **Privacy.** ε-DP: one exponential mechanism per level and entry (McSherry & Talwar
    2007), each with ε/(q.size × entries), over the public bins, score the distance of
    the target rank to the bin's rank interval (sensitivity 1 value; the number of
    values per record, or h of them with ``groups``). Released: one bin middle per
    selection. Sampled exactly by ``dpsk.mechanisms.ExponentialMechanism``:
    floating-point safe. {user_level_privacy} With ``groups``, the weighted quantile and
    this choice of h are dpsk's design following the paper's §4 trade-off (its quantile
    algorithm is in an appendix dpsk's authors did not have).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import stats
    >>> x = np.random.default_rng(0).normal(size=10_000)
    >>> m = stats.median(x, epsilon=1.0, bounds=(-5, 5), random_state=0)
    >>> bool(abs(m) < 0.05)
    True
    """
    call = StatCall(epsilon, 0.0, groups, contribution_bound, threshold, public_user_counts, accountant, random_state)
    return _quantile_statistic(call, a, q, bounds, axis, keepdims, bins, return_error, "dpsk.stats.quantile")


@Substitution(**STATS_DOCS)
def percentile(a, q, epsilon=1.0, bounds=None, axis=None, *, keepdims=False, bins=4096, groups=None,
               contribution_bound="smooth", threshold=None, public_user_counts=False, accountant=None,
               random_state=None, return_error=False):
    """Differentially private percentiles: :func:`quantile` with ``q`` in [0, 100].

    Parameters
    ----------
    {a}
    q : float or array-like of float
        Percentiles in [0, 100].
    {epsilon}
    {bounds}
    {axis}
    {keepdims}
    bins : int, default=4096
        See :func:`quantile`.
    {user_level}
    {call}
    return_error : bool, default=False
        See :func:`quantile`.

    Returns
    -------
    percentile : float or ndarray, or DPResult

    Notes
    -----
    **Privacy.** That of :func:`quantile`.
    """
    q = np.asarray(q, dtype=np.float64)
    if not np.all((q >= 0) & (q <= 100)):
        raise ValueError("percentiles must lie in [0, 100]")
    call = StatCall(epsilon, 0.0, groups, contribution_bound, threshold, public_user_counts, accountant, random_state)
    return _quantile_statistic(call, a, q / 100.0, bounds, axis, keepdims, bins, return_error, "dpsk.stats.percentile")


@Substitution(**STATS_DOCS)
def median(a, epsilon=1.0, bounds=None, axis=None, *, keepdims=False, bins=4096, groups=None,
           contribution_bound="smooth", threshold=None, public_user_counts=False, accountant=None,
           random_state=None, return_error=False):
    """Differentially private median: :func:`quantile` at 0.5.

    Parameters
    ----------
    {a}
    {epsilon}
    {bounds}
    {axis}
    {keepdims}
    bins : int, default=4096
        See :func:`quantile`.
    {user_level}
    {call}
    return_error : bool, default=False
        See :func:`quantile`.

    Returns
    -------
    median : float or ndarray, or DPResult

    Notes
    -----
    **Privacy.** That of :func:`quantile`.
    """
    call = StatCall(epsilon, 0.0, groups, contribution_bound, threshold, public_user_counts, accountant, random_state)
    return _quantile_statistic(call, a, 0.5, bounds, axis, keepdims, bins, return_error, "dpsk.stats.median")
