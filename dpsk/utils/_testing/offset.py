# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""A permanent test variant that centres after summing, for the offset family of ``dpsk.audit``.

:class:`ToyDPVariance` releases a noisy count, Σz and Σ(z² − 1/2) of values clipped to
public bounds (z = (c − m)/h, m the middle and h the half-width of the bounds), each with
Laplace noise of sensitivity 1. With ``centring="after"`` it computes the centred sum of
squares the way issue 14 found in the library, ``Σc² − 2mΣc + m²n``: exact over the reals,
but its rounding error is about ``n·m²·2⁻⁵³``, unrelated to the per-record sensitivity
``h²/2``. With ``centring="before"`` it sums the centred terms exactly (``math.fsum``).

It lives here, not in the library, so that the offset audit and the rounding probe keep a
known-broken target after the library's own statistics are fixed: the tests in
``tests/privacy/test_offset_privacy.py`` check that both reject ``"after"`` and accept
``"before"``.
"""

import math

import numpy as np
from sklearn.base import BaseEstimator

from dpsk.accounting import ComposedEvent
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.mechanisms import Laplace
from dpsk.utils._sklearn_compat import _fit_context, validate_data
from dpsk.utils.validation import check_random_state, resolve_bounds

__all__ = ["ToyDPVariance"]


class ToyDPVariance(DPEstimatorMixin, BaseEstimator):
    """Noisy count, Σz and Σ(z² − 1/2) of one clipped feature; centring before or after summing.

    Test helper only.

    Parameters
    ----------
    epsilon : float, default=1.0
        Split equally over the three releases.
    bounds : tuple (lower, upper) or None, default=None
    centring : {"before", "after"}, default="before"
        ``"before"``: Σ(c − m) and Σ(c − m)² summed exactly from centred terms (correct).
        ``"after"``: ``Σc − mn`` and ``Σc² − 2mΣc + m²n`` from raw float sums (broken:
        the rounding error is not bounded by the sensitivity).
    accountant : BudgetAccountant or None, default=None
    random_state : None, int, BitGenerator or Generator, default=None

    Attributes
    ----------
    n_ : float
        Noisy count.
    sum_z_, sum_sq_ : float
        Noisy Σz and Σ(z² − 1/2), z = (clip(x) − m)/h (one record moves them by at
        most 1 and 1/2; each is released with sensitivity 1).
    var_ : float
        Variance estimate in the original units (post-processing).
    bounds_ : tuple of ndarray
    privacy_spent_ : PrivacyEvent

    Notes
    -----
    **Privacy.** Claims ε-DP under add/remove-one-record: a record moves the count by 1,
    Σz by at most 1 and Σ(z² − 1/2) by at most 1/2, each released with Laplace noise of
    sensitivity 1 and ε/3. True for ``centring="before"``; false for ``"after"`` on
    values far from the origin relative to the width of the bounds.
    """

    _parameter_constraints = {
        **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
        "bounds": BOUNDS_CONSTRAINT,
        "centring": [str],
    }

    def __init__(self, *, epsilon=1.0, bounds=None, centring="before", accountant=None, random_state=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.centring = centring
        self.accountant = accountant
        self.random_state = random_state

    def _mechanisms(self, rng):
        return [Laplace(epsilon=self.epsilon / 3.0, sensitivity=1.0, random_state=rng) for _ in range(3)]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        if self.centring not in ("before", "after"):
            raise ValueError(f"centring must be 'before' or 'after', got {self.centring!r}")
        rng = check_random_state(self.random_state)
        mechanisms = self._mechanisms(rng)
        cost = ComposedEvent(tuple(m.privacy_event() for m in mechanisms))
        self._check_privacy_budget(cost)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C")
        lower, upper = resolve_bounds(self, self.bounds, X)
        self._spend_privacy_budget(cost)
        mid = float((lower[0] + upper[0]) / 2.0)
        half = float((upper[0] - lower[0]) / 2.0)
        c = np.clip(X[:, 0].astype(np.float64), lower[0], upper[0])
        n = float(c.size)
        if self.centring == "before":
            # c − m is exact when c and m are within a factor 2 (Sterbenz), as on an
            # offset range; otherwise its rounding is relative to m ≤ the bounds' scale.
            centred = c - mid
            csum = math.fsum(centred)
            csq = math.fsum(centred * centred)
        else:
            # Left-to-right float sums, as a compiled accumulation loop does them.
            total, total_sq = float(np.cumsum(c)[-1]), float(np.cumsum(c * c)[-1])
            csum = total - n * mid
            csq = total_sq - 2.0 * mid * total + mid * mid * n
        noisy_n, noisy_s, noisy_q = (
            float(m.randomise(v)) for m, v in zip(mechanisms, (n, csum / half, csq / half**2 - n / 2.0))
        )
        self.n_, self.sum_z_, self.sum_sq_ = noisy_n, noisy_s, noisy_q
        denominator = max(noisy_n, 1.0)
        mean_z = np.clip(noisy_s / denominator, -1.0, 1.0)
        self.var_ = float(half**2 * np.clip(noisy_q / denominator + 0.5 - mean_z**2, 0.0, 1.0))
        self.bounds_ = (lower, upper)
        return self
