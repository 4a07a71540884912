# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private quantiles: the exponential mechanism over a public grid of bins.

The public range ``bounds`` is cut into ``bins`` equal bins (2³² by default). For a
quantile q of values with total weight N, bin k covers the ranks ``[R_k, R_{k+1}]`` (R_k
the weight of values in bins before k; the last bin closes at N), and scores
``-dist(qN, [R_k, R_{k+1}])``. The bins' rank intervals tile [0, N], so the best score is
0. Adding or removing one record moves every endpoint by 0 or 1 (its weight) and qN by
q, so the score moves by at most max(q, 1 − q) <= 1 per unit of weight; replacing one
user's values moves the endpoints by at most the user's weight and leaves N fixed. The
exponential mechanism (``dpsk.mechanisms.ExponentialMechanism``, sampled exactly) picks
a bin; its middle is released. With probability >= 1 − α the chosen bin's rank interval
is within ``(2Δ/ε) ln(bins/α)`` of qN (McSherry & Talwar 2007): the rank error reported
by :meth:`DPResult.rank_error`.

The bins are never listed: all empty bins between two consecutive occupied bins share
one rank interval, hence one score, so the n values split the bins into at most 2n + 1
groups of tied candidates (runs of empty bins, and occupied bins), and
``ExponentialMechanism.randomise_groups`` samples a group with probability ∝ (its number
of bins) × exp(ε score / 2Δ), then a uniform bin in it, exactly (integer weights, exact
Bernoulli draws), in time linear in n. Without user weights only the groups in a window
of ranks around qN are built, from counts per block of bins (no sort of the n values); the
rest are merged into one group per side, which changes no draw (:func:`_select_counted`).
With a fine grid this is the exponential mechanism of Smith (2011) — an interval
between order statistics with probability ∝ its length × exp(ε score / 2Δ), then a point
inside it — restricted to a public grid, so that the release is a grid point
(floating-point safe). Scores are exact rationals: ranks are integers (with ``groups``,
row weights are rounded down to multiples of 2⁻³⁰, which keeps every user's total weight
within the bound).

With ``groups``, values are weighted as for the mean (a user's rows weigh at most h), so
that the weighted quantile is the one of Epasto et al. (2020) §4 ("the same weighting
for quantiles"); the quantile algorithm of their appendix is not in our reference, and
this design — weighted ranks, the exponential mechanism on a public grid, h from the
same trade-off with λ_var = q(1 − q) and λ_noise the mechanism's rank variance — is
dpsk's own.
"""

import functools
import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from dpsk._core._quantile import bin_index_counts
from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import compose
from dpsk.dask._data import frame_values, is_dask
from dpsk.mechanisms import ExponentialMechanism
from dpsk.stats._common import (
    STATS_DOCS,
    Records,
    as_array,
    as_records,
    column_names,
    frame_aware,
    layout,
    resolve_stat_bounds,
    shape_output,
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


#: The default grid: this many equal bins of the public range (never materialised).
FINE_BINS = 2**32

#: With ``groups``, the row weights are rounded down to multiples of 2**-WEIGHT_BITS, so
#: that weighted ranks are exact integers.
WEIGHT_BITS = 30

#: Largest accepted ``bins`` (the sampler's counts are exact up to 2**53).
MAX_BINS = 2**53


class QuantileQuery:
    """The exponential-mechanism releases behind one quantile call (public parameters only).

    Parameters
    ----------
    q : ndarray
        Quantile levels in [0, 1].
    epsilon : float
        Budget, shared equally by the ``q.size × n_outputs`` selections.
    n_outputs : int
    bins : int or None
        Number of candidate bins per output; None for ``FINE_BINS``.
    rng : numpy.random.Generator

    Attributes
    ----------
    event : PrivacyEvent
    """

    def __init__(self, q, *, epsilon, n_outputs, bins, rng):
        if bins is None:
            bins = FINE_BINS
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 1 <= bins <= MAX_BINS:
            raise ValueError(f"bins must be None or an integer in [1, 2**53], got {bins!r}")
        self.q = _check_q(q)
        self.bins = int(bins)
        self.n_outputs = int(n_outputs)
        n_selections = self.q.size * self.n_outputs
        self.epsilon_each = split_epsilon(epsilon, n_selections) if n_selections else epsilon
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

        The mechanism weighs bin r by exp(−γ_r) with γ_r = (z_max − z_r)/2⁴⁰ for integer
        scores z = floor(M s) (``ExponentialMechanism``'s quantisation, M ≈ 2⁴⁰ ε/2): a
        bin whose score is τ below the best has γ_r >= (M τ − 1)/2⁴⁰, and the best bin
        weighs 1, so P(some such bin) <= bins · exp(−(M τ − 1)/2⁴⁰) <= α for the τ below.
        ``unit`` is the weight of one privacy unit in the scores (:meth:`score_unit`).
        """
        steps = self.mechanism._m  # noqa: SLF001 (the mechanism's score multiplier M)
        if steps is None:  # ε = ∞: a bin whose rank interval holds qN, exactly
            return 0.0
        return unit * (2.0**40 * math.log(self.bins / alpha) + 1.0) / steps

    @staticmethod
    def score_unit(contribution, per_record):
        """``(unit, scale)``: the integer weight of one privacy unit in the scores, and the
        integer weight of a row of weight 1 (1 item level, 2**WEIGHT_BITS with weights).

        User-level weights w in [0, 1] become floor(w 2**WEIGHT_BITS) (:func:`_row_weights`);
        one user's rows carry at most ``contribution.unit`` in real weights (up to the
        rounding of h/s_l, relative 2⁻⁵³), hence at most ``unit`` in integer weights.
        """
        if contribution.weights is None:
            return int(math.ceil(contribution.unit * per_record)), 1
        scale = 2**WEIGHT_BITS
        return math.floor(Fraction(contribution.unit) * per_record * scale * (1 + Fraction(1, 2**50))) + 1, scale

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
        unit, _ = self.score_unit(contribution, records.per_record)
        weights = _row_weights(contribution, records.per_record)
        out = np.empty((self.q.size, self.n_outputs))
        column = _columns(records.X)
        for j in range(self.n_outputs):
            if weights is None:  # the window around each target rank (same draws, see _select_counted)
                index, counted = _indexed_blocks(column(j), lower[j], upper[j], self.bins)  # once for all levels
                select = functools.partial(_select_counted, self.mechanism, index, self.bins, counted=counted)
            else:
                groups = _bin_groups(column(j), lower[j], upper[j], self.bins, weights)
                select = functools.partial(_select_bin, self.mechanism, groups)
            for k, level in enumerate(self.q):
                out[k, j] = _bin_middle(select(level, unit), lower[j], upper[j], self.bins)
        return out


def _columns(X):
    """``column(j)``: output j's values as a dense vector. Sparse X (records along axis 0)
    goes through one CSC copy of its stored values and densifies one column at a time
    (n values; its implicit zeros are the dense zeros, so the bins are the dense ones)."""
    if not sp.issparse(X):
        return lambda j: X[:, j]
    columns = sp.csc_matrix(X)
    return lambda j: columns[:, [j]].toarray().ravel()


def _row_weights(contribution, per_record):
    """Integer row weights floor(w 2**WEIGHT_BITS) (None at item level: all 1)."""
    if contribution.weights is None:
        return None
    weights = np.floor(np.asarray(contribution.weights, dtype=np.float64) * 2**WEIGHT_BITS).astype(np.int64)
    return np.repeat(weights, per_record) if per_record > 1 else weights


class _Groups(NamedTuple):
    """The bins of one output, grouped: runs of empty bins between occupied ones.

    Group g holds ``size[g]`` consecutive bins from ``start[g]``, all of rank interval
    ``[below[g], through[g]]`` (integer weights); ``total`` is the total weight N.
    """

    start: np.ndarray
    size: np.ndarray  # not ``count``: a NamedTuple field may not shadow tuple.count
    below: np.ndarray
    through: np.ndarray
    total: int


def _bin_groups(column, lower, upper, bins, weights):
    """Group the ``bins`` equal bins of [lower, upper] by the data in ``column``.

    A value x goes to bin floor((x − lower)/(upper − lower) · bins) (clipped into range;
    a deterministic, monotone function of x, so bin k's rank interval is [weight of
    values in bins < k, weight of values in bins <= k]). Occupied bins are their own
    group; the empty bins between two occupied ones (and before the first, after the
    last) share one rank, hence one score, and form one group: at most 2 n + 1 groups.
    """
    index = _bin_index(column, lower, upper, bins)
    if weights is None:
        index = np.sort(index).astype(np.int64)
        cumulative = np.arange(index.size + 1, dtype=np.int64)
    else:
        order = np.argsort(index, kind="stable")
        index = index[order].astype(np.int64)
        cumulative = np.concatenate([[0], np.cumsum(weights[order])])
    total = int(cumulative[-1])
    first = np.flatnonzero(np.concatenate([[True], index[1:] != index[:-1]])) if index.size else np.empty(0, np.intp)
    below = cumulative[first]
    return _groups_of(index[first], below, np.append(below[1:], total), bins, total)


def _bin_index(column, lower, upper, bins):
    """The bin of each value of ``column`` among ``bins`` equal bins of [lower, upper]
    (clipped into range): uint32 for at most 2**32 bins, else int64. The definition that
    ``dpsk._core._quantile.bin_index_counts`` computes bitwise in one pass."""
    x = np.asarray(column, dtype=np.float64)
    half_width = upper / 2 - lower / 2  # halves: no overflow for huge bounds
    # uint32 sorts faster than int64 (the default 2**32 bins fit)
    dtype = np.uint32 if bins <= 2**32 else np.int64
    if half_width > 0:
        position = np.clip(x, lower, upper)
        position /= 2
        position -= lower / 2
        factor = bins / half_width
        if math.isfinite(factor):
            position *= factor
        else:  # a subnormal range
            position = position / half_width * bins
        np.floor(position, out=position)
        np.clip(position, 0, bins - 1, out=position)
        return position.astype(dtype)
    return np.zeros(x.size, dtype=dtype)


def _groups_of(occupied, below, through, bins, total, after=None):
    """The groups of :func:`_bin_groups` from the occupied bins (sorted) and their rank
    intervals: each occupied bin, and the runs of empty bins before, between and after
    them (rank ``below`` of the next occupied bin; ``after``, default ``total``, for the
    last run)."""
    n = occupied.size
    start = np.empty(2 * n + 1, dtype=np.int64)
    count = np.empty(2 * n + 1, dtype=np.int64)
    low = np.empty(2 * n + 1, dtype=np.int64)
    high = np.empty(2 * n + 1, dtype=np.int64)
    # even groups: empty runs; odd groups: occupied bins
    start[0::2] = np.concatenate([[0], occupied + 1])
    count[0::2] = np.append(occupied, bins) - start[0::2]
    low[0::2] = high[0::2] = np.append(below, total if after is None else after)
    start[1::2] = occupied
    count[1::2] = 1
    low[1::2] = below
    high[1::2] = through
    return _Groups(start, count, low, high, total)


def _select_bin(mechanism, groups, level, unit, ranks=None):
    """One exponential-mechanism selection of a bin for the quantile ``level``.

    Score of a bin: −dist(qN, [below, through]) / unit, exactly (rationals), top 0 (the
    rank intervals tile [0, N]). The float distances only build the proposal; their error
    is at most a few ulps of N. ``ranks(g, offset)``: the exact ``(below, through)`` of
    bin ``offset`` of group ``g`` where a group merges bins of different ranks (its
    ``below``/``through`` then the nearest to qN; ``dpsk.dask``), None when every group
    is a tie.
    """
    total = groups.total
    target = level * total
    distance = np.maximum(np.maximum(groups.below - target, target - groups.through), 0.0)
    error = (total * 2.0**-48 + 2.0**-1000) / unit
    exact_target = Fraction(float(level)) * total

    def score(g, offset=0):
        if ranks is None:
            below, through = int(groups.below[g]), int(groups.through[g])
        else:
            below, through = ranks(g, offset)
        return -max(below - exact_target, exact_target - through, 0) / unit

    group, offset = mechanism.randomise_groups(
        groups.size, distance / unit, error + distance / unit * 2.0**-48, score, 0, candidate_score=ranks is not None
    )
    return int(groups.start[group]) + offset


def rank_margin(mechanism, unit, n_records):
    """Ranks W such that a bin at distance >= W from qN is at ``randomise_groups``'s last
    proposal level (with four levels and the gaps' float error to spare)."""
    from dpsk.mechanisms._selection import _DEN, _TOP_LEVEL  # read at call time (tests lower the level)

    if mechanism._m is None:  # noqa: SLF001 (ε = ∞: only distance 0 is read)
        return 2
    levels = (_TOP_LEVEL + 4) * math.log(2) * _DEN * float(mechanism.sensitivity) / mechanism._m  # noqa: SLF001
    return math.ceil(unit * (levels + n_records * 2.0**-46)) + 2


def window_ranks(n, target, margin):
    """Ranks (a, c) of the window around ``target`` among ``n`` values: a = ⌊target⌋ − W,
    c = ⌈target⌉ + W, clipped to [0, n]."""
    return max(0, math.floor(target) - margin), min(n, math.ceil(target) + margin)


def rank_window(cumulative, n, target, margin):
    """Ranks (a, c) of the window and the block range holding ranks a + 1 .. c."""
    a, c = window_ranks(n, target, margin)
    first = 0 if a == 0 else int(np.searchsorted(cumulative, a + 1, side="left"))
    last = cumulative.size - 1 if c == n else int(np.searchsorted(cumulative, c, side="left"))
    return a, c, first, last


def _window_groups(occupied, counts, base, a, c, n, bins):
    """The groups of bins L..H, as :func:`_bin_groups` makes them, and one group for each
    outer region (the argument: :mod:`dpsk.dask._quantile`'s module docstring)."""
    through = base + np.cumsum(counts)
    i0 = 0 if a == 0 else int(np.searchsorted(through, a + 1, side="left"))
    i1 = through.size - 1 if c == n else int(np.searchsorted(through, c, side="left"))
    through = through[i0 : i1 + 1]
    below = through - counts[i0 : i1 + 1]
    after = n if c == n else int(through[-1])
    return _groups_of(occupied[i0 : i1 + 1], below, through, bins, n, after=after)


def select_in_window(mechanism, window, base, a_rank, c_rank, n, bins, level, unit, count_ranks):
    """The in-memory selection of a bin for the quantile ``level`` from a window's counts.

    ``window``: the occupied bins and their counts of the blocks holding the ranks
    ``a_rank + 1 .. c_rank`` (:func:`rank_window`), ``base`` the count before them; ``n`` the
    number of values; ``count_ranks(b)``: the exact ``(below, through)`` of bin ``b`` (a
    bin of an outer region: a binary search in memory, one more pass on Dask). Draws from
    ``mechanism`` exactly as :func:`_select_bin` on all the groups does.
    """
    occupied, counts = window
    groups = _window_groups(occupied, counts, base, a_rank, c_rank, n, bins)
    merged = {0} if a_rank > 0 else set()
    if c_rank < n:
        merged.add(groups.size.size - 1)

    def ranks(g, offset):
        if g not in merged:
            return int(groups.below[g]), int(groups.through[g])
        return count_ranks(int(groups.start[g]) + offset)

    return _select_bin(mechanism, groups, level, unit, ranks if merged else None)


#: The unweighted selection first counts the bin indices per block of 2**s consecutive
#: bins, at most 2**BLOCK_BITS blocks (``dpsk.dask`` does the same on its workers).
BLOCK_BITS = 16


#: Values counted at a time (``block_counts``): small temporaries.
_COUNT_CHUNK = 2**16


def block_grid(bins, block_bits=BLOCK_BITS):
    """``(shift, n_blocks)``: blocks of ``2**shift`` consecutive bins, at most 2**block_bits of them."""
    shift = max(0, (bins - 1).bit_length() - block_bits)
    return shift, ((bins - 1) >> shift) + 1


def block_counts(columns, shift, n_blocks):
    """Counts per block of ``2**shift`` bins of each column's bin indices: int64 (n_columns, n_blocks)."""
    counts = np.zeros((len(columns), n_blocks), dtype=np.int64)
    for j, index in enumerate(columns):
        for start in range(0, index.size, _COUNT_CHUNK):
            part = index[start : start + _COUNT_CHUNK]
            counts[j] += np.bincount(part >> shift if shift else part, minlength=n_blocks)
    return counts


def _column_blocks(n, bins):
    """``(shift, n_blocks)`` for a column of ``n`` values: 8 to 16 values per block on
    average (at most 2**BLOCK_BITS blocks); any blocks give the same window."""
    return block_grid(bins, min(BLOCK_BITS, max(1, n.bit_length() - 4)))


def _count_blocks(index, bins):
    """``(shift, counts per block)`` of one column's bin indices (:func:`_column_blocks`)."""
    shift, n_blocks = _column_blocks(index.size, bins)
    return shift, block_counts([index], shift, n_blocks)[0]


def _indexed_blocks(column, lower, upper, bins):
    """``(index, (shift, counts per block))``: :func:`_bin_index` and :func:`_count_blocks`
    of ``column``, in one compiled pass when the grid has at most 2**32 bins (bitwise
    the same indices: ``dpsk._core._quantile``)."""
    x = np.asarray(column, dtype=np.float64)
    lower, upper = float(lower), float(upper)
    if bins > 2**32 or not upper / 2 - lower / 2 > 0:
        index = _bin_index(x, lower, upper, bins)
        return index, _count_blocks(index, bins)
    shift, n_blocks = _column_blocks(x.size, bins)
    index, counts = bin_index_counts(x, lower, upper, bins, shift, n_blocks)
    return index, (shift, counts)


def window_counts(columns, requests):
    """For each request ``(j, first, last)``: the occupied bins of column j in [first, last] and their counts."""
    out = []
    for j, first, last in requests:
        index = columns[j]
        occupied, counts = np.unique(index[(index >= first) & (index <= last)], return_counts=True)
        out.append((occupied.astype(np.int64), counts.astype(np.int64)))
    return tuple(out)


def _select_counted(mechanism, index, bins, level, unit, counted=None):
    """:func:`_select_bin` on the groups of the bin indices ``index`` (unweighted, in any
    order), draw for draw, reading only the bins around the target rank.

    The groups far from the target rank are at ``randomise_groups``'s last proposal level,
    where merging them into one group per side changes neither the law nor any draw (the
    argument of :mod:`dpsk.dask._quantile`, whose in-memory counterpart this is): the
    2n + 1 groups of a large column are never built, nor is the column sorted. The counts
    per block of bins (``counted``, :func:`_count_blocks`; counted here when None) locate
    the window's blocks; only their values are sorted. A proposed bin of a merged region
    gets its exact ranks by counting (:func:`_counted_ranks`).
    """
    n = index.size
    shift, blocks = _count_blocks(index, bins) if counted is None else counted
    cumulative = np.cumsum(blocks)
    a_rank, c_rank, first, last = rank_window(cumulative, n, level * n, rank_margin(mechanism, unit, n))
    base = 0 if first == 0 else int(cumulative[first - 1])
    (window,) = window_counts([index], [(0, first << shift, min(bins - 1, ((last + 1) << shift) - 1))])
    count_ranks = functools.partial(_counted_ranks, index)
    return select_in_window(mechanism, window, base, a_rank, c_rank, n, bins, level, unit, count_ranks)


def _counted_ranks(index, b):
    """``(below, through)`` of bin ``b``: the values of ``index`` in bins < b, <= b."""
    return int(np.count_nonzero(index < b)), int(np.count_nonzero(index <= b))


def _bin_middle(index, lower, upper, bins):
    """The middle of bin ``index`` of ``bins`` equal bins of [lower, upper] (public)."""
    width = upper / bins - lower / bins
    left = lower + index * width
    right = upper if index == bins - 1 else lower + (index + 1) * width
    return float(np.clip(left / 2 + right / 2, lower, upper))


def _quantile_statistic(call, a, q, bounds, axis, keepdims, bins, return_error, function):
    dask_input = is_dask(a)
    if dask_input:  # a data frame's lengths are its public shape (dpsk.dask)
        arr = frame_values(a)
    else:
        arr = as_array(a)
    q = _check_q(q)
    _, _, per_record, out_shape, _ = layout(arr, axis)
    n_outputs = int(np.prod(out_shape, dtype=np.int64))
    call.plan_bounds(bounds, n_outputs, per_record)
    query = QuantileQuery(q.reshape(-1), epsilon=call.release_epsilon, n_outputs=n_outputs, bins=bins, rng=call.rng)
    call.require_public("private" if bounds is None else bounds, "bounds")  # left out: private
    call.check(query.event)
    params = (q, bounds, axis, keepdims, bins)
    if dask_input:  # counts per block of bins on the cluster, the same selections (dpsk.dask)
        from dpsk.dask._quantile import dask_quantiles

        records, lower, upper, contribution, values = dask_quantiles(
            call, query, arr, getattr(a, "columns", None), bounds, axis, function, params
        )
    else:
        arr = call.screen(arr)
        records = as_records(arr, axis, allow_empty=call.on_invalid != "raise")
        lower, upper = resolve_stat_bounds(bounds, records, function, feature_names=column_names(a, axis))
        call.spend(records.n_records, function=function, params=params, data=(arr,))
        lower, upper = call.release_bounds(records, lower, upper)
        contribution = call.contribution(kappa=query.kappa(per_record))
        values = query.release(records, lower, upper, contribution)
    shaped = shape_output(values, records, keepdims, records.X.dtype, leading=q.shape)
    if not return_error:
        return shaped
    unit, scale = query.score_unit(contribution, per_record)
    unit = unit / scale
    return DPResult(
        shaped,
        noise_std=None,
        privacy_spent=call.cost,
        mechanism=f"ExponentialMechanism over {query.bins} equal bins (exact sampling, floating-point safe)",
        rank_error=lambda alpha: query.rank_error(unit, alpha),
        bounds=(lower, upper),
        threshold=contribution.threshold,
    )


@frame_aware
@Substitution(**STATS_DOCS)
def quantile(
    a,
    q,
    epsilon=1.0,
    bounds=None,
    axis=None,
    *,
    keepdims=False,
    bins=None,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
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
    bins : int or None, default=None
        The range ``bounds`` is cut into this many equal bins (at most 2**53); the middle
        of one of them is released. None: 2**32 bins, a resolution of about 2⁻³² of the
        range, so that the error is the rank error alone even for millions of values.
        The bins are never built (empty bins between two data values share one score),
        so the time does not depend on ``bins``. Fewer bins: a coarser release, a
        slightly smaller worst-case rank error (logarithmic in ``bins``).
    {user_level}
    {call}
    {on_invalid}
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
    selection. Sampled exactly by ``dpsk.mechanisms.ExponentialMechanism`` (its grouped
    form: the bins between two data values share a score and are never listed):
    floating-point safe. {user_level_privacy} With ``groups``, the weighted quantile and
    this choice of h are dpsk's design following the paper's §4 trade-off (its quantile
    algorithm is in an appendix dpsk's authors did not have).
    {domain}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import stats
    >>> x = np.random.default_rng(0).normal(size=10_000)
    >>> m = stats.median(x, epsilon=1.0, bounds=(-5, 5), random_state=0)
    >>> bool(abs(m) < 0.05)
    True
    """
    call = StatCall.of("dpsk.stats.quantile", locals())
    return _quantile_statistic(call, a, q, bounds, axis, keepdims, bins, return_error, "dpsk.stats.quantile")


@frame_aware
@Substitution(**STATS_DOCS)
def percentile(
    a,
    q,
    epsilon=1.0,
    bounds=None,
    axis=None,
    *,
    keepdims=False,
    bins=None,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
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
    bins : int or None, default=None
        See :func:`quantile`.
    {user_level}
    {call}
    {on_invalid}
    return_error : bool, default=False
        See :func:`quantile`.

    Returns
    -------
    percentile : float or ndarray, or DPResult

    Notes
    -----
    **Privacy.** That of :func:`quantile`.
    {domain}
    """
    q = np.asarray(q, dtype=np.float64)
    if not np.all((q >= 0) & (q <= 100)):
        raise ValueError("percentiles must lie in [0, 100]")
    call = StatCall.of("dpsk.stats.percentile", locals())
    return _quantile_statistic(call, a, q / 100.0, bounds, axis, keepdims, bins, return_error, "dpsk.stats.percentile")


@frame_aware
@Substitution(**STATS_DOCS)
def median(
    a,
    epsilon=1.0,
    bounds=None,
    axis=None,
    *,
    keepdims=False,
    bins=None,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private median: :func:`quantile` at 0.5.

    Parameters
    ----------
    {a}
    {epsilon}
    {bounds}
    {axis}
    {keepdims}
    bins : int or None, default=None
        See :func:`quantile`.
    {user_level}
    {call}
    {on_invalid}
    return_error : bool, default=False
        See :func:`quantile`.

    Returns
    -------
    median : float or ndarray, or DPResult

    Notes
    -----
    **Privacy.** That of :func:`quantile`.
    {domain}
    """
    call = StatCall.of("dpsk.stats.median", locals())
    return _quantile_statistic(call, a, 0.5, bounds, axis, keepdims, bins, return_error, "dpsk.stats.median")
