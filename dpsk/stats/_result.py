# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a private statistic reports about itself: the value, the noise added, its cost.

Every function of :mod:`dpsk.stats` returns a plain value by default (so code written
for other DP libraries ports by changing an import) and a :class:`DPResult` with
``return_error=True``. The error figures are computed from the *released* values and
public parameters only (post-processing): reporting them costs no privacy budget.
"""

import math

import numpy as np

from dpsk.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace

__all__ = ["DPResult"]


def noise_halfwidth(mechanism, size, alpha):
    """Half-width t with P(|noise| > t) <= alpha for one coordinate of a release of ``size``.

    Rigorous for dpsk's floating-point-safe mechanisms (noise on a lattice, plus at most
    one lattice step of rounding): the exact two-sided geometric tail for Laplace-type
    noise, the sub-Gaussian tail ``exp(-t²/2σ²)`` of the discrete Gaussian (Canonne,
    Kamath & Steinke 2020) for Gaussian-type noise.
    """
    calibration = mechanism._calibration(size)  # noqa: SLF001 (the noise parameters)
    if not calibration.params:  # sensitivity 0: no noise was added
        return 0.0
    if isinstance(mechanism, Laplace):
        scale, step = calibration.params
        return step * (_geometric_tail(scale / step, alpha) + 1.0)
    if isinstance(mechanism, DiscreteLaplace):
        num, den = calibration.params
        return float(_geometric_tail(num / den, alpha))
    if isinstance(mechanism, Gaussian):
        sigma, step = calibration.params
        return sigma * math.sqrt(2.0 * math.log(2.0 / alpha)) + step
    if isinstance(mechanism, DiscreteGaussian):
        return calibration.params[0] * math.sqrt(2.0 * math.log(2.0 / alpha)) + 1.0
    raise TypeError(f"no tail bound for {type(mechanism).__name__}")  # pragma: no cover


def _geometric_tail(t, alpha):
    """Smallest integer k with P(|K| > k) <= alpha for P(K) ∝ exp(-|K|/t) on the integers.

    P(|K| >= k) = 2 r^k / (1 + r) with r = exp(-1/t).
    """
    log_r = -1.0 / t
    r = math.exp(log_r)
    k = math.log(alpha * (1.0 + r) / 2.0) / log_r  # P(|K| >= k) = alpha
    return math.ceil(k * (1.0 + 1e-12))


class DPResult:
    """A differentially private statistic and what is known about its error.

    Returned by the functions of :mod:`dpsk.stats` with ``return_error=True``. Every
    figure here is computed from the released values and public parameters only, so
    reading them costs no privacy budget.

    Attributes
    ----------
    value : float or ndarray
        The private release (the function's return value without ``return_error``).
    noise_std : float, ndarray or None
        Standard deviation of the error that the privacy noise adds to ``value``: exact
        for counts, sums and histograms; a first-order (delta-method) approximation
        evaluated at the released values for ratios (means, variances); ``None`` for
        quantiles (use :meth:`rank_error`). Zero where no noise was needed.
    privacy_spent : PrivacyEvent
        What the release cost (also recorded on the accountant in play, if any).
    mechanism : str
        How the noise was drawn, e.g. ``"Laplace (lattice, floating-point safe)"``.
    bounds : tuple of ndarray or None
        The (lower, upper) clipping bounds used.
    threshold : float or None
        User-level releases: the contribution threshold h (a user's rows carry at most
        the weight of h rows).

    Notes
    -----
    The error figures describe the privacy noise only: how far ``value`` may be from the
    same statistic computed without noise on the *clipped* (and, with ``groups``,
    contribution-weighted) data. Clipping bias and sampling error are not included.

    **Privacy.** Every figure here (``value``, ``noise_std``, the confidence
    interval and the rank error) is computed from the release and public parameters
    only, so reading them costs no further budget. ``privacy_spent`` is the cost of
    the release, as recorded on the accountant in play.
    """

    def __init__(
        self, value, *, noise_std, privacy_spent, mechanism, interval=None, rank_error=None, bounds=None, threshold=None
    ):
        self.value = value
        self.noise_std = noise_std
        self.privacy_spent = privacy_spent
        self.mechanism = mechanism
        self.bounds = bounds
        self.threshold = threshold
        self._interval = interval
        self._rank_error = rank_error

    def __repr__(self):
        std = "None" if self.noise_std is None else np.array2string(np.asarray(self.noise_std), precision=4)
        return (
            f"DPResult(value={np.array2string(np.asarray(self.value), precision=6)}, noise_std={std}, "
            f"mechanism={self.mechanism!r}, privacy_spent={self.privacy_spent!r})"
        )

    def confidence_interval(self, confidence=0.95):
        """Interval containing the noise-free statistic with probability >= ``confidence``.

        The probability is over the privacy noise, for the data at hand: with
        ``confidence=0.95``, at most 5% of releases miss the value they privatise.
        Guaranteed (union bound over the noisy components, exact tail bounds of the
        noise), not an asymptotic approximation.

        Parameters
        ----------
        confidence : float, default=0.95
            In (0, 1).

        Returns
        -------
        low, high : float or ndarray
            Same shape as ``value``.
        """
        alpha = _check_confidence(confidence)
        if self._interval is None:
            raise NotImplementedError(
                "this release has no interval in value units (a quantile's error is a rank error: use rank_error())"
            )
        return self._interval(alpha)

    def rank_error(self, confidence=0.95):
        """Quantiles only: how far, in rows, the released value's rank may be from the target.

        With probability >= ``confidence`` (over the privacy noise), at most
        ``rank_error`` rows (with ``groups``: row weights) lie between the released value
        and the exact quantile. A data-independent bound, from the exponential
        mechanism's utility theorem.

        Returns
        -------
        rank_error : float
        """
        alpha = _check_confidence(confidence)
        if self._rank_error is None:
            raise NotImplementedError("rank_error is defined for quantiles only; use confidence_interval()")
        return self._rank_error(alpha)


def _check_confidence(confidence):
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return 1.0 - float(confidence)
