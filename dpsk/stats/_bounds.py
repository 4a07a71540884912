# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private sensitivity parameters: per-column bounds and a bound on row norms.

Estimators need public bounds (``bounds``, ``bounds_X``, ``data_norm``, ``row_norm``).
When none are known they can be *estimated* with part of the budget; this module holds
the releases, used by :func:`dpsk.stats.bounds` and by the estimators' ``"private"``
value (``dpsk.utils._private_bounds``).

Three releases
==============

1. **Columns, public domain.** For each column, the quantiles ``quantiles = (q_lo,
   q_hi)`` by the exact exponential mechanism over ``domain`` (``QuantileQuery``, 2³²
   bins): 2·d selections, each with ε/(2d). A row holds one value of every column, so
   the d columns' selections all see it: they compose (basic composition, ε in total),
   and are recorded as one composite event.

2. **Columns, no domain: a noisy logarithmic histogram** (the idea of Google's
   differential-privacy library, "approximate bounds"). The float range is cut into
   bins by sign and binary exponent: {0}, and for every exponent e of float64
   (e = −1073, …, 1024) the bins [2^(e−1), 2^e) and (−2^e, −2^(e−1)]: m = 4197 bins per
   column, covering every finite float. Each column's counts get discrete Laplace noise
   (:class:`~dpsk.mechanisms.DiscreteLaplace`, exact). One row adds 1 to one bin of
   *each* column, so the L1 sensitivity of all d histograms together is d: the noise
   scale is b = d/ε, and the whole release is ε-DP. Everything after it is
   post-processing: for each column, the bound is the outer edge of the outermost bins
   (lowest and highest) whose noisy count reaches the threshold τ. A column none of
   whose bins reaches it (too little budget per column: many columns, few rows) gets the
   bounds of the *pooled* histogram, the sum of the d noisy histograms (post-processing
   too: its signal grows d-fold, its noise √d-fold), with its own threshold τ_d; if no
   pooled bin reaches τ_d either, the public default (−1, 1): the data are too few
   for the budget (roughly, fewer than τ_d/d values in the fullest octave). A column
   whose only passing bin is {0} is treated as one without (the bounds are never a
   single point). Released bounds are capped at ±2²⁵⁶ (``MAX_BOUND``).

   *Second chance, growth and sign* (post-processing, :func:`_grown_box`). At a small
   budget per column only the fullest octaves pass τ, or none does (6 N(0, 1) columns
   at ε = 0.05 gave boxes such as (−1, −0.5), holding 14 % of a column). A column with
   no passing bin first tries the 65 bins of {0} and the magnitudes [2⁻¹⁶, 2¹⁶), with
   the threshold of a union bound over those 65 only. The box then grows outwards bin by
   bin (``GROWTH_STEPS`` per side at most) while the next bin passes the threshold of a
   union bound over only the 2·``GROWTH_STEPS`` bins tested, and a box on one side of 0
   becomes [−M, M] when the mirror images of its k bins hold more, in sum, than a sum
   of k noises (k·d for the pooled histogram) reaches with probability β (Chernoff, as
   below). Both are decided on the noisy counts only.

   *Thresholds.* Discrete Laplace noise Z of scale b on the integers has
   P(Z >= k) = q^k/(1 + q) <= e^(−k/b) (q = e^(−1/b), k >= 1). An empty bin passes
   the threshold only if its noise reaches τ; over the m bins of a column, by the
   union bound, P(some empty bin passes) <= m·e^(−τ/b). With τ = b·ln(m·d/β) this is at
   most β/d per column, β over the d columns (``failure_probability``, default 1e-3;
   β per release, not per column: at β per column, one of Adult's 107 columns took a
   bin at −2²⁵⁶ in one seed of 20): with probability >= 1 − β, every bin chosen holds
   data, so the bounds are no wider than the data's binary orders of magnitude (at most
   twice the largest |value|; 1 − 4β with the second-chance, growth and sign tests
   below, each also at β/d per column). For the pooled
   histogram the noise of an empty bin is a sum S of d independent such Z, and τ_d is
   the smallest value with m·P(S >= τ_d) <= β by Chernoff's bound
   P(S >= τ) <= min_λ E[e^(λZ)]^d e^(−λτ), E[e^(λZ)] = (1 − q)²/((1 − q e^λ)(1 − q e^(−λ)))
   (0 < λ < 1/b), minimised over a grid of λ and solved for τ by bisection. Bins
   holding fewer than about τ values may be missed (their values are then clipped).
   The thresholds affect utility only, never privacy. (The mechanism rounds its scale
   up by a relative 2⁻⁵⁰ or so, which the thresholds ignore.)

3. **Row norms.** An upper quantile (``quantiles``, default 0.9) of the rows' L2 norms
   by the exact exponential mechanism (a row has one norm: sensitivity 1, as for any
   quantile), over ``domain`` = [0, D] when given (2³² bins, the whole ε). Without a
   domain, in two steps of ε/2: the logarithmic histogram of the norms (one column,
   as in 2.) gives D, the upper edge of their outermost bin passing the threshold;
   then the quantile over [0, D]. (A quantile over a logarithmic grid of the whole
   float range does not work: the ~1000 empty octaves above the data outweigh the
   (1 − q)·n ranks that separate them from the quantile unless ε·(1 − q)·n ≫ 20.)
   The released value is the upper edge of the chosen bin (a bound, not a middle).

Each release's cost is known from the parameters and the shape (public), before any
value is read.
"""

import functools
import math

import numpy as np
import scipy.sparse as sp

from dpsk.accounting._calibration import split_epsilon
from dpsk.accounting._events import compose
from dpsk.mechanisms import DiscreteLaplace
from dpsk.stats._quantile import QuantileQuery, _check_q

__all__ = ["LOG_BINS_PER_COLUMN", "BoundsQuery", "bounds", "histogram_threshold", "pooled_threshold", "row_norms"]

#: Binary exponents e of float64 values (x = m·2^e, m in [0.5, 1)): −1073 (the smallest
#: subnormal) to 1024.
_E_MIN, _E_MAX = -1073, 1024
_N_EXP = _E_MAX - _E_MIN + 1
#: Bins per column of the logarithmic histogram: the negative exponents, {0}, the positive ones.
LOG_BINS_PER_COLUMN = 2 * _N_EXP + 1

#: Bounds of the columns when no bin of the (pooled) logarithmic histogram passes its
#: threshold: a public default (the data are then too few for the budget to say more).
FALLBACK_BOUNDS = (-1.0, 1.0)

#: The released bounds never exceed this magnitude (values beyond are clipped by the
#: estimators): half-widths, squares and sums of squares of clipped values then stay
#: far from float64's overflow whatever the data (an overflow after the data is read
#: would be an error that depends on the values).
MAX_BOUND = 2.0**256

#: Default quantile levels: per column, and of row norms.
COLUMN_QUANTILES = (0.01, 0.99)
ROW_NORM_QUANTILE = 0.9


def histogram_threshold(n_columns, epsilon, failure_probability):
    """τ = b·ln(m/β), b = d/ε: the noisy count an empty bin reaches with probability <= β/m."""
    scale = n_columns / epsilon
    return scale * math.log(LOG_BINS_PER_COLUMN / failure_probability)


def row_norms(X):
    """The rows' L2 norms, capped at ``MAX_BOUND`` (no overflow warning: a warning that
    depends on the values would itself be a release). Sparse X: from its stored values."""
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
        else:
            norms = np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1)
    return np.minimum(norms, MAX_BOUND)


def _log_histograms(X):
    """The exact counts of every column's values per logarithmic bin: (d, LOG_BINS_PER_COLUMN).

    Sparse X: its stored values are binned, and each column's implicit zeros are counted
    in the zero bin (the same counts as the dense matrix's)."""
    n, d = X.shape
    counts = np.zeros((d, LOG_BINS_PER_COLUMN), dtype=np.int64)
    if not n:
        return counts
    if sp.issparse(X):
        X = sp.csc_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        for j in range(d):
            values = X.data[X.indptr[j] : X.indptr[j + 1]]
            counts[j] = np.bincount(_log_bin_index(values), minlength=LOG_BINS_PER_COLUMN)
            counts[j, _N_EXP] += n - values.size
        return counts
    index = _log_bin_index(np.asarray(X, dtype=np.float64))
    for j in range(d):
        counts[j] = np.bincount(index[:, j], minlength=LOG_BINS_PER_COLUMN)
    return counts


def _log_mgf(lam, q):
    """log E[exp(λZ)] of discrete Laplace noise P(z) ∝ q^|z|, for 0 <= λ < −ln q.

    In logs: at a huge ε, q underflows to 0 (no noise) and e^λ alone would overflow."""
    if q == 0.0:
        return 0.0
    log_q = math.log(q)
    return 2.0 * math.log1p(-q) - math.log1p(-math.exp(log_q + lam)) - math.log1p(-math.exp(log_q - lam))


def pooled_threshold(n_columns, epsilon, failure_probability):
    """τ_d with m·P(S >= τ_d) <= β for S the sum of d independent discrete Laplace noises
    of scale b = d/ε (the pooled histogram's noise on an empty bin), by Chernoff's bound
    P(S >= τ) <= min over λ of exp(d·log E[e^(λZ)] − λτ)."""
    d = int(n_columns)
    if d == 1:
        return histogram_threshold(1, epsilon, failure_probability)
    return sum_threshold(d, d / epsilon, LOG_BINS_PER_COLUMN, failure_probability)


@functools.lru_cache(maxsize=256)
def sum_threshold(terms, scale, tests, failure_probability):
    """The smallest τ (to a relative 2⁻⁶⁰ of the bracket) with tests·P(S >= τ) <= β, for S
    the sum of ``terms`` independent discrete Laplace noises of ``scale`` (Chernoff's bound
    P(S >= τ) <= min over λ in (0, 1/b) of exp(terms·log E[e^(λZ)] − λτ))."""
    q = math.exp(-1.0 / scale)
    target = math.log(failure_probability / tests)
    lams = [(k / 400.0) / scale for k in range(1, 400)]

    def log_tail(tau):
        return min(terms * _log_mgf(lam, q) - lam * tau for lam in lams)

    low, high = 0.0, scale * math.log(tests / failure_probability) * terms
    for _ in range(60):  # bisection: log_tail decreases in τ
        middle = (low + high) / 2.0
        low, high = (low, middle) if log_tail(middle) <= target else (middle, high)
    return high


def _log_bin_index(X):
    """The logarithmic-histogram bin of every value (finite X): int64, same shape.

    0 … N−1: negative values, most negative first (exponent 1024 first); N: zero;
    N+1 … 2N: positive values, smallest first (N = number of exponents).
    """
    _, exponent = np.frexp(X)
    exponent = exponent.astype(np.int64)
    index = np.full(X.shape, _N_EXP, dtype=np.int64)
    positive, negative = X > 0, X < 0
    index[positive] = _N_EXP + 1 + (exponent[positive] - _E_MIN)
    index[negative] = _N_EXP - 1 - (exponent[negative] - _E_MIN)
    return index


def _bin_edges(index):
    """(lower, upper) edges of log-histogram bin ``index`` (a bin's values lie within them),
    capped at ±``MAX_BOUND``."""
    if index == _N_EXP:
        return 0.0, 0.0
    cap = int(math.log2(MAX_BOUND))  # bins beyond the cap become its last bin
    if index > _N_EXP:
        e = min(index - _N_EXP - 1 + _E_MIN, cap)
        return math.ldexp(1.0, e - 1), math.ldexp(1.0, e)
    e = min(_N_EXP - 1 - index + _E_MIN, cap)
    return -math.ldexp(1.0, e), -math.ldexp(1.0, e - 1)


def _passing_edges(passing):
    """(lower, upper) of the outermost passing bins; None if none passes or only {0} does
    (a degenerate box: the caller falls back to wider public-or-pooled bounds)."""
    if not passing.size or (passing.size == 1 and passing[0] == _N_EXP):
        return None
    return _bin_edges(int(passing[0]))[0], _bin_edges(int(passing[-1]))[1]


class BoundsQuery:
    """The releases behind one private-bounds estimate (public parameters only).

    Parameters
    ----------
    which : {"columns", "row_norm"}
    n_columns : int
        Columns of the data (public shape); 1 for ``"row_norm"``.
    epsilon : float
    domain : None, tuple (lower, upper), or float
        Public domain: per-column (lower, upper) (scalars or arrays) for ``"columns"``;
        an upper bound D on the norm (or (0, D)) for ``"row_norm"``. None: no domain.
    quantiles : None, pair of float, or float
        ``"columns"`` with a domain: (q_lo, q_hi); ``"row_norm"``: one level.
    failure_probability : float
        β of the histogram threshold (columns without a domain).
    rng : numpy.random.Generator
    contribution : int, default=1
        ``"columns"`` without a domain: how many values of each column one privacy unit
        can change in L1 (1 for add/remove one row; 2·m for replacing the m labels of one
        user, as :class:`~dpsk.linear_model.LabelPrivateLinearRegression`'s relation does).
        The histograms' sensitivity and thresholds scale with it.

    Attributes
    ----------
    event : PrivacyEvent
        The cost, known before the data is read.
    method : str
        ``"quantile"``, ``"log-histogram"`` or ``"log-histogram, quantile"``.
    """

    def __init__(
        self, which, n_columns, *, epsilon, domain=None, quantiles=None, failure_probability=1e-3, rng, contribution=1
    ):
        if which not in ("columns", "row_norm"):
            raise ValueError(f'which must be "columns" or "row_norm", got {which!r}')
        self.contribution = int(contribution)
        if self.contribution < 1 or (self.contribution > 1 and (which != "columns" or domain is not None)):
            raise ValueError("contribution > 1 is supported by the columns' histograms without a domain only")
        if not 0.0 < failure_probability < 1.0:
            raise ValueError(f"failure_probability must lie in (0, 1), got {failure_probability!r}")
        self.which = which
        self.n_columns = int(n_columns)
        self.epsilon = float(epsilon)
        self.domain = domain
        self.failure_probability = float(failure_probability)
        self.rng = rng
        if which == "columns":
            levels = COLUMN_QUANTILES if quantiles is None else quantiles
            self.q = _check_q(levels).reshape(-1)
            if self.q.size != 2 or self.q[0] > self.q[1]:
                raise ValueError("quantiles must be a pair (q_lo, q_hi) with q_lo <= q_hi")
            if domain is None:
                self.method = "log-histogram"
                sensitivity = self.n_columns * self.contribution
                self.mechanism = DiscreteLaplace(epsilon=epsilon, sensitivity=sensitivity, random_state=rng)
                self.event = compose([self.mechanism.privacy_event((self.n_columns, LOG_BINS_PER_COLUMN))])
                # The thresholds see the noise's scale n_columns·contribution/ε.
                unit_epsilon = epsilon / self.contribution
                # β per fit, not per column: β/d for each column's tests (a false bin at
                # ±2**256 in one of Adult's 107 columns cost GaussianNB 0.04 accuracy).
                self.column_failure = self.failure_probability / self.n_columns
                self.threshold = histogram_threshold(self.n_columns, unit_epsilon, self.column_failure)
                self.pooled_threshold = pooled_threshold(self.n_columns, unit_epsilon, self.failure_probability)
            else:
                self.method = "quantile"
                self.query = QuantileQuery(self.q, epsilon=epsilon, n_outputs=self.n_columns, bins=None, rng=rng)
                self.event = self.query.event
        else:
            level = ROW_NORM_QUANTILE if quantiles is None else quantiles
            self.q = _check_q(level).reshape(-1)
            if self.q.size != 1:
                raise ValueError('with which="row_norm", quantiles must be one level')
            if domain is not None:
                self.method, self.scale = "quantile", None
                self.query = QuantileQuery(self.q, epsilon=epsilon, n_outputs=1, bins=None, rng=rng)
                self.event = self.query.event
            else:  # half of ε finds the norms' scale, half the quantile below it
                self.method = "log-histogram, quantile"
                eps_scale, eps_quantile = split_epsilon(epsilon, 2), split_epsilon(epsilon, 2)
                self.scale = BoundsQuery(
                    "columns", 1, epsilon=eps_scale, failure_probability=failure_probability, rng=rng
                )
                self.query = QuantileQuery(self.q, epsilon=eps_quantile, n_outputs=1, bins=None, rng=rng)
                self.event = compose([self.scale.event, self.query.event])

    def domain_arrays(self):
        """The public domain as (lower, upper) arrays of shape (n_columns,) (None without one)."""
        if self.domain is None:
            return None
        if self.which == "row_norm":
            upper = self.domain[1] if isinstance(self.domain, (tuple, list)) else self.domain
            upper = float(upper)
            if not (math.isfinite(upper) and upper > 0):
                raise ValueError("the domain of row norms must be a finite upper bound > 0")
            return np.zeros(1), np.full(1, upper)
        from dpsk.utils.validation import check_bounds

        return check_bounds(tuple(self.domain), self.n_columns, name="domain")

    def release(self, values):
        """The release on validated finite ``values``: (lower, upper) arrays for
        ``"columns"`` (values of shape (n, n_columns)), a float for ``"row_norm"``
        (values: the n row norms). Call after the spend."""
        if self.which == "columns":
            if self.method == "quantile":
                lower, upper = self.domain_arrays()
                records = values if sp.issparse(values) else np.ascontiguousarray(values, dtype=np.float64)
                out = self.query.release(records, lower, upper)
                return out[0].copy(), out[1].copy()
            return self._histogram_bounds(values if sp.issparse(values) else np.asarray(values, dtype=np.float64))
        norms = np.asarray(values, dtype=np.float64).reshape(-1, 1)
        if self.method == "quantile":
            top = float(self.domain_arrays()[1][0])
            if top > MAX_BOUND:  # else the quantile's own clip to [0, top] caps the norms
                norms = np.minimum(norms, MAX_BOUND)
        else:  # the upper edge of the norms' outermost (noisy) logarithmic bin
            norms = np.minimum(norms, MAX_BOUND)
            top = float(self.scale.release(norms)[1][0])
            if not top > 0:
                return 0.0
        middle = float(self.query.release(norms, np.zeros(1), np.full(1, top))[0, 0])
        width = top / self.query.bins
        return float(min(np.nextafter(middle + width / 2, np.inf), top))

    def _histogram_bounds(self, X):
        d = X.shape[1]
        counts = _log_histograms(X)
        noisy = self.mechanism.randomise(counts)
        # Everything below is post-processing of the noisy histograms.
        scale = self.n_columns * self.contribution / self.epsilon
        pooled = noisy.sum(axis=0)
        pooled_box = _grown_box(pooled, self.pooled_threshold, d, scale, self.failure_probability)
        lower, upper = np.empty(d), np.empty(d)
        for j in range(d):
            box = _grown_box(noisy[j], self.threshold, 1, scale, self.column_failure)
            lower[j], upper[j] = box or pooled_box or FALLBACK_BOUNDS
        return lower, upper


#: Bins a box may grow by on each side after its first passing bins (see _grown_box).
GROWTH_STEPS = 8
#: The bins of the magnitudes [2**-16, 2**16), both signs, and {0} (in bin order): the
#: second chance of _grown_box. Without {0}, a one-hot column whose ones passed only here
#: got the box (1, 2), its zeros clipped to 1.
_WINDOW = np.concatenate(
    [_N_EXP - 1 - (np.arange(16, -16, -1) - _E_MIN), [_N_EXP], _N_EXP + 1 + (np.arange(-15, 17) - _E_MIN)]
)


def _grown_edge(noisy, edge, step, threshold):
    """The outermost bin edge reached from ``edge`` in direction ``step`` (±1), at most
    ``GROWTH_STEPS`` bins, while each next bin passes ``threshold``. The zero bin does
    not grow (its neighbours are subnormal values)."""
    for _ in range(GROWTH_STEPS):
        if edge == _N_EXP or not 0 <= edge + step < noisy.size or noisy[edge + step] < threshold:
            break
        edge += step
    return edge


def _grown_box(noisy, threshold, terms, scale, failure_probability):
    """The bounds from one noisy logarithmic histogram (``terms`` noises of ``scale`` per
    bin: 1 for a column, d for the pooled one): None if no bin but {0} passes ``threshold``.

    Post-processing in three steps (the thresholds bound the chance that an *empty* bin
    is taken for data at β each; utility only):

    1. the outermost bins passing ``threshold`` (union bound over all m bins); if none
       does, those among the 65 bins of {0} and the magnitudes [2⁻¹⁶, 2¹⁶) (``_WINDOW``)
       passing the threshold of a union bound over these 65 only (lower);
    2. growth: the box takes the next bin outwards on each side, up to
       ``GROWTH_STEPS`` times, while its count passes a lower threshold (a union bound
       over the 2·``GROWTH_STEPS`` bins tested, not m): at low signal-to-noise only the
       fullest octaves pass step 1, and their neighbours hold data too;
    3. sign: a box on one side of 0 is mirrored to the other side (and so spans 0) when
       the mirror images of its bins hold, together, more than a sum of as many noises
       reaches (one test): data symmetric around 0 otherwise gave e.g. (0.5, 1) for N(0, 1).
    """
    passing = np.flatnonzero(noisy >= threshold)
    if _passing_edges(passing) is None:  # second chance: everyday magnitudes only
        window = sum_threshold(terms, scale, _WINDOW.size, failure_probability)
        passing = _WINDOW[noisy[_WINDOW] >= window]
        if _passing_edges(passing) is None:
            return None
    grow = sum_threshold(terms, scale, 2 * GROWTH_STEPS, failure_probability)
    low, high = _grown_edge(noisy, int(passing[0]), -1, grow), _grown_edge(noisy, int(passing[-1]), 1, grow)
    lower, upper = _bin_edges(low)[0], _bin_edges(high)[1]
    if lower >= 0.0 or upper <= 0.0:  # one-sided: are the mirror images of its bins empty?
        bins = np.arange(low, high + 1)
        bins = bins[bins != _N_EXP]
        mirror = 2 * _N_EXP - bins
        if noisy[mirror].sum() >= sum_threshold(terms * bins.size, scale, 1, failure_probability):
            top = max(abs(lower), abs(upper))
            lower, upper = -top, top
    return lower, upper


def bounds(
    X,
    epsilon=1.0,
    *,
    which="columns",
    domain=None,
    quantiles=None,
    failure_probability=1e-3,
    accountant=None,
    random_state=None,
    return_error=False,
):
    """Differentially private bounds: per column, or on the rows' L2 norms.

    For pipelines that need public bounds (``bounds``, ``data_norm``, ``row_norm`` of
    an estimator) and have none: estimate them with part of the budget, then pass the
    result as public bounds to the next step (the two costs compose).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data; each row is one record (the privacy unit). A 1-d array is one column.
    epsilon : float, default=1.0
        Privacy parameter ε > 0 of the whole call (every column together).
    which : {"columns", "row_norm"}, default="columns"
        ``"columns"``: a (lower, upper) pair per column. ``"row_norm"``: an upper bound
        on the rows' L2 norms (an upper quantile of them).
    domain : None, tuple (lower, upper) or float, default=None
        Public domain. ``"columns"``: (lower, upper) scalars or arrays of shape
        (n_features,), the bounds are then DP quantiles inside it (exact exponential
        mechanism). ``"row_norm"``: an upper bound D on the norms (or (0, D)).
        ``None``: no domain at all; ``"columns"`` then uses a noisy logarithmic
        histogram over the whole float range; ``"row_norm"`` spends ε/2 on such a
        histogram of the norms (for their scale D) and ε/2 on the quantile in [0, D].
    quantiles : pair of float, float or None, default=None
        ``"columns"`` with a domain: the levels (q_lo, q_hi), default (0.01, 0.99);
        ignored without a domain (the histogram's threshold decides).
        ``"row_norm"``: one level, default 0.9 (rows beyond it are scaled down by the
        estimators: on ``make_regression`` 0.9 gave LinearRegression a higher R² than
        0.95 or 0.99, see doc/user_guide/bounds.rst).
    failure_probability : float, default=1e-3
        β: columns without a domain; the probability that some empty bin of some column
        passes the threshold (β/d per column; the bound is then too wide). Utility only.
    accountant : BudgetAccountant or None, default=None
        Checked before any value is read and charged before the release (one event).
        ``None`` uses the accountant made active by ``with accountant:``, if any.
    random_state : None, int, Generator, default=None
        See :func:`dpsk.utils.check_random_state` (``None`` for releases).
    return_error : bool, default=False
        Return a :class:`DPResult` (``value``, ``privacy_spent``, ``mechanism``).

    Returns
    -------
    bounds : tuple (lower, upper) of ndarray of shape (n_features,), or float
        Per column (``"columns"``), or the row-norm bound (``"row_norm"``); or a
        :class:`DPResult` holding it.

    Notes
    -----
    **Privacy.** ε-DP under add/remove one row (``dpsk/stats/_bounds.py`` has the
    derivations). ``"columns"`` with a domain: 2·d exponential-mechanism selections of
    ε/(2d) each; a row touches every column, so they compose to ε, recorded as one
    event. ``"columns"`` without a domain: one histogram of 4197 logarithmic bins per
    column with discrete Laplace noise of scale d/ε (one row changes one bin of each
    column: L1 sensitivity d); the bounds are the outer edges of the outermost bins
    whose noisy count reaches τ = (d/ε)·ln(4197·d/β), grown by neighbouring bins and
    mirrored across 0 where the counts say so (else the pooled histogram's), which is
    post-processing. ``"row_norm"``: one exponential-mechanism selection (sensitivity 1:
    a row has one norm). Released: the bounds only. The error of a bound is not
    bounded by the privacy analysis; with probability >= 1 − 4β (four threshold tests
    at β/d per column) the histogram's bounds are at most twice the largest magnitude.
    Domain: finite values; others raise a ``ValueError`` before anything is spent,
    which reveals only that the data left the domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import stats
    >>> X = np.random.default_rng(0).normal(size=(20_000, 3))
    >>> lower, upper = stats.bounds(X, epsilon=1.0, domain=(-100, 100), random_state=0)
    >>> bool(np.all((lower < -1.5) & (lower > -3) & (upper > 1.5) & (upper < 3)))
    True
    >>> r = stats.bounds(X, epsilon=1.0, which="row_norm", random_state=0)
    >>> bool(1.5 < r < 4)
    True
    """
    from dpsk._core._sparse import as_csr
    from dpsk.stats._common import as_array
    from dpsk.stats._protocol import StatCall
    from dpsk.stats._result import DPResult

    function = "dpsk.stats.bounds"
    call = StatCall(epsilon, 0.0, None, "smooth", None, False, accountant, random_state, "raise", function)
    arr = as_array(X, name="X")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"X must be 1-d or 2-d, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError("X has no rows; bounds need at least one")
    n_columns = arr.shape[1] if which == "columns" else 1
    query = BoundsQuery(
        which,
        n_columns,
        epsilon=call.release_epsilon,
        domain=domain,
        quantiles=quantiles,
        failure_probability=failure_probability,
        rng=call.rng,
    )
    query.domain_arrays()  # validated before the data is read
    call.check(query.event)
    if sp.issparse(arr):  # the histograms and quantiles count its implicit zeros; no dense copy
        arr = as_csr(arr.astype(np.float64))  # a copy: the caller's matrix is left as it is
        finite = np.all(np.isfinite(arr.data))
    else:
        arr = np.asarray(arr, dtype=np.float64)
        finite = np.all(np.isfinite(arr))
    if not finite:
        raise ValueError("X holds NaN or infinite values: dpsk.stats.bounds needs finite data")
    call.spend(arr.shape[0], function=function, params=(which, domain, quantiles, failure_probability), data=(arr,))
    values = arr if which == "columns" else row_norms(arr)
    value = query.release(values)
    if not return_error:
        return value
    return DPResult(value, noise_std=None, privacy_spent=call.cost, mechanism=query.method)
