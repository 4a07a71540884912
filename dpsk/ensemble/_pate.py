# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""PATE: any scikit-learn classifier, made private by a noisy vote of teachers on disjoint data.

Papernot et al., "Semi-supervised knowledge transfer for deep learning from private
training data" (ICLR 2017: LNMax) and "Scalable private learning with PATE" (ICLR 2018:
GNMax, Confident-GNMax); seed 002, Section 7.5, and spec-accounting.md A.4.

Why :mod:`dpsk.ensemble` and not a ``semi_supervised`` module: PATE is a meta-estimator
that fits clones of the user's classifier on disjoint random parts of the rows, the
machinery it shares with :class:`~dpsk.ensemble.SubsampleAggregate` (one home:
``dpsk.ensemble._parts``), and scikit-learn users wrapping "any model" reach for
:mod:`sklearn.ensemble` (``BaggingClassifier``, ``VotingClassifier``). scikit-learn's
semi-supervised estimators take unlabelled rows as ``y == -1`` inside ``X``; PATE's public
rows must stay apart from the private ones (they have another privacy status), so its
``fit(X, y, X_public=...)`` would not match that API anyway.

Accounting (data-independent)
=============================

One row is in one teacher's part, so it can change that teacher's vote on every query
and nothing else: per query, one vote moves from a class to another (or from abstaining
to a class), which changes two counts of the vote histogram by 1 (L1 sensitivity 2, L2
sensitivity √2). The noise is independent per count, so the release of the T × C
histogram of T queries is, for the worst pair of neighbours, the composition of 2T
scalar releases of sensitivity 1 (a count that does not change costs nothing). The
declared event is exactly that: ``SelfComposedEvent(DiscreteGaussianEvent(σ, 1), 2T)``
(GNMax) or ``SelfComposedEvent(DiscreteLaplaceEvent(b, 1), 2T)`` (LNMax, each query
(2/b)-DP as in seed 002's ``Lap(2/γ)``), composed by the accountant's tightest method
(privacy loss distributions when available). Confident-GNMax adds, per query, the
threshold check on the noisy largest count (sensitivity 1): T more discrete Gaussian
releases of scale σ₁. Which queries pass depends on the data, so every query is charged
as answered. The argmax and the student are post-processing.

The data-dependent bounds of Papernot et al. (smaller when the teachers agree) depend on
the votes themselves: releasing them would leak, and a guarantee built on them needs the
smooth-sensitivity release of the 2018 paper. dpsk does not offer them: the cost charged
is always the data-independent one.

How many queries (``max_queries="auto"``)
=========================================

Every query adds two counts of noise to the composition, so at a fixed (ε, δ) the vote
noise grows with the number T of queries: for Gaussian noise under tight composition the
2T releases of sensitivity 1 at scale σ cost what one release at scale σ/√(2T) costs,
so σ(T) ≈ √(2T) · σ₁(ε, δ) with σ₁ the analytic Gaussian scale. More labels, each
noisier. The default rule weighs the two with a model of the student's error, from
public parameters only (ε, δ, ``n_teachers``, the number of ``classes``, the aggregator,
and the number of public rows; never X, y or the votes):

* a label's quality: on a query where a fraction ``ASSUMED_AGREEMENT`` = 0.9 of the
  teachers vote the right class and the rest one other class (the others none), the
  noisy argmax over the C classes returns the right class with probability p(σ)
  (Gaussian quadrature; for the discrete Laplace, a Gaussian of the same standard
  deviation at the pure-DP scale b = 2T/ε). Its *signal* is κ = (C·p − 1)/(C − 1): 1
  for an exact label, 0 for a uniformly random one (for symmetric label noise, T labels
  of signal κ are worth about T·κ² exact ones);
* the student's error is modelled as (1 − κ) + L/(T·κ²): a term for what label noise
  does to a learner that is not noise-robust, and an estimation term that falls with the
  effective number of labels, L = ``LABELS_NEEDED`` = 100 being the scale at which a
  student has "enough" labels;
* T minimises it over a geometric grid of [1, number of public rows] (with σ(T) from the
  continuous Gaussian approximation; the noise of the chosen T is then calibrated
  exactly), at least ``MIN_QUERIES`` (with a warning when that floor binds: the labels
  are then noisier than the model would choose).

What it does: with two classes κ is concave in the margin-to-noise ratio, so T·κ² never
falls as T grows and, while labels are scarce (T·κ² well below L), the rule labels every
public row (breast_cancer: 20 teachers, 71 public rows); when many labels are affordable
(Adult: 250 teachers, 8,140 public rows) the first term stops the noise before the
labels drown (a few hundred queries at ε = 1). With many classes p rises slowly until
the right class's margin clears the noise of all C − 1 others, so few accurate labels
beat many drowned ones (digits: 20 teachers, 10 classes). The two constants were chosen
on validation splits of the *training* rows of breast_cancer, digits and Adult (never
their test rows), among (a, L) in {0.75, 0.9} × {30, 100, 300}; see
``benchmarks/results/bench_pate.md``.

The student (``semi_supervised=True``)
======================================

The public rows that were not queried (and Confident-GNMax's unanswered queries) are
public: the student may use them freely. With ``semi_supervised=True`` it is wrapped in
scikit-learn's :class:`~sklearn.semi_supervised.SelfTrainingClassifier` and fitted on
every public row, the noisy labels and the unlabelled rest. The student is a function of
the noisy labels and of public data only, so this is post-processing: it costs no
privacy. It is not the default: on Adult at ε = 1 (5 seeds) it changed the accuracy of a
HistGradientBoosting student by +0.002 and of a LogisticRegression student by -0.005,
both within the seeds' spread, for several times the student's fit time.
"""

import functools
import math
import warnings
from fractions import Fraction
from numbers import Integral, Real

import numpy as np
from scipy import special
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.dummy import DummyClassifier
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.utils.metaestimators import available_if

from dpsk._core._exact import MAX_T_DEN, MAX_T_NUM, discrete_gaussian, discrete_laplace, round_up_sigma2
from dpsk.accounting import (
    ComposedEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    SelfComposedEvent,
    get_epsilon,
    note_release,
)
from dpsk.accounting._calibration import gaussian_sigma
from dpsk.accounting._events import budget_event
from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.ensemble._parts import fit_parts, seed_estimators
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.mechanisms._base import exact_rational
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils._units import random_parts
from dpsk.utils.validation import release_generator, resolve_classes

__all__ = ["PATEClassifier", "pate_cost"]

#: Default ratio σ₁/σ of Confident-GNMax's threshold noise to its vote noise. The check
#: then takes 1/(1 + 2·2²) = 11% of the Gaussian budget (ρ of T checks of sensitivity 1
#: against 2T vote counts), as in Papernot et al. 2018, whose σ₁ is several times σ₂.
THRESHOLD_NOISE_RATIO = 2.0

#: Default threshold of Confident-GNMax, as a fraction of ``n_teachers``.
THRESHOLD_FRACTION = 0.6

#: Default rule for the number of queries (see the module docstring): the fraction of teachers
#: assumed to agree on a query's label when judging the label's quality ...
ASSUMED_AGREEMENT = 0.9

#: ... and the number of exact labels at which the student's estimation error is comparable
#: to the error label noise causes.
LABELS_NEEDED = 100.0

#: The fewest queries the default rule asks (a student needs labels); a warning says when it binds.
MIN_QUERIES = 10

_AGGREGATORS = ("gnmax", "lnmax", "confident")


def _vote_event(aggregator, n_queries, scale, threshold_scale=None):
    """The declared event of ``n_queries`` answered queries with these noise scales."""
    if aggregator == "lnmax":
        return SelfComposedEvent(DiscreteLaplaceEvent(scale, 1), 2 * n_queries)
    votes = SelfComposedEvent(DiscreteGaussianEvent(scale, 1), 2 * n_queries)
    if aggregator == "gnmax":
        return votes
    return ComposedEvent((SelfComposedEvent(DiscreteGaussianEvent(threshold_scale, 1), n_queries), votes))


def _smallest_scale(cost_of, epsilon, delta, lo, hi, tolerance=1.002):
    """The smallest scale s in [lo, ...) with ``get_epsilon(cost_of(s), delta) <= epsilon``, rounded up.

    Geometric bisection to a relative ``tolerance``; the upper end (which fits) is returned.
    """

    def fits(scale):
        return get_epsilon(cost_of(scale), delta) <= epsilon

    while not fits(hi):
        lo, hi = hi, hi * 1.1
    while fits(lo):
        lo, hi = lo / 2, lo
    while hi / lo > tolerance:
        mid = math.sqrt(hi * lo)
        hi, lo = (mid, lo) if fits(mid) else (hi, mid)
    return hi


def _needs_delta(aggregator, delta):
    if aggregator != "lnmax" and delta == 0:
        raise ValueError(f"aggregator={aggregator!r} adds Gaussian noise and needs delta > 0; use 'lnmax' for delta=0")


#: Gauss-Hermite nodes and weights (probabilists'), normalised: E[f(Z)] ≈ Σ w f(z).
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(64)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def label_signal(n_teachers, n_classes, noise_std, agreement=ASSUMED_AGREEMENT):
    """κ = (C·p − 1)/(C − 1) of a noisy-argmax label, p its probability of being right.

    The vote: ``agreement · n_teachers`` on the right class, the rest on one other class,
    none on the remaining ``n_classes − 2``; every count gets independent Gaussian noise of
    standard deviation ``noise_std``. p = E[Φ(Z + m₁/s) · Φ(Z + m₀/s)^(C−2)], Z standard
    normal, m₁ the margin over the runner-up and m₀ the right class's count. Public
    parameters only.
    """
    if noise_std <= 0:
        return 1.0
    top = agreement * n_teachers / noise_std
    margin = (2.0 * agreement - 1.0) * n_teachers / noise_std
    values = special.ndtr(_NODES + margin)
    if n_classes > 2:
        values = values * special.ndtr(_NODES + top) ** (n_classes - 2)
    p = float(_WEIGHTS @ values)
    return max(n_classes * p - 1.0, 0.0) / (n_classes - 1.0)


def _modelled_error(aggregator, n_teachers, n_classes, epsilon, delta, n_queries):
    """The rule's model of the student's error with ``n_queries`` labels (module docstring)."""
    if aggregator == "lnmax":
        b = 2.0 * n_queries / epsilon  # pure-DP composition of the 2T releases
        q = math.exp(-1.0 / b)
        std = math.sqrt(2.0 * q) / (1.0 - q)
    else:
        spread = 2.0 + (1.0 / THRESHOLD_NOISE_RATIO**2 if aggregator == "confident" else 0.0)
        std = math.sqrt(spread * n_queries) * gaussian_sigma(epsilon, delta)
    signal = label_signal(n_teachers, n_classes, std)
    if signal <= 0:
        return math.inf
    return (1.0 - signal) + LABELS_NEEDED / (n_queries * signal**2)


@functools.lru_cache(maxsize=128)
def auto_queries(aggregator, n_teachers, n_classes, epsilon, delta, n_public, sigma=None, sigma_threshold=None):
    """The default number of queries (``max_queries="auto"``): public parameters only.

    The number of queries in [1, ``n_public``] that minimises the modelled student error
    (1 − κ) + ``LABELS_NEEDED``/(T·κ²) (module docstring), searched on a geometric grid;
    with a given ``sigma``, the most queries that this noise affords within (ε, δ).
    Returns ``(n_queries, below_target)``: at least ``min(MIN_QUERIES, n_public)``, with
    ``below_target`` True when that floor binds (the labels are then noisier than the
    model would choose). Never reads data: two data sets with the same number of public
    rows and the same public parameters get the same answer.
    """
    _needs_delta(aggregator, delta)
    floor = min(MIN_QUERIES, n_public)
    if n_public == 0:
        return 0, False
    if sigma is None:
        grid = np.unique(np.round(np.geomspace(1, n_public, 200)).astype(np.int64))
        errors = [_modelled_error(aggregator, n_teachers, n_classes, epsilon, delta, int(t)) for t in grid]
        best = int(grid[int(np.argmin(errors))])
        return max(best, floor), best < floor
    scale = float(sigma)
    threshold_scale = THRESHOLD_NOISE_RATIO * scale if sigma_threshold is None else float(sigma_threshold)

    def fits(n_queries):
        return get_epsilon(_vote_event(aggregator, n_queries, scale, threshold_scale), delta) <= epsilon

    if not fits(1):
        return floor, floor > 0
    lo, hi = 1, 2  # fits(lo); exponential search, then bisection on the integers
    while hi <= n_public and fits(hi):
        lo, hi = hi, 2 * hi
    hi = min(hi, n_public + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return max(lo, floor), lo < floor


@functools.lru_cache(maxsize=128)
def calibrate_pate(aggregator, n_queries, epsilon, delta, threshold_ratio=THRESHOLD_NOISE_RATIO):
    """Noise scales ``(scale, threshold_scale)`` that make ``n_queries`` queries (ε, δ)-DP.

    Public parameters only (computed before any data is read; cached). ``scale`` is σ of
    the discrete Gaussian vote noise (GNMax, Confident-GNMax) or the scale b of the
    discrete Laplace vote noise (LNMax); ``threshold_scale`` is σ₁ = ``threshold_ratio`` · σ
    for Confident-GNMax, else None.
    """
    if n_queries == 0:
        return (1.0, threshold_ratio if aggregator == "confident" else None)
    if aggregator == "lnmax":
        if delta == 0:  # basic composition is exact for pure DP at δ = 0
            return (float(Fraction(2 * n_queries) / Fraction(epsilon)), None)
        basic = 2 * n_queries / epsilon  # fits: the sum of the 2T releases' ε
        return (_smallest_scale(lambda b: _vote_event("lnmax", n_queries, b), epsilon, delta, basic / 8, basic), None)
    _needs_delta(aggregator, delta)
    # Continuous-Gaussian guess: μ² = T (2 + [1/r²]) / σ² must equal 1/gaussian_sigma(ε, δ)².
    spread = 2.0 + (1.0 / threshold_ratio**2 if aggregator == "confident" else 0.0)
    guess = math.sqrt(n_queries * spread) * gaussian_sigma(epsilon, delta)

    def cost_of(sigma):
        return _vote_event(aggregator, n_queries, sigma, threshold_ratio * sigma)

    # The discrete Gaussian's accounting is a little looser than the continuous one's.
    sigma = _smallest_scale(cost_of, epsilon, delta, guess, guess * 1.1)
    return (sigma, threshold_ratio * sigma if aggregator == "confident" else None)


def pate_cost(aggregator, n_queries, *, epsilon=None, delta=0.0, sigma=None, sigma_threshold=None):
    """The scales and the declared privacy event of a PATE labelling of ``n_queries`` queries.

    Parameters
    ----------
    aggregator : {"gnmax", "lnmax", "confident"}
    n_queries : int
    epsilon, delta : float
        The target, used when ``sigma`` is None (calibration).
    sigma, sigma_threshold : float or None
        Given noise scales (the event is theirs, whatever ε).

    Returns
    -------
    scale, threshold_scale, event
    """
    if sigma is None:
        ratio = THRESHOLD_NOISE_RATIO
        if sigma_threshold is not None:
            raise ValueError("sigma_threshold needs sigma (or leave both to the calibration)")
        scale, threshold_scale = calibrate_pate(aggregator, int(n_queries), float(epsilon), float(delta), ratio)
    else:
        scale = float(sigma)
        threshold_scale = None
        if aggregator == "confident":
            threshold_scale = THRESHOLD_NOISE_RATIO * scale if sigma_threshold is None else float(sigma_threshold)
    return scale, threshold_scale, _vote_event(aggregator, int(n_queries), scale, threshold_scale)


def _teacher_votes(fitted, X_query, classes):
    """Index in ``classes`` of a teacher's prediction on each query (-1: abstain)."""
    predicted = np.asarray(fitted.predict(X_query))
    if predicted.shape != (X_query.shape[0],):
        return None
    index = np.searchsorted(classes, predicted)
    index = np.clip(index, 0, classes.size - 1)
    return np.where(classes[index] == predicted, index, -1).astype(np.intp)


def _constant_votes(label, X_query, classes):
    """The votes of a teacher whose part holds one class: that class on every query."""
    return _teacher_votes(DummyClassifier(strategy="constant", constant=label).fit([[0]], [label]), X_query, classes)


def _n_rows(X):
    """Number of rows from the shape alone (no value read)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape):
        return int(shape[0])
    try:
        return len(X)
    except TypeError:  # array-likes with neither shape nor len
        return np.asarray(X).shape[0]


def _student_has(method):
    def check(self):
        return hasattr(self.student_ if hasattr(self, "student_") else self._student(), method)

    return check


@Substitution(
    epsilon=_shared_docs["epsilon"],
    classes=_shared_docs["classes"],
    accountant=_shared_docs["accountant"],
    random_state=_shared_docs["random_state"],
    privacy_spent_=_shared_docs["privacy_spent_"],
)
class PATEClassifier(DPEstimatorMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Private Aggregation of Teacher Ensembles: any classifier, made private with public unlabelled data.

    The private rows are split at random into ``n_teachers`` disjoint parts; a clone of
    ``estimator`` (any scikit-learn classifier, not private) is fitted on each. The
    teachers vote on the rows of ``X_public`` (public, unlabelled); the noisy argmax of
    each vote histogram labels that row; the ``student`` is fitted on the public rows
    and their noisy labels. Only the student is kept: it answers any number of queries
    at no further cost. The teachers are discarded after ``fit`` (they saw the private
    rows without noise: keeping them would break the guarantee).

    Parameters
    ----------
    estimator : classifier
        The teachers' model (cloned per teacher), e.g. scikit-learn's
        ``LogisticRegression()`` or ``HistGradientBoostingClassifier()``; it needs
        ``fit`` and ``predict``. Teachers whose ``random_state`` is None are seeded from
        ``random_state``.

    n_teachers : int, default=250
        Number of teachers. Each sees about ``n_samples / n_teachers`` rows: more
        teachers give larger vote margins against the same noise, but weaker teachers.
        A teacher with no row abstains (so do teachers whose fit fails); a teacher whose
        part holds one class votes it.

    student : classifier or None, default=None
        Fitted on the public rows and their noisy labels; None: a clone of
        ``estimator``. It learns the indices of ``classes_`` (predictions are mapped
        back).

    semi_supervised : bool, default=False
        Also use the public rows that carry no label (the rows not queried, and the
        queries Confident-GNMax left unanswered): the student is wrapped in
        scikit-learn's :class:`~sklearn.semi_supervised.SelfTrainingClassifier`
        (default settings) and fitted on every public row, unlabelled rows marked -1.
        Needs a student with ``predict_proba``; a student without it is fitted on the
        labelled rows only. Post-processing of the noisy labels and public rows: no
        privacy cost. False: the student sees the labelled rows only (on Adult,
        self-training did not improve the student; see the user guide).

    aggregator : {{"gnmax", "lnmax", "confident"}}, default="gnmax"
        ``"gnmax"``: argmax of the votes plus discrete Gaussian noise (Papernot et al.
        2018). ``"lnmax"``: plus discrete Laplace noise (2017; seed 002's ``Lap(2/γ)``),
        the choice for ``delta=0``. ``"confident"``: Confident-GNMax, a query is
        answered only if its largest count plus Gaussian noise of scale
        ``sigma_threshold`` reaches ``threshold``; unanswered rows are left out of the
        student's training set. With data-independent accounting every query is
        charged as answered, so this filters labels, it does not save budget.

    sigma : float or None, default=None
        Scale of the vote noise (σ of the discrete Gaussian, or b of the discrete
        Laplace ``P(k) ∝ exp(-|k|/b)``). None: the smallest that makes
        ``max_queries`` queries (ε, δ)-DP, calibrated before any data is read. When
        given, the cost is computed from it, and fit refuses (before reading the data)
        a cost above (``epsilon``, ``delta``).

    threshold : float or None, default=None
        Confident-GNMax's threshold on the noisy largest count; None:
        ``0.6 * n_teachers``.

    sigma_threshold : float or None, default=None
        Confident-GNMax's threshold noise σ₁; None: ``2 * sigma``.

    {epsilon}

    delta : float, default=1e-5
        Privacy parameter δ in [0, 1); must be > 0 for the Gaussian aggregators.

    max_queries : int, "auto" or None, default="auto"
        Number of public rows labelled (a random subset when ``X_public`` has more).
        ``"auto"``: a data-independent rule from (ε, δ), ``n_teachers``, the number of
        ``classes`` (2 if not given), the aggregator and the number of public rows — the
        number of queries that minimises a model of the student's error, trading more
        labels against noisier ones (module docstring and the user guide): every public
        row while labels are scarce and two classes, a few hundred accurate labels when
        many are affordable, few accurate labels with many classes and few teachers; at
        least 10 (with a warning when that floor binds). 343 queries for 250 teachers,
        2 classes and 8,140 public rows at ε = 1, δ = 1e-5. With a given ``sigma``:
        the most queries that noise affords within (ε, δ). None: every public row (the
        noise then grows as the square root of their number).

    {classes}

    n_jobs : int or None, default=None
        joblib workers fitting the teachers.

    {accountant}

    {random_state}

    Attributes
    ----------
    student_ : classifier
        The fitted student, on the indices of ``classes_``: a
        ``SelfTrainingClassifier`` around it with ``semi_supervised=True``, a
        ``DummyClassifier`` if the noisy labels hold one class.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    sigma_ : float
        The vote noise scale used.
    sigma_threshold_ : float or None
        Confident-GNMax's threshold noise σ₁ (else None).
    n_queries_ : int
        Public rows queried (the cost was charged for them); with
        ``max_queries="auto"``, the rule's choice.
    n_answered_ : int
        Queries answered (all but Confident-GNMax's rejected ones); a function of the
        noisy release.
    class_count_ : ndarray of shape (n_classes,)
        Number of answered queries labelled with each class (post-processing).
    {privacy_spent_}

    See Also
    --------
    SubsampleAggregate : any regressor, made private by a private aggregate of its fits on parts.

    Notes
    -----
    **Privacy.** (ε, δ)-DP under add/remove-one-row of ``X, y``, for public ``X_public``
    and ``classes``. Each private row draws its teacher independently and uniformly, so
    it is in exactly one teacher's part and can change that teacher's votes only: per
    query, two counts of the vote histogram by 1 (L1 sensitivity 2, L2 sensitivity √2),
    whatever ``estimator`` does (teachers that fail or have no rows abstain: one count
    by 1). The T × n_classes vote counts of the T = ``n_queries_`` queries get
    independent exact discrete Gaussian (or discrete Laplace) noise, floating-point
    safe; the cost is the composition of 2T scalar releases of sensitivity 1 (plus T
    threshold checks for Confident-GNMax), by the accountant's tightest method, and is
    data-independent: it depends on T, not on how much the teachers agree (the smaller
    data-dependent bounds of Papernot et al. depend on the data and are not offered).
    Released: the noisy argmax labels, hence the student, a post-processing of them and
    of the public rows (labelled or not: ``semi_supervised`` costs nothing). The number
    of queries is a function of public parameters and of the number of public rows.
    Teachers' warnings and failures are silenced: they would depend on the rows.
    Without ``X_public`` the private rows' features are the queries: only the labels
    are protected (label DP), with a :class:`~dpsk.exceptions.PrivacyLeakWarning`.
    Domain: finite ``X`` and ``X_public``, labels in ``classes`` (rows a teacher cannot
    fit make it abstain, inside the mechanism).
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    >>> from dpsk.ensemble import PATEClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> X_public = rng.normal(size=(200, 2))
    >>> clf = PATEClassifier(SkLogisticRegression(), n_teachers=200, epsilon=1.0, classes=[0, 1], random_state=0)
    >>> clf.fit(X, y, X_public=X_public).predict([[-2.0, 0.0], [2.0, 0.0]])
    array([0, 1])
    """

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "estimator": [HasMethods(["fit", "predict"])],
        "n_teachers": [Interval(Integral, 1, None, closed="left")],
        "student": [HasMethods(["fit", "predict"]), None],
        "semi_supervised": ["boolean"],
        "aggregator": [StrOptions(set(_AGGREGATORS))],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "threshold": [Interval(Real, None, None, closed="neither"), None],
        "sigma_threshold": [Interval(Real, 0, None, closed="neither"), None],
        "max_queries": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"}), None],
        "classes": ["array-like", None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator,
        *,
        n_teachers=250,
        student=None,
        semi_supervised=False,
        aggregator="gnmax",
        sigma=None,
        threshold=None,
        sigma_threshold=None,
        epsilon=1.0,
        delta=1e-5,
        max_queries="auto",
        classes=None,
        n_jobs=None,
        accountant=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_teachers = n_teachers
        self.student = student
        self.semi_supervised = semi_supervised
        self.aggregator = aggregator
        self.sigma = sigma
        self.threshold = threshold
        self.sigma_threshold = sigma_threshold
        self.epsilon = epsilon
        self.delta = delta
        self.max_queries = max_queries
        self.classes = classes
        self.n_jobs = n_jobs
        self.accountant = accountant
        self.random_state = random_state

    def _student(self):
        return self.estimator if self.student is None else self.student

    def _cost(self, n_queries):
        """Scales and event for ``n_queries`` queries; refuses given scales above the budget."""
        if math.isinf(self.epsilon) and self.sigma is None:
            # No noise scale corresponds to ε = ∞ by calibration; the non-private ceiling
            # of PATE is the estimator itself, fitted on all the private rows.
            raise ValueError(
                "PATEClassifier needs a finite epsilon (or an explicit sigma); for the non-private "
                "ceiling fit the estimator itself on the private rows"
            )
        scale, threshold_scale, event = pate_cost(
            self.aggregator,
            n_queries,
            epsilon=self.epsilon,
            delta=self.delta,
            sigma=self.sigma,
            sigma_threshold=self.sigma_threshold,
        )
        if self.sigma is not None and n_queries and get_epsilon(event, self.delta) > self.epsilon:
            raise ValueError(
                f"sigma={self.sigma} for {n_queries} queries costs more than epsilon={self.epsilon} at "
                f"delta={self.delta}; raise sigma, lower max_queries, or leave sigma=None"
            )
        return scale, threshold_scale, event

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, X_public=None):
        """Fit the teachers on disjoint parts of (X, y), label X_public by noisy vote, fit the student.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private rows.
        y : array-like of shape (n_samples,)
            Private labels.
        X_public : array-like of shape (n_public, n_features) or None, default=None
            Public unlabelled rows. None: X itself (label privacy only, with a
            :class:`~dpsk.exceptions.PrivacyLeakWarning`).

        Returns
        -------
        self : object
        """
        if X_public is None:
            warnings.warn(
                "X_public is None: the private rows' features are used as the public queries and are "
                "released through the student; only the labels are protected. Pass public unlabelled "
                "rows as X_public.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        # The budget first (nothing read); the detailed cost, a function of the number of
        # public rows (public), never exceeds it.
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        n_public = _n_rows(X if X_public is None else X_public)
        n_queries = self._n_queries(n_public)
        scale, threshold_scale, cost = self._cost(n_queries)
        X, y = validate_data(self, X, y)
        X_query_all = X if X_public is None else validate_data(self, X_public, reset=False)
        classes, y_index = resolve_classes(self, self.classes, y)
        rng = release_generator(self.random_state, context=self, data=(X, y, X_query_all))
        self._spend_privacy_budget(cost)

        query = np.sort(rng.choice(n_public, size=n_queries, replace=False)) if n_queries < n_public else None
        X_query = X_query_all if query is None else X_query_all[query]
        teachers = seed_estimators(self.estimator, int(self.n_teachers), rng)
        parts = random_parts(rng, int(self.n_teachers), X.shape[0], None).astype(np.intp)
        votes = np.zeros((n_queries, classes.size), dtype=np.int64)
        output = functools.partial(_teacher_votes, X_query=X_query, classes=classes)
        constant = functools.partial(_constant_votes, X_query=X_query, classes=classes)
        rows = np.arange(n_queries)
        for teacher_votes in fit_parts(teachers, X, classes[y_index], parts, output, self.n_jobs, constant=constant):
            if teacher_votes is not None:
                voting = teacher_votes >= 0
                np.add.at(votes, (rows[voting], teacher_votes[voting]), 1)
        del teachers  # the teachers saw the private rows without noise: never kept

        answered, labels = self._noisy_labels(votes, scale, threshold_scale, rng)
        note_release(cost)
        # The student: post-processing of the noisy labels and the public rows.
        public_labels = np.full(X_query_all.shape[0], -1, dtype=np.intp)
        public_labels[rows if query is None else query] = np.where(answered, labels, -1)
        self.student_ = self._fit_student(X_query_all, public_labels)
        self.classes_ = classes
        self.n_classes_ = classes.size
        self.sigma_ = scale
        self.sigma_threshold_ = threshold_scale
        self.n_queries_ = n_queries
        self.n_answered_ = int(np.count_nonzero(answered))
        self.class_count_ = np.bincount(labels[answered], minlength=classes.size).astype(np.float64)
        return self

    def _noisy_labels(self, votes, scale, threshold_scale, rng):
        """(answered mask, noisy argmax index) of every query: the one noisy release."""
        n_queries = votes.shape[0]
        if self.aggregator == "lnmax":
            num, den = exact_rational(Fraction(scale), MAX_T_NUM, MAX_T_DEN, rounding="up")
            noise = np.empty(votes.size, dtype=np.int64)
            discrete_laplace(noise, num, den, rng)
        else:
            num, den = round_up_sigma2(Fraction(scale) ** 2)
            noise = np.empty(votes.size, dtype=np.int64)
            discrete_gaussian(noise, num, den, rng)
        noisy = votes + noise.reshape(votes.shape)
        answered = np.ones(n_queries, dtype=bool)
        if self.aggregator == "confident":
            num, den = round_up_sigma2(Fraction(threshold_scale) ** 2)
            check = np.empty(n_queries, dtype=np.int64)
            discrete_gaussian(check, num, den, rng)
            threshold = THRESHOLD_FRACTION * self.n_teachers if self.threshold is None else self.threshold
            answered = votes.max(axis=1, initial=0) + check >= threshold
        return answered, np.argmax(noisy, axis=1) if n_queries else np.zeros(0, dtype=np.intp)

    def _n_queries(self, n_public):
        """Number of queries: public parameters and the number of public rows only."""
        if self.max_queries is None:
            return n_public
        if self.max_queries != "auto":
            return min(int(self.max_queries), n_public)
        if math.isinf(self.epsilon):
            return n_public  # refused by _cost unless sigma is given; then every row is free
        # The number of classes is public only when given; without it, assume two.
        n_classes = 2 if self.classes is None else max(_n_rows(self.classes), 2)
        n_queries, below_target = auto_queries(
            self.aggregator,
            int(self.n_teachers),
            int(n_classes),
            float(self.epsilon),
            float(self.delta),
            int(n_public),
            None if self.sigma is None else float(self.sigma),
            None if self.sigma_threshold is None else float(self.sigma_threshold),
        )
        if below_target:
            warnings.warn(
                f"max_queries='auto': even {n_queries} queries leave the labels too noisy for a student "
                f"with n_teachers={self.n_teachers} at epsilon={self.epsilon}. "
                "Use more teachers (more private rows) or a larger epsilon.",
                UserWarning,
                stacklevel=3,
            )
        return n_queries

    def _fit_student(self, X_public, labels):
        """The student on the public rows, ``labels`` the class index or -1 (post-processing of the release)."""
        labelled = labels >= 0
        present = np.unique(labels[labelled])
        if present.size < 2:
            label = present[0] if present.size else 0
            return DummyClassifier(strategy="constant", constant=label).fit(np.zeros((1, 1)), [label])
        student = clone(self._student())
        if self.semi_supervised and hasattr(student, "predict_proba") and not labelled.all():
            return SelfTrainingClassifier(student).fit(X_public, labels)
        return student.fit(X_public[labelled], labels[labelled])

    def predict(self, X):
        """The student's prediction for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if isinstance(self.student_, DummyClassifier):
            X = np.zeros((X.shape[0], 1))
        return self.classes_[np.asarray(self.student_.predict(X), dtype=np.intp)]

    @available_if(_student_has("predict_proba"))
    def predict_proba(self, X):
        """The student's class probabilities, in the columns of ``classes_`` (0 for classes it never saw).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if isinstance(self.student_, DummyClassifier):
            X = np.zeros((X.shape[0], 1))
        proba = self.student_.predict_proba(X)
        out = np.zeros((proba.shape[0], self.classes_.size), dtype=proba.dtype)  # float32 stays float32
        out[:, np.asarray(self.student_.classes_, dtype=np.intp)] = proba
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
