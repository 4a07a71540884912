# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The DP-SGD engine shared by :mod:`dpsk.linear_model`'s SGD models and :mod:`dpsk.neural_network`.

One step (Abadi et al. 2016; Papernot, "Private Deep Learning", eqs. 7.5–7.7; DP-GD,
eqs. 7.11–7.12 of the ML survey, when q = 1):

1. Poisson sampling: each row is in the batch independently with probability q (drawn
   as a Binomial(n, q) size and a uniform subset of that size, the same distribution),
   from the release's Generator (secure by default);
2. the model computes the sum of its per-example gradients, each clipped to L2 norm
   C·(1 − μ) over *all* its parameters jointly (``clipped_sum``: ghost norms, no batch ×
   parameters tensor), times the row's weight in [0, 1];
3. Gaussian noise N(0, σ²C²) on every entry of that sum (sensitivity C under add/remove);
4. the model updates its parameters from the noisy sum divided by the public expected
   batch size (post-processing: plain steps, momentum or Adam alike).

The fit is one event, ``SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(σ)), T)``
(Gaussian steps when q = 1), charged once; σ is calibrated from (ε, δ, q, T) with
:func:`~dpsk.accounting.calibrate_noise_multiplier`. q and T need the number of rows,
which is private under add/remove: a public ``n_samples`` fixes them before the data is
read, otherwise a geometric count (1% of ε) is released first, inside the same event.

Rounding of the clipped sum (the margin μ)
------------------------------------------
The sensitivity must hold for the *computed* sum. Write u = 2⁻⁵³ and t = C(1 − μ). Each
computed clipped term has true norm at most t(1 + (W + 16)u), W the summed lengths of the
vectors whose squared norms give the clipping factor (a public function of the model's
shape, ``width``): the norms' sums of squares, square roots, the division and the scalings
each round once. A matrix product (any order of summation, BLAS included) of m terms
errs by at most γ_m·Σᵢ‖termᵢ‖ ≤ γ_m·m·t (γ_m = mu/(1 − mu), Higham's bound, entrywise;
in Frobenius norm by the triangle inequality; over several layers by Minkowski's). So
for batches B and B ∪ {z} of m and m + 1 rows the computed sums differ by at most
t·(1 + (W + 16)u)·(1 + 2γ_{m+1}(m + 1)), which is at most C when

    μ ≥ 1.01·(2(m + 1)² + W + 16)·u.

:func:`clip_margin` returns the smallest power of two ≥ 2⁻³⁰ satisfying this for every
batch of at most M rows, M = :func:`batch_bound` (4·b + 2048 for the public expected
batch b). The fixed margin 2⁻³⁰ used before covered batches of at most 2,036 rows; DP-GD
on Adult (32,561 rows) needs 2⁻¹⁷ and 10⁶ rows 2⁻⁸ (the clip is then 0.4% below C:
a negligible loss of signal, no loss of privacy). A batch has at most n rows and, for
Poisson batches, more than M only with negligible probability unless the true number of
rows exceeds about four times the public one (a much too small ``n_samples``): such
batches are not covered (doc/limitations.rst).
"""

import functools
import math
from collections import namedtuple
from numbers import Integral, Real

import numpy as np

from dpsk._core._noise import add_gaussian
from dpsk.accounting import (
    GaussianEvent,
    PoissonSampledEvent,
    SelfComposedEvent,
    calibrate_noise_multiplier,
    note_release,
)
from dpsk.accounting._events import budget_event
from dpsk.utils._docstring import _shared_docs
from dpsk.utils._noisy_count import COUNT_SHARE, RowCount
from dpsk.utils._sklearn_compat import Interval, StrOptions
from dpsk.utils.validation import resolve_classes

__all__ = [
    "COUNT_SHARE",
    "DPSGDMixin",
    "DPSGD_CONSTRAINTS",
    "DPSGD_DOCS",
    "Plan",
    "batch_bound",
    "class_targets",
    "clip_factors",
    "clip_margin",
    "covered_batch",
    "plan_steps",
    "poisson_batch",
    "run_steps",
    "steps_event",
]

#: Smallest relative clip margin μ (the clip target is C·(1 − μ)).
MIN_MARGIN = 2.0**-30
_U = 2.0**-53

#: The public schedule of a fit: sampling rate, steps, expected batch size, noise multiplier.
Plan = namedtuple("Plan", ["q", "steps", "expected_batch", "sigma"])


def _margin_needed(max_batch, width):
    return 1.01 * (2.0 * (float(max_batch) + 1.0) ** 2 + float(width) + 16.0) * _U


def clip_margin(max_batch, width):
    """Relative margin μ covering the rounding of clipped sums of up to ``max_batch`` rows.

    The smallest power of two ≥ 2⁻³⁰ with μ ≥ 1.01·(2(M + 1)² + W + 16)·2⁻⁵³ (module
    docstring); ``width`` W is the public length of the vectors entering the norms.
    """
    return max(MIN_MARGIN, 2.0 ** math.ceil(math.log2(_margin_needed(max_batch, width))))


def covered_batch(margin, width):
    """Largest batch size whose clipped sum's rounding the margin μ covers (module docstring)."""
    m = math.floor(math.sqrt(max(0.0, (margin / (1.01 * _U) - width - 16.0) / 2.0))) - 1
    while m >= 0 and _margin_needed(m, width) > margin:
        m -= 1
    return m


def batch_bound(expected_batch):
    """Public batch bound M = 4·ceil(b) + 2048: a Poisson batch of mean b exceeds it with negligible probability."""
    return 4 * math.ceil(expected_batch) + 2048


@functools.lru_cache(maxsize=256)
def noise_multiplier(epsilon, delta, sampling_probability, steps):
    """σ of T Poisson-sampled Gaussian steps at (ε, δ) by the tightest method (cached: public inputs)."""
    return calibrate_noise_multiplier(functools.partial(steps_event, sampling_probability, steps), epsilon, delta)


def step_event(sampling_probability, sigma):
    """The privacy event of one training step; σ = 0 (``epsilon=inf``: no noise) is the infinite spend."""
    if sigma == 0.0:
        return budget_event(math.inf)
    if sampling_probability >= 1.0:
        return GaussianEvent(sigma)
    return PoissonSampledEvent(sampling_probability, GaussianEvent(sigma))


def steps_event(sampling_probability, steps, sigma):
    """The privacy event of the training steps: T Poisson-sampled Gaussian releases."""
    step = step_event(sampling_probability, sigma)
    return step if sigma == 0.0 else SelfComposedEvent(step, steps)


def plan_steps(batch_size, max_iter, n_public):
    """(q, T, expected batch) from the public size: q = min(1, b/n), T = epochs·ceil(1/q)."""
    if batch_size == "full":
        return 1.0, int(max_iter), float(n_public)
    q = min(1.0, float(batch_size) / float(n_public))
    steps_per_epoch = math.ceil(1.0 / q - 1e-9)
    return q, int(max_iter) * steps_per_epoch, q * float(n_public)


def poisson_batch(n, q, rng):
    """Indices of a Poisson sample: each of n rows kept independently with probability q.

    Drawn as a Binomial(n, q) size and a uniform subset of that size (the same
    distribution, O(batch) work for small q); every row when q = 1.
    """
    if q >= 1.0:
        return slice(None)
    k = int(rng.binomial(n, q))
    return np.sort(rng.choice(n, size=k, replace=False))


def clip_factors(norms, target, weights):
    """Per-row factor w_i·min(1, t/‖g_i‖) from the per-example gradient norms (ghost norms).

    A row whose norm is not finite (overflow on huge values) gets factor 0: the caller
    must also zero its terms (0·∞ is NaN), so that it contributes nothing.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(norms > target, target / norms, 1.0)
    factor[~np.isfinite(norms)] = 0.0
    if weights is not None:
        factor = factor * weights
    return factor


def class_targets(estimator, public, y, negative):
    """Resolve the public classes (sets ``classes_``) and encode y for a classifier's loss.

    One column when there are two classes (1 for ``classes_[1]``), one column per class
    otherwise; 1.0 marks the row's class and ``negative`` the others (−1 for the linear
    models' margin losses, 0 for the MLP's log-loss). ``public`` is the classes
    parameter (or the fitted ``classes_`` of a continued ``partial_fit``).
    """
    classes, y_index = resolve_classes(estimator, public, y)
    estimator.classes_ = classes
    if classes.size == 2:
        return np.where(y_index == 1, 1.0, negative)[:, None]
    return np.where(y_index[:, None] == np.arange(classes.size), 1.0, negative)


def partial_classes(estimator, classes):
    """The public classes of a ``partial_fit`` call: the fitted ones, else ``classes``, else the parameter."""
    if hasattr(estimator, "classes_"):
        return estimator.classes_
    return classes if classes is not None else estimator.classes


def run_steps(n, clipped_sum, update, *, plan, clip_norm, width, rng):
    """The DP-SGD loop: T steps of Poisson batch, clipped sum, Gaussian noise, update.

    Parameters
    ----------
    n : int
        Number of rows (the batches are drawn from ``range(n)``).
    clipped_sum : callable
        ``clipped_sum(index, target)`` returns the list of arrays Σ_{i ∈ batch} w_i·g_i·
        min(1, target/‖g_i‖), each g_i covering all parameters (one norm per row).
    update : callable
        ``update(gradients)`` with the noisy sums divided by the expected batch, same shapes.
    plan : Plan
    clip_norm : float
        C: the noise's standard deviation is σ·C.
    width : int
        Public length of the vectors entering the norms (for :func:`clip_margin`).
    rng : numpy.random.Generator
        The release generator.
    """
    C = float(clip_norm)
    target = C * (1.0 - clip_margin(batch_bound(plan.expected_batch), width))
    one_step = step_event(plan.q, plan.sigma)
    for _ in range(plan.steps):
        sums = clipped_sum(poisson_batch(n, plan.q, rng), target)
        noisy = np.concatenate([np.asarray(s, dtype=np.float64).ravel() for s in sums])
        if plan.sigma > 0.0:
            add_gaussian(noisy, plan.sigma * C, rng)
        note_release(one_step)
        noisy /= plan.expected_batch
        grads, start = [], 0
        for s in sums:
            grads.append(noisy[start : start + s.size].reshape(s.shape))
            start += s.size
        update(grads)


#: Parameter constraints of every DP-SGD estimator (with ``DP_PARAMETER_CONSTRAINTS``).
DPSGD_CONSTRAINTS = {
    "delta": [Interval(Real, 0, 1, closed="neither")],
    "clip_norm": [Interval(Real, 0, None, closed="neither")],
    "noise_multiplier": [Interval(Real, 0, None, closed="neither"), None],
    "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"full"})],
    "n_samples": [Interval(Integral, 1, None, closed="left"), None],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
}


class DPSGDMixin:
    """The fit protocol of DP-SGD estimators: plan, budget check before the data, count, one spend.

    Needs ``epsilon``, ``delta``, ``batch_size``, ``max_iter``, ``noise_multiplier`` and
    ``n_samples`` parameters and :class:`~dpsk.base.DPEstimatorMixin`.
    """

    def _plan(self, n_public, epsilon, epochs=None):
        epochs = self.max_iter if epochs is None else epochs
        q, steps, expected_batch = plan_steps(self.batch_size, epochs, n_public)
        if self.noise_multiplier is not None:
            sigma = float(self.noise_multiplier)
        elif math.isinf(epsilon):  # the non-private ceiling: no noise, an infinite spend
            sigma = 0.0
        else:
            sigma = noise_multiplier(float(epsilon), float(self.delta), q, steps)
        return Plan(q, steps, expected_batch, sigma)

    def _check_dpsgd_budget(self):
        """Before the data is read: the whole cost with ``n_samples``, else (ε, δ) as a bound."""
        if self.n_samples is not None:
            plan = self._plan(self.n_samples, self.epsilon)
            self._check_privacy_budget(steps_event(plan.q, plan.steps, plan.sigma))
            return plan
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        return None

    def _check_partial_budget(self):
        """``partial_fit``: one epoch planned from the public ``n_samples`` (required), checked before the data."""
        if self.n_samples is None:
            raise ValueError(
                "partial_fit needs the public n_samples hint (the number of rows of each batch): "
                "the privacy cost of a call must be known before its data is read."
            )
        plan = self._plan(self.n_samples, self.epsilon, epochs=1)
        self._check_privacy_budget(steps_event(plan.q, plan.steps, plan.sigma))
        return plan

    def _spend_dpsgd(self, plan, n_rows, rng):
        """Draw the private count if needed, then spend the fit's one event; returns (plan, n_public)."""
        if plan is not None:
            self._spend_privacy_budget(steps_event(plan.q, plan.steps, plan.sigma))
            return plan, float(self.n_samples)
        # The count's event is known before it is drawn: charging it separately would be
        # two spends, so the one spend comes after the count (nothing is released before
        # it: the count stays inside this fit).
        count = RowCount(self.epsilon, n_rows, rng, needed=True)
        plan = self._plan(count.value, count.fit_epsilon)
        self._spend_privacy_budget(count.compose(steps_event(plan.q, plan.steps, plan.sigma)))
        return plan, count.value


#: Docstring snippets of the DP-SGD parameters (the estimators add their own).
DPSGD_DOCS = {
    "delta": """delta : float, default=1e-5
        Privacy parameter δ in (0, 1): DP-SGD adds Gaussian noise, so δ > 0. Choose δ
        well below 1/n_samples.""",
    "noise_multiplier": """noise_multiplier : float or None, default=None
        σ: the noise on each step's clipped gradient sum has standard deviation σ·C.
        ``None`` calibrates it from (ε, δ), the sampling rate and the number of steps,
        before any data is read, with the accountant's tightest method. When given,
        ``epsilon`` is ignored for calibration but the fit still records its true cost.""",
    "batch_size": """batch_size : int or "full", default=256
        Expected batch size b of Poisson sampling: every step keeps each row
        independently with probability q = b / n (n the public ``n_samples``, or the
        noisy count). ``"full"``: every step uses every row (DP-GD, q = 1).""",
    "n_samples": """n_samples : int or None, default=None
        Public number of training rows (e.g. from the data's documentation), used for
        the sampling rate q and the number of steps. It need not be exact: the guarantee
        holds for any data, a wrong value only changes the batch size (but see the
        rounding note in the user guide's limitations for a hint four times too small).
        ``None`` counts the rows privately first (geometric mechanism with 1% of ε,
        charged in the same event); the count is stored in ``n_samples_``.""",
    "max_iter": """max_iter : int, default=15
        Number of epochs: T = max_iter·ceil(1/q) steps (``max_iter`` steps with
        ``batch_size="full"``). Every step costs privacy, so there is no early stopping.""",
}


def partial_fit_doc(state, extra="", *, y_doc=None):
    """The docstring of a DP-SGD estimator's ``partial_fit``; ``state``: what a call continues from.

    ``y_doc``: the class-level entry of ``y`` (default: a classifier's ``y`` and ``classes``).
    """
    y_doc = PARTIAL_FIT_CLASSES_DOC if y_doc is None else y_doc
    indent = lambda text: text.replace("\n", "\n    ")  # noqa: E731  (class-level snippets, at method level)
    return f"""More DP-SGD steps on new data: one epoch over X, one private release.

        Continues from {state}.
        Each call is its own spend of (``epsilon``, ``delta``), planned from the public
        ``n_samples`` (the expected number of rows of each call's X, required) and
        checked against the budget before X is read; the accountant composes the
        calls.{extra}

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data of this call.
        {indent(y_doc)}
        {indent(_shared_docs["sample_weight"].strip(chr(10)))}

        Returns
        -------
        self : object
            The updated estimator.
        """


#: The ``y`` and ``classes`` entries of a DP-SGD classifier's ``partial_fit`` docstring.
PARTIAL_FIT_CLASSES_DOC = """y : array-like of shape (n_samples,)
        Class labels, in the public classes.
    classes : array-like of shape (n_classes,), default=None
        All the classes (public), on the first call (or the ``classes`` parameter);
        ignored afterwards. Neither given: the labels of the first call's y are used,
        with a :class:`~dpsk.exceptions.PrivacyLeakWarning`, as in ``fit``."""


def privacy_paragraph(what, released):
    """The **Privacy** paragraph of a DP-SGD estimator: ``what`` is clipped, ``released`` is released."""
    return f"""**Privacy.** (ε, δ)-DP under the add/remove-one-row relation, whatever
    the data: every row's gradient ({what}) is clipped to ``clip_norm`` (its sample
    weight, clipped to [0, 1], scales it), so one row changes each step's gradient sum by
    at most C, and that sum gets Gaussian noise of standard deviation σ·C. Batches are
    Poisson samples (each row independently with probability q, from the release's
    Generator: secure with ``random_state=None``); the batches are not released. The fit
    is one event, ``SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(σ)), T)``
    (Gaussian steps when q = 1), accounted with privacy loss distributions (optional
    dp-accounting) or Rényi DP (Mironov, Talwar & Zhang 2019), composed with the
    geometric count of the rows when ``n_samples`` is None (then q, T and σ are
    functions of the released count: adaptive composition, the total still within
    (ε, δ)). Released: {released} (and ``n_samples_``). The Gaussian noise is the
    continuous sampler: not floating-point safe; the rounding of the float64 gradient
    sums is covered by a clip margin for batches of up to 4·b + 2048 rows.
    Domain: finite X and y (for classifiers, labels in ``classes``), finite,
    non-negative ``sample_weight``. Data outside it raise a ``ValueError`` before any
    noise is drawn, which reveals only that the data left the domain
    (:ref:`declared_domain`)."""
