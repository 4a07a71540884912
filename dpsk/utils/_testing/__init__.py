# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the test suite (tests cannot import each other).

The package, as scikit-learn keeps ``utils/_testing``: this module holds the statistical
protocol and the reference toys; its submodules

* :mod:`~dpsk.utils._testing.registry` — the audit registry: which mechanisms,
  statistics and estimators are audited, on which neighbours (every privacy test
  parametrizes from it);
* :mod:`~dpsk.utils._testing.family` — audit configurations and broken variants of
  naive Bayes, PCA, k-means, the scalers and the trees;
* :mod:`~dpsk.utils._testing.offset` — ``ToyDPVariance``, the broken variant of the
  offset family;
* :mod:`~dpsk.utils._testing.common` — which estimators the common tests run, and how;
* :mod:`~dpsk.utils._testing.accounting`, :mod:`~dpsk.utils._testing.selection` — toys
  for the accounting and model-selection tests (importable by worker processes).

:func:`assert_fit_with_power`, :func:`ks_pvalue` and :func:`chisquare_pvalue` are the
goodness-of-fit protocol of every sampler test: the sample must fit the intended
distribution at level ``ALPHA`` and the same test must reject it when the hypothesised
scale is off by a factor 1.2 (a power check, so the test can fail).

:class:`ToyDPMeanClassifier` is a small but genuinely differentially private estimator
(nearest noisy class mean) that exercises the whole fit protocol without depending on
any real estimator. It lives in the package, not in tests/, so that process-parallel
tests (loky workers) can unpickle it.

:class:`BrokenToyDPMeanClassifier`, :class:`ToyLaplaceMechanism` and
:class:`ToyGaussianMechanism` have deliberate bugs (switched on by a ``bug`` parameter):
every check of the privacy contract and every privacy audit is shown to fail on the bug
it is meant to catch.
"""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from dpsk.accounting import ComposedEvent, GaussianEvent, LaplaceEvent, note_release
from dpsk.accounting._events import NON_PRIVATE_EVENT
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.utils._sklearn_compat import _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import check_random_state, is_non_private, release_generator, resolve_bounds, resolve_classes

__all__ = [
    "ALPHA",
    "BrokenToyDPMeanClassifier",
    "ToyDPMeanClassifier",
    "ToyGaussianMechanism",
    "ToyLaplaceMechanism",
    "analytic_gaussian_sigma",
    "assert_fit_with_power",
    "check_audit_rate",
    "chisquare_pvalue",
    "ks_pvalue",
    "run_python",
]

# Significance level of every statistical test: a correct sampler fails one in a million.
ALPHA = 1e-6


def ks_pvalue(sample, cdf):
    """Kolmogorov-Smirnov p-value of a continuous ``sample`` against the callable ``cdf``."""
    from scipy import stats

    return stats.kstest(np.asarray(sample, dtype=np.float64), cdf).pvalue


def chisquare_pvalue(sample, support, probs):
    """Chi-square p-value of an integer ``sample`` against ``probs`` on the integers ``support``.

    ``support`` must be consecutive integers carrying (almost) all the mass. Cells with an
    expected count below 5 are merged into the two tail cells (all k <= lo, all k >= hi).
    """
    from scipy import stats

    sample = np.asarray(sample)
    support = np.asarray(support)
    probs = np.asarray(probs, dtype=np.float64)
    probs = probs / probs.sum()
    n = sample.size
    central = np.flatnonzero(probs * n >= 5)
    if central.size < 3:
        raise ValueError("chisquare_pvalue needs at least 3 cells with an expected count >= 5")
    lo, hi = support[central[0]], support[central[-1]]
    inner = np.arange(lo + 1, hi)
    observed = np.concatenate(
        [
            [np.sum(sample <= lo)],
            np.bincount(sample[(sample > lo) & (sample < hi)] - lo - 1, minlength=inner.size),
            [np.sum(sample >= hi)],
        ]
    )
    cdf = np.cumsum(probs)
    expected = (
        np.concatenate([[cdf[central[0]]], probs[central[0] + 1 : central[-1]], [1.0 - cdf[central[-1] - 1]]]) * n
    )
    return stats.chisquare(observed, expected * (n / expected.sum())).pvalue


def assert_fit_with_power(pvalue_at, scale, *, factor=1.2, alpha=ALPHA):
    """Assert ``pvalue_at(scale) > alpha`` and ``pvalue_at(scale * factor) < alpha``.

    ``pvalue_at(s)`` tests a fixed sample against the hypothesised distribution with scale
    ``s``: the first assertion is the goodness of fit, the second the power check.
    """
    p_fit = pvalue_at(scale)
    assert p_fit > alpha, f"sample does not fit scale {scale}: p = {p_fit:.3g}"
    p_wrong = pvalue_at(scale * factor)
    assert p_wrong < alpha, f"test has no power against scale {scale * factor}: p = {p_wrong:.3g}"


def check_audit_rate(label, bug, results, minimum=0.9):
    """Print and check the rate of a repeated privacy audit (the slow validity tests).

    ``bug`` is None for a correct implementation (the rate is the acceptance rate) or a
    description of the deliberate bug (the rate is the rejection rate). Prints the rate
    and the median ε lower bound, the figures of doc/developers/privacy_testing.rst.
    """
    accepted = sum(r.passed for r in results)
    rate = accepted / len(results) if bug is None else 1 - accepted / len(results)
    bounds = sorted(r.epsilon_lower_bound for r in results)
    print(
        f"\n{label:28s} {bug or 'correct':28s} {'accepted' if bug is None else 'rejected'} "
        f"{rate:.2f} over {len(results)} seeds; median epsilon lower bound {bounds[len(bounds) // 2]:.3f}"
    )
    assert rate >= minimum


class ToyDPMeanClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Nearest-class-mean classifier with Laplace noise on class counts and sums.

    Test helper only (the noise is the textbook Laplace, not floating-point safe).

    Parameters
    ----------
    epsilon : float, default=1.0
    bounds : tuple or None, default=None
    classes : array-like or None, default=None
    accountant : BudgetAccountant or None, default=None
    random_state : None, int or Generator, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    bounds_ : tuple of ndarray
    privacy_spent_ : PrivacyEvent

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row: a row changes one class count by 1 and
    one class sum by at most ``sum(max(|lower|, |upper|))`` in L1 norm, so each of the
    two Laplace releases (counts, sums) costs ε/2.
    """

    _parameter_constraints = {
        **{k: v for k, v in DP_PARAMETER_CONSTRAINTS.items() if k != "delta"},
        "bounds": BOUNDS_CONSTRAINT,
        "classes": ["array-like", None],
    }

    def __init__(self, *, epsilon=1.0, bounds=None, classes=None, accountant=None, random_state=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    def _privacy_cost(self):
        if is_non_private(float(self.epsilon)):
            return ComposedEvent((NON_PRIVATE_EVENT, NON_PRIVATE_EVENT))
        half = LaplaceEvent(noise_multiplier=2.0 / float(self.epsilon))
        return ComposedEvent((half, half))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        cost = self._privacy_cost()
        self._check_privacy_budget(cost)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C")
        lower, upper = self._resolve_bounds(X)
        classes, y_index = resolve_classes(self, self.classes, y)
        rng = self._generator(X, y)
        self._spend_privacy_budget(cost)

        clipped = self._clip(X, lower, upper)
        counts = np.bincount(y_index, minlength=classes.size).astype(np.float64)
        sums = np.zeros((classes.size, X.shape[1]))
        np.add.at(sums, y_index, clipped)
        count_event, sum_event = cost.events
        sensitivity = float(np.sum(np.maximum(np.abs(lower), np.abs(upper))))
        counts += rng.laplace(0.0, self._noise_multiplier(count_event) * 1.0, counts.shape)
        note_release(count_event)
        sums += rng.laplace(0.0, self._noise_multiplier(sum_event) * sensitivity, sums.shape)
        note_release(sum_event)

        self.classes_ = classes
        self.bounds_ = (lower, upper)
        self.means_ = (sums / np.maximum(counts, 1.0)[:, None]).astype(X.dtype)
        return self

    # The four steps below are separate methods only so that BrokenToyDPMeanClassifier
    # can break them one at a time.
    def _resolve_bounds(self, X):
        return resolve_bounds(self, self.bounds, X)

    def _generator(self, X, y):
        return release_generator(self.random_state, context=self, data=(X, y))

    def _clip(self, X, lower, upper):
        return np.clip(X, lower, upper)  # a new array: X is never modified

    def _noise_multiplier(self, event):
        return 0.0 if event == NON_PRIVATE_EVENT else event.noise_multiplier

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        distances = ((X[:, None, :] - self.means_[None, :, :]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(distances, axis=1)]


class BrokenToyDPMeanClassifier(ToyDPMeanClassifier):
    """:class:`ToyDPMeanClassifier` with one deliberate bug, to show that a test can fail.

    Each test of the privacy contract is validated by running it on the broken variant it
    is meant to catch (the test must fail there) as well as on the correct toy.

    Parameters
    ----------
    bug : str
        One of :attr:`BUGS` (the keys); the values say what goes wrong.
    **params
        Those of :class:`ToyDPMeanClassifier`.
    """

    BUGS = {
        "stores_rng": "keeps the fitted Generator as an attribute (the noise can be replayed)",
        "stores_seed": "keeps a seed derived from random_state as an attribute",
        "global_random": "draws from numpy's global RandomState when random_state is None",
        "mutates_X": "clips X in place, modifying the caller's array",
        "under_declares": "makes a third release that its declared cost leaves out",
        "ignores_epsilon": "noise scale does not depend on epsilon",
        "silent_bounds": "derives bounds from the data without a PrivacyLeakWarning",
        "release_before_validation": "releases noise before validating the data",
        "no_privacy_spent": "does not record privacy_spent_",
        "unvalidated_epsilon": "accepts a negative epsilon (uses its absolute value)",
        "budget_after_read": "checks the budget only after reading the data",
        "epsilon_x2": "calibrates the noise for twice its epsilon",
        "no_clipping": "does not clip X to bounds (unbounded sensitivity)",
        "finite_cost_at_inf": "treats epsilon=inf as a huge finite epsilon: tiny noise, a finite recorded cost",
    }

    @property
    def _parameter_constraints(self):
        constraints = {**ToyDPMeanClassifier._parameter_constraints, "bug": [str]}
        if self.bug == "unvalidated_epsilon":
            del constraints["epsilon"]
        return constraints

    def __init__(
        self, *, bug="no_clipping", epsilon=1.0, bounds=None, classes=None, accountant=None, random_state=None
    ):
        self.bug = bug
        super().__init__(
            epsilon=epsilon, bounds=bounds, classes=classes, accountant=accountant, random_state=random_state
        )

    def _privacy_cost(self):
        if self.bug == "finite_cost_at_inf" and math.isinf(float(self.epsilon)):
            half = LaplaceEvent(noise_multiplier=1e-9)
            return ComposedEvent((half, half))
        if self.bug == "unvalidated_epsilon":
            half = LaplaceEvent(noise_multiplier=2.0 / abs(float(self.epsilon)))
            return ComposedEvent((half, half))
        return super()._privacy_cost()

    def _resolve_bounds(self, X):
        if self.bug == "silent_bounds" and self.bounds is None:
            return np.min(X, axis=0).astype(np.float64), np.max(X, axis=0).astype(np.float64)
        return super()._resolve_bounds(X)

    def _generator(self, X, y):
        if self.bug == "global_random" and self.random_state is None:
            return np.random.mtrand._rand
        return super()._generator(X, y)

    def _clip(self, X, lower, upper):
        if self.bug == "mutates_X":
            return np.clip(X, lower, upper, out=X)
        if self.bug == "no_clipping":
            return X
        return super()._clip(X, lower, upper)

    def _noise_multiplier(self, event):
        if self.bug == "ignores_epsilon":
            return 2.0
        if self.bug == "epsilon_x2":
            return event.noise_multiplier / 2.0
        return super()._noise_multiplier(event)

    def _spend_privacy_budget(self, cost):
        super()._spend_privacy_budget(cost)
        if self.bug == "no_privacy_spent":
            del self.privacy_spent_

    def fit(self, X, y):
        if self.bug == "release_before_validation":
            np.random.default_rng().laplace(size=1)
            note_release(LaplaceEvent(noise_multiplier=1.0))
        if self.bug == "budget_after_read":
            np.asarray(X)
        if self.bug == "under_declares":
            super().fit(X, y)
            note_release(self.privacy_spent_.events[0])  # the third, undeclared release
            return self
        super().fit(X, y)
        if self.bug == "stores_rng":
            self.noise_generator_ = check_random_state(self.random_state)
        if self.bug == "stores_seed":
            self.noise_seed_ = int(check_random_state(self.random_state).integers(2**32))
        return self


def analytic_gaussian_sigma(epsilon, delta, sensitivity=1.0):
    """Smallest σ such that N(0, σ²) noise on an L2-sensitivity query is (ε, δ)-DP.

    Balle & Wang 2018 (analytic Gaussian mechanism), found by bisection on the exact
    privacy profile δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ), decreasing in σ.
    Test helper: reference value for (ε=1, δ=1e-5, Δ=1) is σ ≈ 3.7306.
    """
    from scipy.optimize import brentq
    from scipy.special import ndtr

    # Written out here, not taken from dpsk.accounting: the toys are an independent reference.
    def excess(sigma):
        a = sensitivity / (2.0 * sigma)
        b = epsilon * sigma / sensitivity
        return ndtr(a - b) - np.exp(epsilon) * ndtr(-a - b) - delta

    return brentq(excess, 1e-6 * sensitivity, 1e6 * sensitivity, xtol=1e-12, rtol=1e-12)


class ToyLaplaceMechanism:
    """``value + Laplace(sensitivity / epsilon)`` with an optional deliberate bug (test helper).

    The textbook sampler (numpy's inverse CDF): not floating-point safe.

    Parameters
    ----------
    epsilon : float
    sensitivity : float, default=1.0
        L1 sensitivity the noise is calibrated for (and the claim is about).
    random_state : None, int or Generator, default=None
    bug : str or None, default=None
        ``"sensitivity_x1.25"`` (noise for 1/1.25 of the sensitivity), ``"epsilon_x2"``
        (noise for twice epsilon), ``"wrong_scale"`` (the scale parameter set to the
        intended standard deviation, so the noise is √2 times too small).
    """

    BUGS = ("sensitivity_x1.25", "epsilon_x2", "wrong_scale")

    def __init__(self, *, epsilon, sensitivity=1.0, random_state=None, bug=None):
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self.random_state = random_state
        self.bug = bug

    @property
    def privacy_event(self):
        """What the mechanism claims (whatever its bug)."""
        return LaplaceEvent(noise_multiplier=1.0 / self.epsilon)

    def randomise(self, value):
        scale = self.sensitivity / self.epsilon
        if self.bug == "sensitivity_x1.25":
            scale /= 1.25
        elif self.bug == "epsilon_x2":
            scale /= 2.0
        elif self.bug == "wrong_scale":
            scale /= np.sqrt(2.0)  # Laplace(b) has standard deviation b·√2
        elif self.bug is not None:
            raise ValueError(f"unknown bug {self.bug!r}")
        value = np.asarray(value, dtype=np.float64)
        rng = check_random_state(self.random_state)
        note_release(self.privacy_event)
        return value + rng.laplace(0.0, scale, value.shape)


class ToyGaussianMechanism:
    """``value + N(0, σ²)`` with σ from the analytic Gaussian calibration (test helper).

    Parameters
    ----------
    epsilon, delta : float
    sensitivity : float, default=1.0
        L2 sensitivity.
    random_state : None, int or Generator, default=None
    bug : str or None, default=None
        ``"sensitivity_x1.25"``, ``"epsilon_x2"`` (σ calibrated for 2ε), or
        ``"wrong_scale"`` (σ passed where a variance was expected: std √σ).
    """

    BUGS = ("sensitivity_x1.25", "epsilon_x2", "wrong_scale")

    def __init__(self, *, epsilon, delta, sensitivity=1.0, random_state=None, bug=None):
        self.epsilon = epsilon
        self.delta = delta
        self.sensitivity = sensitivity
        self.random_state = random_state
        self.bug = bug

    @property
    def privacy_event(self):
        """What the mechanism claims: Gaussian noise with the calibrated multiplier."""
        return GaussianEvent(noise_multiplier=analytic_gaussian_sigma(self.epsilon, self.delta))

    def randomise(self, value):
        epsilon = 2.0 * self.epsilon if self.bug == "epsilon_x2" else self.epsilon
        std = analytic_gaussian_sigma(epsilon, self.delta) * self.sensitivity
        if self.bug == "sensitivity_x1.25":
            std /= 1.25
        elif self.bug == "wrong_scale":
            std = np.sqrt(std)
        elif self.bug not in (None, "epsilon_x2"):
            raise ValueError(f"unknown bug {self.bug!r}")
        value = np.asarray(value, dtype=np.float64)
        rng = check_random_state(self.random_state)
        note_release(self.privacy_event)
        return value + rng.normal(0.0, std, value.shape)


def run_python(code, *args, cwd, extra_paths=(), **kwargs):
    """Run ``python -c code *args`` in a child interpreter that imports this same dpsk.

    The child runs in ``cwd`` (pass a temporary directory: the source tree may hold an
    uncompiled copy of dpsk that would shadow the installed one) and finds dpsk where
    this process found it: site-packages, or an in-place build. ``extra_paths`` go first
    on its ``PYTHONPATH``. Returns the ``CompletedProcess``; keyword arguments go to
    :func:`subprocess.run` (output is captured as text unless overridden).
    """
    import dpsk

    dpsk_root = str(Path(dpsk.__file__).resolve().parents[1])
    paths = [*map(str, extra_paths), dpsk_root, os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    options = {"capture_output": True, "text": True, **kwargs}
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=cwd, env=env, **options)
