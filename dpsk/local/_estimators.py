# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Server-side aggregation of local-DP reports: unbiased frequencies and means (post-processing)."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from dpsk.local._randomizers import PROTOCOLS, OneBitMean, choose_protocol, make_randomizer
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, validate_data

__all__ = ["FrequencyEstimator", "MeanEstimator"]

_PRIVACY_AGGREGATION = """**Privacy.** The privacy of local DP is in the reports, made by each user with a
    randomizer of :mod:`dpsk.local` (ε-LDP with respect to that user's value, whoever
    sees the report: the server need not be trusted). ``fit`` only post-processes
    reports: it reads no raw value, draws no noise, spends no budget and records no
    release (it has no ``random_state`` and no ``accountant``). Its output is as private
    as the reports, provided the parameters (protocol, ε, domain, bounds) are public and
    the same as the users'. Each user must report once: a user who sends several reports
    spends ε per report."""


class FrequencyEstimator(BaseEstimator):
    """Unbiased category frequencies from local-DP reports (Wang, Blocki, Li & Jha 2017).

    With n reports, of which C(v) support category v (see :mod:`dpsk.local`), the
    unbiased count is ``(C(v) - n q) / (p - q)`` and its variance
    ``n q(1-q)/(p-q)^2 + c(v)(1-p-q)/(p-q)``.

    Parameters
    ----------
    protocol : {"auto", "grr", "oue", "sue", "olh", "blh"}, default="auto"
        The protocol the users ran (:func:`~dpsk.local.make_randomizer`). "auto" picks,
        from ε and d only, GRR when d < 3 e^ε + 2 and OLH otherwise
        (:func:`~dpsk.local.choose_protocol`): the users must pick the same.
    epsilon : float, default=1.0
        The users' ε (> 0).
    n_categories : int, default=2
        Size d of the public domain {0, ..., d - 1}.

    Attributes
    ----------
    protocol_ : str
        The protocol used ("auto" resolved).
    support_probabilities_ : tuple (p, q)
        P(a report supports its user's category), P(it supports another given one).
    counts_ : ndarray of shape (n_categories,)
        Unbiased estimates of how many users hold each category (may be negative).
    frequencies_ : ndarray of shape (n_categories,)
        ``counts_ / n_reports_``: unbiased estimates of the fractions (sum to 1 for GRR
        only in expectation; may be negative).
    variance_ : float
        Variance of each entry of ``frequencies_`` for a category no one holds,
        ``q(1-q) / (n (p-q)^2)`` (WBLJ17's Var*, divided by n^2); a category held by a
        fraction f adds ``f (1-p-q) / (n (p-q))``.
    n_reports_ : int
        n.

    See Also
    --------
    dpsk.local.make_randomizer : the client side of each protocol.
    dpsk.mechanisms.RandomizedResponse : randomized response over arbitrary labels.

    Notes
    -----
    Reports are: GRR, an array of categories of shape (n,) or (n, 1); unary encoding,
    bits of shape (n, d); local hashing, rows (a, b, y) of shape (n, 3).

    {privacy}

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha. "Locally Differentially Private Protocols for
    Frequency Estimation". USENIX Security 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.local import FrequencyEstimator, make_randomizer
    >>> values = np.repeat([0, 1, 2, 3], [5000, 3000, 1500, 500])
    >>> reports = make_randomizer("oue", epsilon=2.0, n_categories=4, random_state=0).randomise(values)
    >>> est = FrequencyEstimator(protocol="oue", epsilon=2.0, n_categories=4).fit(reports)
    >>> np.round(est.frequencies_, 1)
    array([0.5, 0.3, 0.1, 0.1])
    """

    __doc__ = __doc__.replace("{privacy}", _PRIVACY_AGGREGATION)

    _parameter_constraints = {
        "protocol": [StrOptions({"auto", *PROTOCOLS})],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "n_categories": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, protocol="auto", epsilon=1.0, n_categories=2):
        self.protocol = protocol
        self.epsilon = epsilon
        self.n_categories = n_categories

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Aggregate reports into unbiased frequencies.

        Parameters
        ----------
        X : array-like
            The users' reports, one per user (see Notes for the shapes).
        y : None
            Ignored.

        Returns
        -------
        self : FrequencyEstimator
        """
        if not math.isfinite(self.epsilon):
            raise ValueError("epsilon must be finite")
        randomizer = make_randomizer(self.protocol, epsilon=self.epsilon, n_categories=self.n_categories)
        X = validate_data(self, X, ensure_2d=False, dtype=None, ensure_min_samples=1)
        supports = randomizer.support_counts(X)
        n = X.shape[0]
        p, q = randomizer.support_probabilities
        self.protocol_ = choose_protocol(self.epsilon, self.n_categories) if self.protocol == "auto" else self.protocol
        self.support_probabilities_ = (p, q)
        self.n_reports_ = n
        self.counts_ = (supports - n * q) / (p - q)
        self.frequencies_ = self.counts_ / n
        self.variance_ = float(randomizer.count_variance(n)) / n**2
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.requires_fit = True
        return tags


class MeanEstimator(BaseEstimator):
    """Unbiased mean of bounded values from the one-bit local-DP reports of :class:`~dpsk.local.OneBitMean`.

    With ȳ the fraction of ones among n bits and p = e^ε/(e^ε + 1), the mean is
    ``lo + (hi - lo) (ȳ - (1 - p)) / (2p - 1)`` (Duchi, Jordan & Wainwright 2018;
    Ding, Kulkarni & Yekhanin 2017).

    Parameters
    ----------
    epsilon : float, default=1.0
        The users' ε (> 0).
    bounds : tuple (lo, hi), default=(0.0, 1.0)
        The users' public bounds.

    Attributes
    ----------
    mean_ : float
        Unbiased estimate of the mean of the clipped values (may fall outside bounds).
    variance_ : float
        Its variance for the worst data, ``(hi - lo)^2 (e^ε + 1)^2 / (4 n (e^ε - 1)^2)``
        (every value's bit has probability 1/2, e.g. every value at the midpoint); the
        variance is smaller for other data.
    n_reports_ : int

    Notes
    -----
    {privacy}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.local import MeanEstimator, OneBitMean
    >>> values = np.linspace(20, 60, 20_000)
    >>> bits = OneBitMean(epsilon=1.0, bounds=(0, 100), random_state=0).randomise(values)
    >>> est = MeanEstimator(epsilon=1.0, bounds=(0, 100)).fit(bits)
    >>> abs(est.mean_ - 40) < 4 * est.variance_**0.5  # standard deviation 0.77
    True
    """

    __doc__ = __doc__.replace("{privacy}", _PRIVACY_AGGREGATION)

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": [tuple, list],
    }

    def __init__(self, epsilon=1.0, bounds=(0.0, 1.0)):
        self.epsilon = epsilon
        self.bounds = bounds

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Aggregate one-bit reports into an unbiased mean.

        Parameters
        ----------
        X : array-like of shape (n,) or (n, 1)
            The users' bits.
        y : None
            Ignored.

        Returns
        -------
        self : MeanEstimator
        """
        client = OneBitMean(epsilon=self.epsilon, bounds=self.bounds)  # validates the parameters
        X = validate_data(self, X, ensure_2d=False, dtype=None, ensure_min_samples=1)
        bits = np.asarray(X)
        if bits.ndim == 2 and bits.shape[1] == 1:
            bits = bits[:, 0]
        if bits.ndim != 1 or not np.all((bits == 0) | (bits == 1)):
            raise ValueError("reports must be bits (0 or 1) of shape (n,) or (n, 1)")
        lo, hi = client.bounds
        p, _ = client.one_probabilities
        n = bits.shape[0]
        self.n_reports_ = n
        self.mean_ = float(lo + (hi - lo) * (bits.mean() - (1.0 - p)) / (2.0 * p - 1.0))
        self.variance_ = (hi - lo) ** 2 / (4.0 * n * (2.0 * p - 1.0) ** 2)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags
