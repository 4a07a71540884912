# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The noise release of bounded statistics: box-centred sums, and joint releases with a budget split.

The release of GaussianNB, the scalers, PCA, KMeans and the trees. Private: not part of
the public mechanisms API.

Box-centred sums
================

A row clipped to ``[lower, upper]`` contributes ``c(x)`` to a sum. Under add/remove-one-row
the sum moves by ``c(x)``, so its sensitivity is ``max(|lower_j|, |upper_j|)`` per feature
when summed as is, but only the half-width ``h_j = (upper_j - lower_j) / 2`` when summed
relative to the box's midpoint ``m_j``. Estimators therefore release sums of the
*standardised* values ``z = (c(x) - m) / h``, which lie in ``[-1, 1]`` whatever the box,
and of ``z² - 1/2``, which lie in ``[-1/2, 1/2]``; means and variances in the original
units follow by post-processing with the (noisy) count. Standardising also spends the
noise evenly over features of different scales: each feature's noise is the same
fraction of its range.

Features with ``lower_j == upper_j`` are constant after clipping: they carry no
information, are excluded from the sensitivity, and get ``z = 0``.

Joint releases
==============

Several statistics of one pass (a count, sums, a second-moment matrix) are released as
*one* noisy vector, each statistic scaled so that the budget is split as stated
(:class:`JointRelease`). With Laplace noise, scaling statistic i of L1 sensitivity Δᵢ by
sᵢ/Δᵢ (shares sᵢ summing to 1) gives the vector L1 sensitivity 1, so statistic i gets
noise of scale Δᵢ/(sᵢ ε): exactly the sequential split εᵢ = sᵢ ε. With Gaussian noise,
scaling by √sᵢ/Δᵢ (L2 sensitivities) splits the zCDP budget ρ the same way, which is
tighter than splitting (ε, δ) between separate Gaussian releases. One mechanism call,
one privacy event: the split cannot leak out of the accounting.

Rounding
========

The values handed to :meth:`JointRelease.randomise` must be one correctly rounded
conversion away from exact sums of per-row terms bounded by the sensitivities (as
:meth:`Box.standardised_sums` and ``dpsk._core._exact_sums.exact_gram`` produce, for up to
``MAX_EXACT_ROWS`` rows). The weights carry the factor 1 − ``ROUNDING_MARGIN``
(2**-14), which covers that rounding, the product with the weight and the weights' own
rounding: the computed vector's sensitivity is <= 1 (proof in ``dpsk._core._exact_sums``,
"Exact sums"). Counts of rows (trees) are exact integers and qualify too.
"""

import numpy as np

from dpsk._core._exact_sums import ROUNDING_MARGIN
from dpsk.mechanisms._gaussian import Gaussian
from dpsk.mechanisms._laplace import Laplace
from dpsk.utils._sparse import exact_moments_of

__all__ = ["Box", "JointRelease"]


class Box:
    """Bounds ``(lower, upper)`` as midpoint ``centre`` and half-width ``half_width``.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        Validated, finite bounds (see :func:`dpsk.utils.check_bounds`).

    Attributes
    ----------
    lower, upper, centre, half_width : ndarray of shape (n_features,)
    n_active : int
        Features with ``upper > lower``: those that enter the sensitivity.
    """

    def __init__(self, lower, upper):
        self.lower = np.asarray(lower, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        # Halves first: (upper - lower) may overflow for bounds near the float64 range.
        self.centre = self.lower / 2 + self.upper / 2
        self.half_width = self.upper / 2 - self.lower / 2
        active = self.half_width > 0
        self.n_active = int(np.count_nonzero(active))
        # Constant features are divided by 1: their centred values are exactly 0.
        self._scale = np.where(active, self.half_width, 1.0)

    def standardised_sums(self, moments, squares=True):
        """Counts, Σz and Σ(z² − 1/2) from exact fixed-point sums, each correctly rounded.

        Works per class (or cluster): ``moments`` is the
        :class:`dpsk._core._exact_sums.ExactMoments` of the rows clipped to a box (normally
        this one: :meth:`exact_sums`). Each entry is one correctly rounded conversion of
        an exact rational, which is what :class:`JointRelease`'s margin assumes.

        Returns
        -------
        count : ndarray of shape (n_classes,)
            Σw.
        sum_z : ndarray of shape (n_classes, n_features)
            Σ (v − m) / h, v the quantised clipped value: each row contributes a value in
            [−1, 1] per feature (when the moments were clipped to this box).
        sum_sq : ndarray of shape (n_classes, n_features) or None
            Σ ((v − m)² / h² − 1/2): each row contributes a value in [−1/2, 1/2].
        """
        if np.array_equal(moments.centre, self.centre):  # the usual case: integer arithmetic
            return moments.standardised(self._scale, squares)
        return self._standardised_by_fractions(moments, squares)

    def _standardised_by_fractions(self, moments, squares=True):
        """:meth:`standardised_sums` by exact Fractions (``about`` then ``round``): any
        centre, and the definition that ``ExactMoments.standardised`` reproduces."""
        count, s1, s2 = moments.about(self.centre)
        sum_z = moments.round(s1, self._scale)
        if not squares:
            return moments.round(count), sum_z, None
        square = moments._exact(self._scale) ** 2  # exact: a float square can overflow or underflow
        return moments.round(count), sum_z, moments.round((s2 - count[:, None] * square / 2) / square)

    def sensitivities(self, n_statistics=3):
        """(L1, L2) sensitivities of (count, Σz, Σ(z² − 1/2)) per class, the first ``n_statistics``.

        Under add/remove-one-row a row adds 1 to its class's count, a value in [−1, 1] to
        each of the ``n_active`` sums Σz of its class and one in [−1/2, 1/2] to each sum
        Σ(z² − 1/2): L1 sensitivities 1, d′ and d′/2, L2 sensitivities 1, √d′ and √d′/2
        (d′ = ``n_active``). Weights in [0, 1] scale a row's terms: the same bounds.
        """
        d = self.n_active
        return ((1.0, 1.0), (d, np.sqrt(d)), (d / 2.0, np.sqrt(d) / 2.0))[:n_statistics]

    def exact_sums(self, X, y_index=None, n_classes=1, sample_weight=None, squares=True):
        """:class:`~dpsk._core._exact_sums.ExactMoments` of X (dense or scipy.sparse: the same
        integers) clipped to the box (per class with ``y_index``; weights in [0, 1] rounded
        down as ``exact_moments`` does). ``squares=False``: the sums of squares may be left
        out (then :meth:`standardised_sums` needs ``squares=False`` too)."""
        return exact_moments_of(X, self.lower, self.upper, y_index, n_classes, sample_weight, squares)

    def to_original(self, mean_z):
        """Means in the original units from means of z (clipped to [−1, 1], i.e. into the box)."""
        return self.centre + self.half_width * np.clip(mean_z, -1.0, 1.0)


class JointRelease:
    """Release several statistics as one noisy vector, with the budget split between them.

    Parameters
    ----------
    sensitivities : sequence of (float, float)
        (L1, L2) sensitivity of each statistic (of the whole array) under the estimator's
        neighbouring relation. A statistic of sensitivity 0 is released exactly.
    shares : sequence of float
        Fraction of the budget of each statistic (ε with Laplace noise, ρ with Gaussian
        noise); normalised to sum to 1 over the statistics of non-zero sensitivity.
    epsilon, delta : float
        ``delta == 0``: lattice Laplace noise, ε-DP. ``delta > 0``: lattice Gaussian
        noise, (ε, δ)-DP (recorded as zCDP).
    random_state : numpy.random.Generator
    """

    def __init__(self, sensitivities, shares, *, epsilon, delta, random_state):
        self.gaussian = delta > 0
        norm = 1 if self.gaussian else 0
        sens = np.array([float(s[norm]) for s in sensitivities])
        if not np.all(np.isfinite(sens) & (sens >= 0)):
            # A weight of share/∞ = 0 would release the statistic without noise.
            raise ValueError(
                f"the sensitivities {sens.tolist()} are not finite: the bounds are too large for float64 "
                "(their squares overflow); rescale the data"
            )
        shares = np.where(sens > 0, np.asarray(shares, dtype=np.float64), 0.0)
        if not shares.sum() > 0:  # every statistic is constant: nothing to hide
            shares = np.ones_like(shares)
        shares = shares / shares.sum()
        # Statistic i is multiplied by weight i before the noise and divided after it.
        # The margin covers the float rounding of the values and of that product (see
        # "Rounding" in the module docstring): the computed vector's sensitivity is <= 1.
        power = np.sqrt(shares) if self.gaussian else shares
        with np.errstate(over="ignore"):  # checked below
            self.weights = np.divide(power, sens, out=np.zeros_like(sens), where=sens > 0) * (1.0 - ROUNDING_MARGIN)
        if not np.all(np.isfinite(self.weights)):
            raise ValueError(
                f"the sensitivities {sens.tolist()} are too small for float64 (their inverses overflow); "
                "rescale the data"
            )
        if self.gaussian:
            self.mechanism = Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0, random_state=random_state)
        else:
            self.mechanism = Laplace(epsilon=epsilon, sensitivity=1.0, random_state=random_state)

    def privacy_event(self, sizes):
        """The event of one release of statistics with these numbers of entries."""
        return self.mechanism.privacy_event(int(sum(sizes)))

    def noise_std(self, index, sizes):
        """Standard deviation of the noise on each entry of statistic ``index`` (0 if released exactly)."""
        if self.weights[index] == 0:
            return 0.0
        return float(np.sqrt(self.mechanism.variance(np.zeros(int(sum(sizes)))))) / self.weights[index]

    def randomise(self, values):
        """Noisy copies of ``values`` (arrays, in the order of ``sensitivities``): one release."""
        values = [np.asarray(v, dtype=np.float64) for v in values]
        flat = np.concatenate([v.ravel() * w for v, w in zip(values, self.weights)])
        noisy = self.mechanism.randomise(flat)
        out, start = [], 0
        for value, weight in zip(values, self.weights):
            part = noisy[start : start + value.size].reshape(value.shape)
            out.append(part / weight if weight > 0 else value.copy())
            start += value.size
        return out
