# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private counts, sums, means, variances and standard deviations.

All of them come from one exact pass over the clipped data (``dpsk._core._exact_sums.exact_moments``:
weighted count, sum and sum of squares of the values centred on the bounds' midpoint and
quantised on a public grid, in 128-bit integers) followed by noisy releases of

* the count N (add/remove neighbours only: with public user counts it is public),
* the sums S = Σ w (c(x) − mid) centred on the middle of the bounds (sensitivity B/2
  instead of max(|lower|, |upper|)), or Σ w c(x) for :func:`sum`,
* the centred sums of squares Q = Σ w ((c(x) − mid)² − B²/8) (sensitivity B²/8),

each normalised by its sensitivity so that every release is a vector query of
sensitivity 1 per output (hence an event that depends on public parameters only), then
combined: mean = mid + S/N, var = Q/N + B²/8 − (S/N)².

Rounding: the normalised statistics are exact rationals (the integer sums, the public
grid, midpoint and scales) converted to float with one correct rounding and scaled by
1 − ``ROUNDING_MARGIN``; by the argument in ``dpsk._core._exact_sums`` the
values handed to the mechanisms of two neighbouring datasets differ by at most 1 per
output, as the calibration assumes, for up to 2**36 values per call and any offset of
the data. ``MomentsQuery.normalised`` computes exactly those values (tests use it).

Estimators (scalers) use :class:`MomentsQuery` directly, inside their own fit protocol::

    query = MomentsQuery("var", epsilon=eps, delta=delta, n_outputs=n_features, rng=rng)
    self._check_privacy_budget(query.event)   # before reading X
    X = validate_data(...); lower, upper = resolve_bounds(...)
    self._spend_privacy_budget(query.event)
    noisy = query.release(X, lower, upper)     # X: (n_samples, n_features), one row per record
    mean, var = noisy.mean()[0], noisy.var()[0]
"""

import math
from fractions import Fraction

import numpy as np

from dpsk._core._exact_sums import ROUNDING_MARGIN
from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import compose
from dpsk.dask._data import is_dask
from dpsk.mechanisms import DiscreteLaplace, Gaussian, Laplace
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
from dpsk.stats._result import DPResult, noise_halfwidth
from dpsk.utils._docstring import Substitution
from dpsk.utils._sparse import exact_moments_of

__all__ = ["MomentsQuery", "count", "mean", "std", "sum", "var"]

_KINDS = ("count", "sum", "mean", "var")


class MomentsQuery:
    """The releases behind one count / sum / mean / var call, decided from public parameters.

    Parameters
    ----------
    kind : {"count", "sum", "mean", "var"}
    epsilon : float
        Budget of the releases (ε > 0).
    delta : float, default=0.0
        > 0: sums and sums of squares get Gaussian noise with (ε_k, δ/k) each (L2
        sensitivity √n_outputs instead of n_outputs in L1); counts stay Laplace.
    n_outputs : int
        Number of statistics released together (one per column).
    relation : {"add_remove", "replace"}
        ``"replace"``: the count is public (public user counts); only sums are released,
        with the replace-one sensitivities (B instead of B/2).
    integer_count : bool, default=False
        Release the count of an unweighted (item-level) query with integer noise.
    rng : numpy.random.Generator

    Attributes
    ----------
    event : PrivacyEvent
        What :meth:`release` costs.
    """

    def __init__(self, kind, *, epsilon, delta=0.0, n_outputs, relation="add_remove", integer_count=False, rng):
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        self.kind = kind
        self.n_outputs = p = int(n_outputs)
        self.relation = relation
        parts = {"count": ["count"], "sum": ["sum"], "mean": ["count", "csum"], "var": ["count", "csum", "csq"]}[kind]
        if relation == "replace":
            if kind == "count":
                raise ValueError("with public user counts the count is public: nothing to release")
            parts = [part for part in parts if part != "count"]
        self.parts = parts
        # One count serves every output, each sum one: weights (1, p^(2/3), ...) minimise
        # the worst-case variance of the ratio (σ_S² ∝ (p/ε_S)², σ_N² ∝ 1/ε_N²).
        shares = split_epsilon(epsilon, [1.0 if part == "count" else p ** (2.0 / 3.0) for part in parts])
        n_vector = len([part for part in parts if part != "count"])
        self.mechanisms = {}
        for part, eps in zip(parts, shares):
            if part == "count":
                cls = DiscreteLaplace if integer_count else Laplace
                self.mechanisms[part] = cls(epsilon=eps, sensitivity=1.0, random_state=rng)
            elif delta > 0:
                self.mechanisms[part] = Gaussian(
                    epsilon=eps, delta=delta / n_vector, sensitivity=math.sqrt(p), random_state=rng
                )
            else:
                self.mechanisms[part] = Laplace(epsilon=eps, sensitivity=float(p), random_state=rng)
        self.event = compose([mech.privacy_event(self._shape(part)) for part, mech in self.mechanisms.items()])

    def _shape(self, part):
        return () if part == "count" else (self.n_outputs,)

    def kappa(self, per_record):
        """Noise-to-variance ratio λ_noise/λ_var of the mean's numerator, per unit threshold².

        λ_var assumes the worst-case data variance (B/2)² (Popoviciu), so κ depends on
        public parameters only; see ``dpsk.stats._contribution``.
        """
        part = "sum" if self.kind == "sum" else "csum"
        noise = self.mechanisms[part].variance(np.zeros(self.n_outputs))
        ratio = 2.0 if self.relation == "replace" else 1.0  # sensitivity over B/2
        return per_record * noise * ratio**2

    def scales(self, lower, upper):
        """The sensitivities per unit weight of each part's sum, for the box [lower, upper]
        (``normalised`` divides by them): of the quantised values y (|y| <= half), Σ w: 1;
        Σ w·y: half (2·half under replace); Σ w·(y² − half²/2): half²/2 (under replace
        Σ w·y², half²); Σ w·(mid + y): |mid| + half (2·half under replace), rounded up so
        that the float scale is >= the exact one. Public: a function of the bounds."""
        mid, half = lower / 2 + upper / 2, upper / 2 - lower / 2
        replace = self.relation == "replace"
        with np.errstate(over="ignore"):  # an infinite scale is refused before the spend
            sum_scale = (
                2.0 * half
                if replace
                else np.array([_rounded_up_sum(abs(float(c)), float(h)) for c, h in zip(mid, half)])
            )
            return {
                "count": 1.0,
                "sum": sum_scale,
                "csum": 2.0 * half if replace else half,
                "csq": half * half if replace else half * half / 2.0,
            }

    def check_scales(self, lower, upper, function):
        """Refuse bounds whose sensitivities overflow float64 (call before the spend)."""
        scales = self.scales(lower, upper)
        if not all(np.all(np.isfinite(scales[part])) for part in self.parts):
            raise ValueError(
                f"{function}: the bounds' sensitivities overflow float64 (sums near the largest float, "
                "or squares of half-widths above ~1.3e154); rescale the data"
            )

    def normalised(self, records, lower, upper, weights, unit, moments=None):
        """The pre-noise statistics, each divided by its sensitivity (and 1 − ROUNDING_MARGIN).

        Returns ``(raw, scale, count)``: ``raw[part]`` is what the mechanism of ``part``
        receives, ``scale[part]`` the per-unit sensitivity that ``raw`` was divided by
        (times ``unit``), ``count`` the weighted count. Every entry of ``raw`` is one
        correctly rounded conversion of an exact rational computed from the exact
        integer sums of :func:`dpsk._core._exact_sums.exact_moments`; see the module docstring
        for why neighbouring datasets' ``raw`` then differ by at most 1 per entry.
        ``moments``: those exact sums, already computed (``dpsk.dask``: merged per chunk).
        """
        if moments is None:
            moments = exact_moments_of(records.X, lower, upper, sample_weight=weights)
        # The declared box (the kernel's own, unless a test swaps the kernel for a broken one).
        mid = lower / 2 + upper / 2
        replace = self.relation == "replace"
        factor = 1.0 - ROUNDING_MARGIN
        count = float(moments.round(moments.about(mid)[0][0]))
        scale = self.scales(lower, upper)
        weight, about_mid, about_mid_sq = (v[0] for v in moments.about(mid))
        raw = {}
        for part in self.parts:
            norm = np.where(scale[part] > 0, scale[part], 1.0) * unit
            if part == "count":
                raw[part] = float(moments.round(weight, norm, factor))
            elif part == "sum":
                raw[part] = moments.round(moments.about(0.0)[1][0], norm, factor)
            elif part == "csum":
                raw[part] = moments.round(about_mid, norm, factor)
            else:
                shift = 0 if replace else moments._exact(scale["csq"]) * weight  # half²/2, as declared
                raw[part] = moments.round(about_mid_sq - shift, norm, factor)
        return raw, scale, count

    def release(self, records, lower, upper, contribution=None, moments=None):
        """Noisy count, sums and sums of squares of the clipped records.

        Parameters
        ----------
        records : Records or ndarray of shape (n_samples, n_outputs)
            The data; an array is one record per row (validated finite, C-contiguous
            float32/float64, as estimators have it after ``validate_data``).
        lower, upper : ndarray of shape (n_outputs,)
            Public bounds (float64).
        contribution : Contribution or None, default=None
            User-level weights; None for item level.
        moments : ExactMoments or None, default=None
            The exact sums of ``records`` if already computed (see :meth:`normalised`).

        Returns
        -------
        NoisyMoments
            ``mean()``, ``var()``, ``std()``, ``count()``, ``total()`` each give
            ``(value, noise_std, interval)``.
        """
        if not isinstance(records, Records):
            records = Records(records, records.shape[0], 1, (records.shape[1],), (1, records.shape[1]))
        contribution = Contribution() if contribution is None else contribution
        m = records.per_record
        weights = contribution.weights
        if weights is not None and m > 1:
            weights = np.repeat(weights, m)
        raw, scale, count = self.normalised(records, lower, upper, weights, contribution.unit * m, moments)
        mid = lower / 2 + upper / 2
        half = upper / 2 - lower / 2
        unit = contribution.unit * m  # largest total weight of one privacy unit's values
        replace = self.relation == "replace"
        noisy = NoisyMoments(mid, half, m, exact_count=count if replace else None)
        for part in self.parts:
            mech = self.mechanisms[part]
            # raw[part] is already divided by norm / (1 − ROUNDING_MARGIN) (see normalised).
            norm = np.where(scale[part] > 0, scale[part], 1.0) * unit / (1.0 - ROUNDING_MARGIN)
            if part == "count" and isinstance(mech, DiscreteLaplace):
                value = float(mech.randomise(int(round(count / unit)))) * unit
            else:
                value = mech.randomise(raw[part]) * norm
            variance = mech.variance(np.zeros(self._shape(part))) * norm**2
            width = _halfwidth_function(mech, 1 if part == "count" else self.n_outputs, norm)
            noisy.add(part, value, variance, width)
        return noisy


def _rounded_up_sum(a, b):
    """The float just above the exact a + b (∞ beyond the largest float)."""
    try:
        return math.nextafter(float(Fraction(a) + Fraction(b)), math.inf)
    except OverflowError:
        return math.inf


def _halfwidth_function(mech, size, norm):
    return lambda alpha: noise_halfwidth(mech, size, alpha) * norm


class NoisyMoments:
    """Released count / sums and their noise: values, variances and tail half-widths."""

    def __init__(self, mid, half, per_record, exact_count=None):
        self.mid, self.half, self.per_record = mid, half, per_record
        self.value, self.variance, self.halfwidth = {}, {}, {}
        # With a public count the sums of squares are released unshifted.
        self.shift = 0.0 if exact_count is not None else half**2 / 2.0
        if exact_count is not None:
            self.add("count", exact_count, 0.0, lambda alpha: 0.0)

    def add(self, part, value, variance, halfwidth):
        self.value[part] = value
        self.variance[part] = variance
        self.halfwidth[part] = halfwidth

    def interval(self, part, alpha):
        t = self.halfwidth[part](alpha)
        return self.value[part] - t, self.value[part] + t

    # -- the statistics -----------------------------------------------------------------

    def count(self):
        return self.value["count"], np.sqrt(self.variance["count"]), lambda alpha: self.interval("count", alpha)

    def total(self):
        return self.value["sum"], np.sqrt(self.variance["sum"]), lambda alpha: self.interval("sum", alpha)

    def _denominator(self):
        return max(float(self.value["count"]), 1.0)  # a noisy count below one value: use one

    def mean(self):
        n = self._denominator()
        s = self.value["csum"]
        lower, upper = self.mid - self.half, self.mid + self.half
        value = np.clip(self.mid + s / n, lower, upper)
        std = np.sqrt(self.variance["csum"] + (s / n) ** 2 * self.variance["count"]) / n

        def interval(alpha):
            s_lo, s_hi = self.interval("csum", alpha / 2.0)
            n_lo, n_hi = self.interval("count", alpha / 2.0)
            lo, hi = _ratio_range(s_lo, s_hi, n_lo, n_hi)
            return np.clip(self.mid + lo, lower, upper), np.clip(self.mid + hi, lower, upper)

        return value, std, interval

    def var(self):
        n = self._denominator()
        s, q = self.value["csum"], self.value["csq"]
        top = self.half**2
        value = np.clip(q / n + self.shift - (s / n) ** 2, 0.0, top)
        # delta method at the released values
        d_q, d_s = 1.0 / n, -2.0 * s / n**2
        d_n = -q / n**2 + 2.0 * s**2 / n**3
        std = np.sqrt(d_q**2 * self.variance["csq"] + d_s**2 * self.variance["csum"] + d_n**2 * self.variance["count"])

        def interval(alpha):
            q_lo, q_hi = self.interval("csq", alpha / 3.0)
            s_lo, s_hi = self.interval("csum", alpha / 3.0)
            n_lo, n_hi = self.interval("count", alpha / 3.0)
            qn_lo, qn_hi = _ratio_range(q_lo, q_hi, n_lo, n_hi)
            m_lo, m_hi = _ratio_range(s_lo, s_hi, n_lo, n_hi)
            sq_hi = np.maximum(m_lo**2, m_hi**2)
            sq_lo = np.where((m_lo <= 0) & (m_hi >= 0), 0.0, np.minimum(m_lo**2, m_hi**2))
            lo = np.clip(qn_lo + self.shift - sq_hi, 0.0, top)
            hi = np.clip(qn_hi + self.shift - sq_lo, 0.0, top)
            return lo, hi

        return value, std, interval

    def std(self):
        variance, var_std, var_interval = self.var()
        value = np.sqrt(variance)
        with np.errstate(divide="ignore", invalid="ignore"):
            std = np.where(value > 0, var_std / (2.0 * value), np.sqrt(var_std))

        def interval(alpha):
            lo, hi = var_interval(alpha)
            return np.sqrt(lo), np.sqrt(hi)

        return value, std, interval


def _ratio_range(num_lo, num_hi, den_lo, den_hi):
    """Range of num/den over the boxes; unbounded where the denominator may be <= 0."""
    num_lo, num_hi = np.asarray(num_lo, dtype=np.float64), np.asarray(num_hi, dtype=np.float64)
    if den_lo <= 0:
        return np.full(num_lo.shape, -np.inf), np.full(num_hi.shape, np.inf)
    corners = np.stack([num_lo / den_lo, num_lo / den_hi, num_hi / den_lo, num_hi / den_hi])
    return corners.min(axis=0), corners.max(axis=0)


# ---------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------


def moments_query(call, kind, n_outputs):
    """The :class:`MomentsQuery` of one public call (in memory and Dask)."""
    return MomentsQuery(
        kind,
        epsilon=call.release_epsilon,
        delta=call.delta,
        n_outputs=n_outputs,
        relation=call.relation,
        integer_count=not call.user_level,
        rng=call.rng,
    )


def _moments_statistic(call, kind, statistic, a, bounds, axis, keepdims, return_error, function):
    if is_dask(a):  # per-chunk exact sums on the cluster, the same release (dpsk.dask)
        from dpsk.dask._fit import moments_statistic

        return moments_statistic(call, kind, statistic, a, bounds, axis, keepdims, return_error, function)
    arr = as_array(a)
    _, _, per_record, out_shape, _ = layout(arr, axis)
    n_outputs = int(np.prod(out_shape, dtype=np.int64))
    if kind != "count":
        call.plan_bounds(bounds, n_outputs, per_record)
    query = moments_query(call, kind, n_outputs)
    if kind != "count":
        call.require_public("private" if bounds is None else bounds, "bounds")  # left out: private
    call.check(query.event)
    arr = call.screen(arr)
    records = as_records(arr, axis, allow_empty=call.on_invalid != "raise")
    if kind != "count":
        lower, upper = resolve_stat_bounds(bounds, records, function, feature_names=column_names(a, axis))
    else:
        lower = upper = np.zeros(records.n_outputs)
    if kind != "count":  # before the spend (released bounds stay below 2**256)
        query.check_scales(lower, upper, function)
    call.spend(records.n_records, function=function, params=(bounds, axis, keepdims), data=(arr,))
    lower, upper = call.release_bounds(records, lower, upper)
    kappa = None if kind in ("count", "sum") else query.kappa(per_record)
    contribution = call.contribution(kappa=kappa)
    noisy = query.release(records, lower, upper, contribution)
    return moments_result(
        call, kind, statistic, query, records, noisy, keepdims, return_error, lower, upper, contribution
    )


def moments_result(call, kind, statistic, query, records, noisy, keepdims, return_error, lower, upper, contribution):
    """The statistic (or its :class:`DPResult`) from the released moments (post-processing)."""
    n_outputs = records.n_outputs
    value, std, interval = statistic(noisy)
    dtype = np.int64 if kind == "count" and not call.user_level else records.X.dtype
    if kind == "count":
        value = np.full(n_outputs, value)
        std = np.full(n_outputs, std)
    shaped = shape_output(value, records, keepdims, dtype)
    if not return_error:
        return shaped
    return DPResult(
        shaped,
        noise_std=shape_output(std, records, keepdims, np.float64),
        privacy_spent=call.cost,
        mechanism=_describe(query),
        interval=lambda alpha: tuple(
            shape_output(np.broadcast_to(v, (n_outputs,)), records, keepdims, np.float64) for v in interval(alpha)
        ),
        bounds=None if kind == "count" else (lower, upper),
        threshold=contribution.threshold,
    )


def _describe(query):
    names = {type(m).__name__ for m in query.mechanisms.values()}
    return " + ".join(sorted(names)) + " (floating-point safe)"


@frame_aware
@Substitution(**STATS_DOCS)
def count(
    a,
    epsilon=1.0,
    axis=None,
    *,
    keepdims=False,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private number of values reduced over ``axis``.

    The private counterpart of ``a.shape[0] * (values per record)``: how many values
    each entry of a reduction over ``axis`` combines (the same for every entry).

    Parameters
    ----------
    {a}
    {epsilon}
    {axis}
    {keepdims}
    {groups}
    {contribution_bound}
    {threshold}
    {accountant}
    {random_state}
    {on_invalid}
    {return_error}

    Returns
    -------
    count : int, float or ndarray, or DPResult
        Item level: an integer (discrete Laplace noise), possibly negative. With
        ``groups``: a float, the number of values with each user's rows weighted down to
        at most ``threshold`` rows (an estimate of the *capped* count, below the true
        count when users have more rows).

    Notes
    -----
    **Privacy.** ε-DP. Item level: add/remove one record (``a[i]``), sensitivity the
    number of values per record; exact discrete Laplace noise. With ``groups``:
    add/remove one user with all their rows; each user's total weight is at most h, the
    count is released with Laplace noise of sensitivity h (times the values per record)
    on a lattice. When ``threshold`` is None, h is the 0.9-quantile of the users' row
    counts chosen by the exponential mechanism with 10% of ε. Floating-point safe.
    {domain}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import stats
    >>> stats.count(np.zeros(1000), epsilon=1.0, random_state=0)  # doctest: +SKIP
    999
    """
    call = StatCall.of("dpsk.stats.count", locals())
    return _moments_statistic(
        call, "count", NoisyMoments.count, a, None, axis, keepdims, return_error, "dpsk.stats.count"
    )


@frame_aware
@Substitution(**STATS_DOCS)
def sum(
    a,
    epsilon=1.0,
    bounds=None,
    axis=None,
    *,
    delta=0.0,
    keepdims=False,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private sum of clipped values over ``axis``.

    Parameters
    ----------
    {a}
    {epsilon}
    {bounds}
    {axis}
    {delta}
    {keepdims}
    {user_level}
    {call}
    {on_invalid}
    {return_error}

    Returns
    -------
    sum : float or ndarray, or DPResult
        float32 for float32 input. With ``groups``: the sum with each user's rows weighted
        down to at most ``threshold`` rows (below the true sum's magnitude when users
        have more rows).

    Notes
    -----
    **Privacy.** ε-DP (or (ε, δ)-DP with ``delta > 0``: Gaussian noise). Values are
    clipped to ``bounds``; one record (or, with ``groups``, one user, whose rows weigh at
    most h) moves each entry by at most ``max(|lower|, |upper|)`` (times h and the values
    per record). The entries are released as one vector query (L1 sensitivity summed
    over the entries, i.e. ε shared equally). {user_level_privacy} Released: the noisy
    sums. Floating-point safe (noise on a lattice).
    {domain}
    """
    call = StatCall.of("dpsk.stats.sum", locals())
    return _moments_statistic(
        call, "sum", NoisyMoments.total, a, bounds, axis, keepdims, return_error, "dpsk.stats.sum"
    )


@frame_aware
@Substitution(**STATS_DOCS)
def mean(
    a,
    epsilon=1.0,
    bounds=None,
    axis=None,
    *,
    delta=0.0,
    keepdims=False,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private mean of clipped values over ``axis``.

    With ``groups``, the mean weights each user's rows as in Epasto et al. (2020,
    Algorithm 1): a user with s rows gives each row weight min(1, h/s), so light users
    count in full and heavy users are capped at h rows' worth without dropping any row
    (``contribution_bound="smooth"``); ``"limit"`` keeps h random rows per user instead
    (sample limiting, for comparison). h balances the sampling variance against the
    privacy noise (the paper's optimum).

    Parameters
    ----------
    {a}
    {epsilon}
    {bounds}
    {axis}
    {delta}
    {keepdims}
    {user_level}
    {call}
    {on_invalid}
    {return_error}

    Returns
    -------
    mean : float or ndarray, or DPResult
        Within ``bounds``; float32 for float32 input.

    Notes
    -----
    **Privacy.** ε-DP (or (ε, δ)-DP with ``delta > 0``: Gaussian noise on the sums).
    Released: a noisy count N (sensitivity 1 record, or h rows of one user) with a share
    ε/(1 + p^(2/3)) of the budget (p entries), and the noisy centred sums
    Σ (clip(x) − mid) (sensitivity (upper − lower)/2 per value) with the rest, as one
    vector query; mean = mid + S/N, clipped to the bounds. {user_level_privacy}
    Floating-point safe (noise on a lattice).
    {domain}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import stats
    >>> x = np.random.default_rng(0).uniform(0, 1, 10_000)
    >>> result = stats.mean(x, epsilon=1.0, bounds=(0, 1), random_state=0, return_error=True)
    >>> bool(abs(result.value - x.mean()) < 0.01), bool(result.noise_std > 0)
    (True, True)
    """
    call = StatCall.of("dpsk.stats.mean", locals())
    return _moments_statistic(
        call, "mean", NoisyMoments.mean, a, bounds, axis, keepdims, return_error, "dpsk.stats.mean"
    )


@frame_aware
@Substitution(**STATS_DOCS)
def var(
    a,
    epsilon=1.0,
    bounds=None,
    axis=None,
    *,
    delta=0.0,
    keepdims=False,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private variance (``ddof=0``) of clipped values over ``axis``.

    Parameters
    ----------
    {a}
    {epsilon}
    {bounds}
    {axis}
    {delta}
    {keepdims}
    {user_level}
    {call}
    {on_invalid}
    {return_error}

    Returns
    -------
    var : float or ndarray, or DPResult
        In [0, ((upper − lower)/2)²]; float32 for float32 input.

    Notes
    -----
    **Privacy.** ε-DP (or (ε, δ)-DP with ``delta > 0``). Released: a noisy count
    (sensitivity 1 record), the centred sums (sensitivity (upper − lower)/2 per value)
    and the centred sums of squares shifted to [−B²/8, B²/8] (sensitivity B²/8, B =
    upper − lower), with shares 1 : p^(2/3) : p^(2/3) of ε (p entries); var =
    Q/N + B²/8 − (S/N)², clipped to its possible range. {user_level_privacy}
    Floating-point safe (noise on a lattice).
    {domain}
    """
    call = StatCall.of("dpsk.stats.var", locals())
    return _moments_statistic(call, "var", NoisyMoments.var, a, bounds, axis, keepdims, return_error, "dpsk.stats.var")


@frame_aware
@Substitution(**STATS_DOCS)
def std(
    a,
    epsilon=1.0,
    bounds=None,
    axis=None,
    *,
    delta=0.0,
    keepdims=False,
    groups=None,
    contribution_bound="smooth",
    threshold=None,
    public_user_counts=False,
    accountant=None,
    random_state=None,
    on_invalid="raise",
    return_error=False,
):
    """Differentially private standard deviation (``ddof=0``): the square root of :func:`var`.

    Parameters
    ----------
    {a}
    {epsilon}
    {bounds}
    {axis}
    {delta}
    {keepdims}
    {user_level}
    {call}
    {on_invalid}
    {return_error}

    Returns
    -------
    std : float or ndarray, or DPResult
        float32 for float32 input.

    Notes
    -----
    **Privacy.** Exactly that of :func:`var` (the square root is post-processing).
    {user_level_privacy}
    {domain}
    """
    call = StatCall.of("dpsk.stats.std", locals())
    return _moments_statistic(call, "var", NoisyMoments.std, a, bounds, axis, keepdims, return_error, "dpsk.stats.std")
