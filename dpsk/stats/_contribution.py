# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bounding user contributions: thresholds, weights and their exact variances.

Implements "Smoothly Bounding User Contributions in Differential Privacy" (Epasto,
Mahdian, Mao, Mirrokni & Ren, NeurIPS 2020) for dpsk's statistics and estimators.

A user l with s_l rows contributes through per-row weights. With threshold h:

* **smooth weighting** (the paper's Algorithm 1 / Lemma 3): each of the user's rows
  gets weight ``min(1, h / s_l)``, so the user's total weight is ``min(s_l, h)``: light
  users count in full, heavy users are capped at h but none of their rows is dropped;
* **sample limiting** (Amin et al. 2019, the paper's baseline): ``min(s_l, h)`` of the
  user's rows, chosen uniformly at random, get weight 1, the others 0 (h an integer).

Either way one user's rows carry total weight at most h: a user-level release is a
row-level release whose sensitivity is multiplied by h. Normalised by
``n_h = Σ_l min(h, s_l)`` these are the paper's weights ``c_i = min(h, s_l)/(s_l n_h)``.

Choosing h. The paper minimises the variance of the weighted mean
``v(h) = [λ_var Σ_l min(h, s_l)²/s_l + λ_noise h²] / n_h²`` (λ_var = σ², λ_noise =
2B²/ε² for Laplace noise) given **public** row counts s_l and σ². Its derivative has
the sign of ``g(h) = κ h − Σ_l (1 − h/s_l)_+`` with κ = λ_noise/λ_var (on each interval
between sorted counts, with P = Σ_{s_l <= h} s_l, r users above h and Q the sum of their
1/s_l, dv/dh = 2P((λ_var Q + λ_noise) h − r λ_var)/(P + r h)³), so the optimum is the
unique root of g — :func:`smooth_threshold`, in closed form. dpsk's statistics use the
worst-case data variance (B/2)² for λ_var (data-independent), so κ depends on public
parameters only. dpsk never assumes the counts public silently:

* ``public_user_counts=True``: the caller declares the set of users and their row counts
  public (the paper's model; neighbours replace the values of one user). h is the
  closed-form optimum, free of charge;
* otherwise (default; neighbours add or remove one user with all their rows), h is
  chosen privately by :func:`select_threshold`: the exponential mechanism picks h on a
  public grid with score ``-|κ h - Σ_l (1 - h/s_l)_+|``. Adding or removing one user
  changes the sum by one term in [0, 1), so the score has sensitivity 1. This spends
  ``THRESHOLD_BUDGET_FRACTION`` of the budget, and is charged.

Totals (counts, sums, histograms) and the estimators' weighted ERM have no such
variance trade-off (capping biases a total); their h is the ``TOTALS_LEVEL``-quantile of
the row counts, chosen privately the same way (or exactly with public counts). This
rule is dpsk's, not the paper's.

The exact variance formulas (:func:`smooth_variance`, :func:`limit_variance`) reproduce
the paper's Lemma 2, Claim 1 and Claim 2 and are used by the tests and benchmarks.
"""

import math
import numbers
from fractions import Fraction

import numpy as np

from dpsk._core._exact_sums import WEIGHT_BITS
from dpsk._core._groups import group_codes, limit_weights
from dpsk.accounting._calibration import split_epsilon
from dpsk.mechanisms import ExponentialMechanism

__all__ = [
    "CONTRIBUTION_BOUNDS",
    "Contribution",
    "ContributionPlan",
    "THRESHOLD_BUDGET_FRACTION",
    "TOTALS_LEVEL",
    "best_limit_threshold",
    "group_index",
    "limit_variance",
    "select_threshold",
    "smooth_threshold",
    "smooth_variance",
    "threshold_grid",
]

CONTRIBUTION_BOUNDS = ("smooth", "limit")

#: Share of ε spent on choosing the threshold privately (when it is not given).
THRESHOLD_BUDGET_FRACTION = 0.1

#: Totals (counts, sums, histograms) cap users at this quantile of the row counts.
TOTALS_LEVEL = 0.9

#: Largest threshold the private selection considers (rows per user).
MAX_THRESHOLD = 2.0**24


# ---------------------------------------------------------------------------------------
# Users
# ---------------------------------------------------------------------------------------


def _ids_array(groups, n_samples):
    """``groups`` as a 1-d array of ``n_samples`` ids (shape checks only: shapes are public)."""
    try:
        ids = np.asarray(groups)
    except ValueError as exc:  # ragged nested sequences
        raise TypeError("groups must be a 1-d array-like of hashable user ids") from exc
    if ids.ndim != 1:
        raise ValueError(f"groups must be 1-dimensional, got shape {ids.shape}")
    if ids.shape[0] != n_samples:
        raise ValueError(f"groups has {ids.shape[0]} entries but the data has {n_samples} rows")
    return ids


def group_index(groups, n_samples):
    """Validate user ids and number the users.

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        One user id per row: integers, strings, or any hashable values of one type.
    n_samples : int

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype intp
        User index of each row, in ``range(n_users)``.
    counts : ndarray of shape (n_users,), dtype int64
        Rows per user.

    Raises
    ------
    ValueError
        Wrong length, missing values (NaN or None): the ids are outside their domain
        (the error reveals only that).
    TypeError
        Unhashable or unorderable ids.
    """
    ids = _ids_array(groups, n_samples)
    if ids.dtype.kind == "f":
        if not np.all(np.isfinite(ids)):
            raise ValueError("groups contains NaN or infinity; every row needs a user id")
        if np.all(ids == np.round(ids)) and np.all(np.abs(ids) < 2.0**63):
            ids = ids.astype(np.int64)
    if ids.dtype.kind in "biu":
        if ids.dtype == np.uint64 and ids.size and ids.max() >= 2**63:
            ids = ids.view(np.int64)  # a bijection: distinct ids stay distinct
        codes, counts = group_codes(np.ascontiguousarray(ids, dtype=np.int64))
    else:
        if ids.dtype.kind == "O":
            if any(g is None or (isinstance(g, float) and math.isnan(g)) for g in ids):
                raise ValueError("groups contains missing values (None or NaN); every row needs a user id")
            try:
                {hash(g) for g in ids}
            except TypeError as exc:
                raise TypeError(f"groups must hold hashable user ids: {exc}") from None
        try:
            _, codes, counts = np.unique(ids, return_inverse=True, return_counts=True)
        except TypeError as exc:
            raise TypeError(f"user ids in groups must be mutually comparable (one type): {exc}") from None
        codes = np.ascontiguousarray(codes.reshape(-1), dtype=np.intp)
        counts = counts.astype(np.int64)
    # No minimum number of users: whether the data holds one user or two is exactly what
    # a neighbouring dataset changes, so refusing one user would itself release it (issue
    # 14, finding 4). A release about one user is as private as any other: the noise is
    # calibrated to remove that user entirely.
    return codes, counts


def present_ids(groups, n_samples):
    """Which rows have a user id (not None, not NaN or infinite): the ``on_invalid`` screen.

    Shape errors are raised (the shapes are public); missing ids are marked, not refused.
    """
    ids = _ids_array(groups, n_samples)
    if ids.dtype.kind == "f":
        return np.isfinite(ids)
    if ids.dtype.kind == "O":
        return np.array([not (g is None or (isinstance(g, float) and not math.isfinite(g))) for g in ids], dtype=bool)
    return np.ones(n_samples, dtype=bool)


# ---------------------------------------------------------------------------------------
# The paper's formulas (public counts)
# ---------------------------------------------------------------------------------------


def smooth_threshold(counts, var_weight, noise_weight):
    """The threshold h minimising ``[var_weight Σ min(h,s)²/s + noise_weight h²] / n_h²``.

    The root of ``κ h = Σ_l (1 - h/s_l)_+`` with κ = noise_weight/var_weight, found per
    interval between sorted counts in closed form ``h = r / (Q + κ)`` (r users above h,
    Q the sum of their 1/s_l). O(m log m).

    Parameters
    ----------
    counts : array-like of shape (n_users,)
        Rows per user, > 0.
    var_weight, noise_weight : float
        λ_var >= 0 and λ_noise > 0 (for the mean: σ² and 2B²/ε²).

    Returns
    -------
    h : float
        In ``[min(counts), max(counts)]``; ``min(counts)`` when var_weight is 0 (every user
        then gets the same total weight).
    """
    s = np.sort(np.asarray(counts, dtype=np.float64))
    if s.size == 0 or s[0] <= 0:
        raise ValueError("counts must be a non-empty array of positive numbers")
    if var_weight < 0 or not noise_weight > 0:
        raise ValueError("var_weight must be >= 0 and noise_weight > 0")
    if var_weight == 0:
        return float(s[0])
    kappa = noise_weight / var_weight
    m = s.size
    inv_suffix = np.cumsum((1.0 / s)[::-1])[::-1]  # Σ_{j >= k} 1/s_(j)
    r = m - np.arange(m)  # users k..m-1 lie above h on interval k
    h = r / (inv_suffix + kappa)
    lower = np.concatenate([[0.0], s[:-1]])
    inside = np.flatnonzero((h >= lower) & (h <= s))
    # g is increasing with g(s_max) > 0, so the root lies in the first interval whose
    # closed-form candidate falls inside it.
    root = float(h[inside[0]]) if inside.size else float(s[-1])
    return max(root, float(s[0]))


def _n_h(s, h):
    return np.minimum(h, s).sum()


def smooth_variance(counts, h, var_weight, noise_weight):
    """Claim 1's v(h) = [var_weight Σ min(h,s)²/s + noise_weight h²] / n_h² (smooth weights).

    For the mean (var_weight = σ², noise_weight = 2B²/ε²) this is the exact variance of
    the paper's Algorithm 1 with Lemma 3's weights (Lemma 2), for h <= max(counts).
    """
    s = np.asarray(counts, dtype=np.float64)
    nh = _n_h(s, h)
    return float((var_weight * np.sum(np.minimum(h, s) ** 2 / s) + noise_weight * h * h) / nh**2)


def limit_variance(counts, h, var_weight, noise_weight):
    """Claim 2's v'(h) = var_weight / n_h + noise_weight h² / n_h² (sample limiting)."""
    s = np.asarray(counts, dtype=np.float64)
    nh = _n_h(s, h)
    return float(var_weight / nh + noise_weight * h * h / nh**2)


def best_limit_threshold(counts, var_weight, noise_weight):
    """The integer h in [min(counts), max(counts)] minimising :func:`limit_variance`."""
    s = np.sort(np.asarray(counts, dtype=np.int64))
    hs = np.arange(int(s[0]), int(s[-1]) + 1, dtype=np.float64)
    # n_h for every integer h at once: Σ_l min(h, s_l) = Σ_{s_l <= h} s_l + h #{s_l > h}
    below = np.searchsorted(s, hs, side="right")
    prefix = np.concatenate([[0], np.cumsum(s)])
    nh = prefix[below] + hs * (s.size - below)
    v = var_weight / nh + noise_weight * hs * hs / nh**2
    return int(hs[np.argmin(v)])


# ---------------------------------------------------------------------------------------
# Private threshold selection (add/remove-one-user neighbours)
# ---------------------------------------------------------------------------------------


def threshold_grid(integer=False):
    """The public candidate thresholds: 2^(k/4) from 1 to MAX_THRESHOLD (integers: floored, unique)."""
    grid = 2.0 ** (np.arange(0, 4 * int(math.log2(MAX_THRESHOLD)) + 1) / 4.0)
    return np.unique(np.floor(grid)) if integer else grid


def _excess_mass(counts, grid):
    """G(h) = Σ_l (1 - h/s_l)_+ for every h of the grid (sorted counts, suffix sums)."""
    s = np.sort(np.asarray(counts, dtype=np.float64))
    inv_suffix = np.concatenate([np.cumsum((1.0 / s)[::-1])[::-1], [0.0]])
    above = np.searchsorted(s, grid, side="right")  # users with s_l > h start here
    return (s.size - above) - grid * inv_suffix[above]


#: Selection scores are computed exactly in units of 2**-32 (integers), then clamped to
#: [−2**52, 2**52] units, where the conversion to float is exact. The clamp is
#: 1-Lipschitz, so the scores' sensitivity (one user moves each by <= 1) holds for the
#: float scores handed to the exponential mechanism, however many users there are.
_SCORE_UNITS = 2**32
_SCORE_LIMIT = 2**52


def _exact_units(value):
    """A public float on the score grid (rounded down): an integer number of units."""
    return math.floor(Fraction(float(value)) * _SCORE_UNITS)


def _excess_mass_units(sorted_counts, h):
    """Σ_l floor((1 − h/s_l)_+ · 2**32), exactly: each user adds an integer in [0, 2**32]."""
    values, multiplicity = np.unique(sorted_counts[sorted_counts > h], return_counts=True)
    h = Fraction(float(h))
    return sum(int(k) * math.floor((1 - h / Fraction(float(v))) * _SCORE_UNITS) for v, k in zip(values, multiplicity))


def _score_floats(units):
    """Integer scores (units of 2**-32) as floats, clamped so that the conversion is exact."""
    return np.array([max(-_SCORE_LIMIT, min(_SCORE_LIMIT, z)) / _SCORE_UNITS for z in units], dtype=np.float64)


def select_threshold(counts, epsilon, rng, *, kappa=None, level=None, integer=False):
    """A threshold h chosen with ε-DP under add/remove-one-user neighbours.

    Exponential mechanism over :func:`threshold_grid`, with a score of sensitivity 1:

    * ``kappa`` given: h near the root of κh = Σ_l (1 - h/s_l)_+ (the paper's optimum for
      a weighted mean), score ``-|κ h - Σ_l (1 - h/s_l)_+|``;
    * ``level`` given: h near the ``level``-quantile of the row counts (for totals, whose
      error is a bias from capping rather than a variance), score
      ``-dist(level·m, [#{s_l < h}, #{s_l <= h}])`` (m users). Every h above the largest
      count scores the same, and the grid has many of them, so candidates get a public
      prior weight ∝ 1/h (a data-independent shift of the scores by (2/ε) ln(1/h), which
      leaves the sensitivity unchanged): otherwise few users and a small ε would favour
      the plateau of huge thresholds, whose noise swamps the total.

    Returns the selected h.
    """
    grid = threshold_grid(integer)
    s = np.sort(np.asarray(counts, dtype=np.float64))
    if kappa is not None:
        scores = [-(abs(_exact_units(kappa * h) - _excess_mass_units(s, h))) for h in grid]
    else:
        level_units = math.floor(Fraction(float(level)) * _SCORE_UNITS)  # public: a level <= 1
        target = level_units * s.size
        below = np.searchsorted(s, grid, side="left")
        upto = np.searchsorted(s, grid, side="right")
        scores = [
            -max(int(b) * _SCORE_UNITS - target, target - int(u) * _SCORE_UNITS, 0)
            + _exact_units(-2.0 / epsilon * math.log(h))
            for b, u, h in zip(below, upto, grid)
        ]
    scores = _score_floats(scores)
    index = ExponentialMechanism(epsilon=epsilon, sensitivity=1.0, random_state=rng).randomise(scores)
    return float(grid[index])


# ---------------------------------------------------------------------------------------
# What one call does about users
# ---------------------------------------------------------------------------------------


def capped_weights(h, counts):
    """min(1, h/s) rounded *down* to a multiple of 2**-WEIGHT_BITS, per user (exactly).

    A float h/s may round up, so that s rows of weight fl(h/s) weigh more than h; the
    exact kernels also round weights down to this grid. Computed exactly per distinct
    row count: ``s · w <= h`` holds as real numbers for every user.
    """
    counts = np.asarray(counts)
    values, inverse = np.unique(counts, return_inverse=True)
    grid = 2**WEIGHT_BITS
    limit = Fraction(float(h)) * grid
    per = np.array([min(grid, math.floor(limit / int(s))) / grid for s in values], dtype=np.float64)
    return per[inverse.ravel()]


class Contribution:
    """Per-record weights that bound a privacy unit's total weight by ``unit``.

    Attributes
    ----------
    weights : ndarray of shape (n_records,) or None
        None: every record has weight 1 (item level).
    unit : float
        Largest total weight of one privacy unit (1 item-level, h user-level).
    threshold : float or None
        h (user level).
    relation : {"add_remove", "replace"}
        Neighbouring relation: add/remove one unit, or (public user counts) replace the
        values of one user.
    """

    def __init__(self, weights=None, unit=1.0, threshold=None, relation="add_remove"):
        self.weights = weights
        self.unit = float(unit)
        self.threshold = threshold
        self.relation = relation


class ContributionPlan:
    """The user-level policy of one call, from its parameters (before any data is read).

    Parameters
    ----------
    user_level : bool
        Whether ``groups`` was given.
    contribution_bound : {"smooth", "limit"}
    threshold : float or None
        A public h (> 0; an integer >= 1 for "limit"), or None to choose it.
    public_user_counts : bool
        Declare the users and their row counts public (the paper's model).
    epsilon : float
        The call's whole budget.

    Attributes
    ----------
    selection_epsilon : float
        Spent on choosing h privately (0 if h is given, public, or item level).
    release_epsilon : float
        What is left for the statistic itself.
    event : PrivacyEvent or None
        Cost of the threshold selection.
    relation : {"add_remove", "replace"}
    """

    def __init__(self, *, user_level, contribution_bound, threshold, public_user_counts, epsilon):
        if contribution_bound not in CONTRIBUTION_BOUNDS:
            raise ValueError(f"contribution_bound must be one of {CONTRIBUTION_BOUNDS}, got {contribution_bound!r}")
        if threshold is not None:
            if (
                isinstance(threshold, bool)
                or not isinstance(threshold, numbers.Real)
                or not (math.isfinite(threshold) and threshold > 0)
            ):
                raise ValueError(f"threshold must be a finite number > 0 or None, got {threshold!r}")
            if contribution_bound == "limit" and (threshold < 1 or threshold != int(threshold)):
                raise ValueError(f"contribution_bound='limit' needs an integer threshold >= 1, got {threshold!r}")
        if not isinstance(public_user_counts, (bool, np.bool_)):
            raise TypeError("public_user_counts must be True or False")
        if not user_level and (threshold is not None or public_user_counts or contribution_bound != "smooth"):
            raise ValueError("threshold, contribution_bound and public_user_counts apply only with groups=")
        self.user_level = user_level
        self.contribution_bound = contribution_bound
        self.threshold = threshold
        self.public_user_counts = bool(public_user_counts)
        self.relation = "replace" if public_user_counts else "add_remove"
        self.selects = user_level and threshold is None and not public_user_counts
        if self.selects:
            self.selection_epsilon, self.release_epsilon = split_epsilon(
                epsilon, [THRESHOLD_BUDGET_FRACTION, 1.0 - THRESHOLD_BUDGET_FRACTION]
            )
            # The selection's own event (an infinite spend when epsilon=inf).
            self.event = ExponentialMechanism(epsilon=self.selection_epsilon).privacy_event()
        else:
            self.selection_epsilon, self.release_epsilon, self.event = 0.0, epsilon, None

    def bind(self, groups, n_records):
        """Validate the user ids (before the budget is spent: bad ids release nothing).

        Parameters
        ----------
        groups : array-like or None
        n_records : int
        """
        self.n_records = n_records
        if self.user_level:
            self.codes, self.counts = group_index(groups, n_records)

    def bind_counts(self, counts, n_records):
        """Bind the users' row counts alone (from a distributed group-by, ``dpsk.dask``):
        :meth:`choose_threshold` then chooses h as :meth:`resolve` does; the rows' weights are
        made where the rows are, from their user's count (:func:`capped_weights`)."""
        self.n_records, self.codes, self.counts = n_records, None, np.asarray(counts, dtype=np.int64)

    def choose_threshold(self, rng, *, kappa=None, level=TOTALS_LEVEL):
        """The threshold h of :meth:`resolve` (may release it: call after the spend)."""
        counts, limit = self.counts, self.contribution_bound == "limit"
        if self.threshold is not None:
            h = float(self.threshold)
        elif not self.public_user_counts:
            h = select_threshold(counts, self.selection_epsilon, rng, kappa=kappa, level=level, integer=limit)
        elif kappa is None:
            h = float(np.quantile(counts, level, method="inverted_cdf"))
        else:
            h = best_limit_threshold(counts, 1.0, kappa) if limit else smooth_threshold(counts, 1.0, kappa)
        return float(int(h)) if limit else h

    def resolve(self, rng, *, kappa=None, level=TOTALS_LEVEL):
        """Weights for the records bound by :meth:`bind` (after the budget is recorded: may
        release the threshold).

        Parameters
        ----------
        rng : numpy.random.Generator
        kappa : float or None
            For averages: the statistic's noise-to-variance ratio λ_noise/λ_var (see the
            module docstring); h is then the paper's optimum.
        level : float
            For totals and estimators (``kappa=None``): h is the ``level``-quantile of the
            row counts.

        Returns
        -------
        Contribution
        """
        if not self.user_level:
            return Contribution()
        h = self.choose_threshold(rng, kappa=kappa, level=level)
        if self.contribution_bound == "limit":
            weights = limit_weights(
                self.codes, self.counts.size, int(h), rng.permutation(self.n_records).astype(np.intp)
            )
        else:
            weights = capped_weights(h, self.counts)[self.codes]
        return Contribution(weights, h, h, self.relation)
