# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Offset neighbours and the rounding probe: audit the sensitivity of the *computed* statistic.

A sensitivity is a property of the value the code computes, not of the real-number
formula. ``Σc² − 2mΣc + m²n`` (centring after summing) is exact over the reals, but in
floating point its error is about ``n·m²·2⁻⁵³``: for values with a large common offset
``m`` inside a narrow public range, one added record can move the computed sum of
squares by hundreds of times its declared sensitivity. The default audit neighbours
(:func:`~dpsk.audit.worst_case_neighbours`: rows at the corners of small bounds around
the origin) can never show this, because their sums are exact.

Two tools close that gap:

* :func:`rounding_probe` fits an estimator on two neighbouring datasets with *identical
  noise* (a fresh ``numpy.random.PCG64`` with the same seed for each fit) and records,
  at the boundary of every value-perturbing mechanism of :mod:`dpsk.mechanisms`, the
  value handed to ``randomise`` (the noise-free statistic, in the units the mechanism's
  ``sensitivity`` is declared in). The largest ``‖value(D′) − value(D)‖ / sensitivity``
  over the releases (L1 or L2 as the mechanism declares) must be at most 1. It is
  deterministic and exact: a regression detector that needs no statistics.
* :func:`offset_neighbours` builds the dataset family that exposes rounding: values with
  a large common offset spread over a narrow public range (the estimator's own public
  bounds), and the added record placed, among candidate positions inside the range,
  where the probe measures the largest change. The pair is in the form
  :func:`~dpsk.audit.audit_estimator` takes, for the statistical audit.

Identical noise keeps the data-independent random choices (tree splits, initial centres)
the same in both fits. Multi-step releases (k-means iterations) need more: a later
statistic depends on earlier noisy values, and its sensitivity holds for the *same*
earlier values, so the second fit is replayed the first fit's outputs.
"""

import contextlib
import contextvars
import inspect
from dataclasses import dataclass

import numpy as np
from sklearn.base import is_classifier, is_regressor

from dpsk.audit._neighbours import canary_neighbours
from dpsk.audit._samplers import _detached_clone
from dpsk.mechanisms import DiscreteGaussian, Gaussian, UnsafeGaussian
from dpsk.mechanisms._base import DPMechanism

__all__ = ["RoundingProbe", "offset_neighbours", "rounding_probe"]

_L2_MECHANISMS = (Gaussian, UnsafeGaussian, DiscreteGaussian)

# The taps active in this context (one list per open `_tap_releases` block).
_TAPS = contextvars.ContextVar("dpsk_audit_release_taps", default=())


@contextlib.contextmanager
def _tap_releases(replay=None):
    """Record ``(mechanism, noise-free value, output)`` of every ``DPMechanism.randomise`` call.

    With ``replay`` (the records of a fit on the other neighbour), the i-th call returns
    the i-th recorded output instead of its own (its noise is still drawn, so that the
    stream stays aligned): every later step then sees the same released values, and
    each release's input is compared under the same past, as adaptive composition
    requires. The method is wrapped on the class for the duration of the block (a test
    tool: the probe runs its fits in the calling thread); other contexts pass through.
    """
    taps = []
    original = DPMechanism.randomise

    def randomise(mechanism, value):
        active = _TAPS.get()
        if not active:
            return original(mechanism, value)
        noise_free = np.array(value, dtype=np.float64, copy=True)
        out = original(mechanism, value)
        if replay is not None and len(taps) < len(replay) and np.shape(replay[len(taps)][2]) == np.shape(out):
            out = replay[len(taps)][2]
        for tap in active:
            tap.append((mechanism, noise_free, out))
        return out

    token = _TAPS.set((*_TAPS.get(), taps))
    DPMechanism.randomise = randomise
    try:
        yield taps
    finally:
        DPMechanism.randomise = original
        _TAPS.reset(token)


def _fit_tapped(estimator, data, seed, replay=None):
    """Fit a detached clone on ``data`` with a fresh PCG64(seed); the releases it made."""
    fitted = _detached_clone(estimator)
    # A fresh bit generator object per fit: the same noise on D and D′ whatever an
    # integer random_state means (it may be mixed with the data or a per-fit counter).
    fitted.set_params(random_state=np.random.PCG64(seed))
    # An empty context (no accountant or recorder of the caller is reached), with the tap
    # opened inside it.
    return contextvars.Context().run(_tapped_fit, fitted, data, replay)


def _tapped_fit(fitted, data, replay):
    with _tap_releases(replay) as taps:
        fitted.fit(**data)
    return taps


@dataclass(frozen=True)
class RoundingProbe:
    """Outcome of :func:`rounding_probe`.

    Attributes
    ----------
    ratio : float
        Largest ``‖value(D′) − value(D)‖ / sensitivity`` over the releases (0 when the
        fits made no value release; ``inf`` when the two fits made differently shaped
        releases, itself a data-dependent release structure).
    passed : bool
        ``ratio <= 1 + rtol``.
    releases : tuple of tuple
        One ``(mechanism name, norm, change, sensitivity)`` per paired release, in order.
    n_releases : tuple of int
        Value releases made by the fits on ``neighbours[0]`` and ``neighbours[1]``.
    rtol : float

    Notes
    -----
    **Privacy.** Describes the audit's own synthetic fits; nothing private.
    """

    ratio: float
    passed: bool
    releases: tuple
    n_releases: tuple
    rtol: float

    def __str__(self):
        worst = max(self.releases, key=lambda r: r[2] / r[3] if r[3] > 0 else np.inf, default=None)
        where = (
            ""
            if worst is None
            else f" (worst: {worst[0]}, L{worst[1]} change {worst[2]:.6g} vs sensitivity {worst[3]:.6g})"
        )
        return (
            f"rounding probe {'pass' if self.passed else 'fail'}: noise-free change "
            f"{self.ratio:.6g} x the declared sensitivity{where}, over {self.n_releases[0]} releases"
        )


def rounding_probe(estimator, neighbours, *, random_state=0, rtol=1e-9):
    """Compare the noise-free change of every release on two neighbours with its declared sensitivity.

    Fits ``estimator`` on each neighbour with identical noise (a fresh
    ``numpy.random.PCG64(random_state)`` object per fit) and records the value handed to
    each value-perturbing mechanism of :mod:`dpsk.mechanisms` (``DPMechanism.randomise``:
    Laplace, Gaussian and their discrete and unsafe variants, hence also the joint
    releases of the estimators). The i-th release of one fit is paired with the i-th of
    the other; the change of its value, in the mechanism's norm (L1, or L2 for the
    Gaussian mechanisms), divided by the mechanism's ``sensitivity``, must be at most 1.
    The fit on ``neighbours[1]`` is handed the outputs of the fit on ``neighbours[0]``
    (its own noise is drawn and discarded): for multi-step releases (k-means
    iterations) each release is then compared under the same earlier releases, as
    adaptive composition requires.

    Deterministic, exact up to ``rtol`` and fast (two fits): a regression detector for
    the sensitivity of the *computed* statistic, complementing the statistical audit.
    Releases through other mechanisms (the exponential mechanism, randomized response,
    objective perturbation) are not seen: the probe then reports no release, and only
    the statistical audit applies.

    Parameters
    ----------
    estimator : estimator
        Unfitted, with a ``random_state`` parameter (a dpsk statistic can be wrapped with
        :func:`~dpsk.audit.statistic_estimator`). Cloned; fitted with no accountant.
    neighbours : tuple (dict, dict)
        ``fit`` arguments of the two datasets, e.g. from :func:`offset_neighbours`.
    random_state : int, default=0
        Seed of the common noise.
    rtol : float, default=1e-9
        Relative tolerance on the ratio (the honest worst case is exactly 1).

    Returns
    -------
    result : RoundingProbe

    Notes
    -----
    **Privacy.** Fits the estimator twice with the same noise and compares the
    noise-free statistics: it reveals the data completely, by design. Synthetic data only.
    ``DPMechanism.randomise`` is wrapped while the fits run (in the calling thread).

    Examples
    --------
    >>> from dpsk.audit import offset_neighbours, rounding_probe
    >>> from dpsk.preprocessing import MinMaxScaler
    >>> scaler = MinMaxScaler(epsilon=1.0, bounds=(1.7e9, 1.7e9 + 3600))
    >>> rounding_probe(scaler, offset_neighbours(scaler, n_samples=200)).passed
    True
    """
    if "random_state" not in estimator.get_params():
        raise ValueError(f"{type(estimator).__name__} has no random_state parameter to share the noise with")
    first = _fit_tapped(estimator, neighbours[0], random_state)
    taps = [first, _fit_tapped(estimator, neighbours[1], random_state, replay=first)]
    n_releases = (len(taps[0]), len(taps[1]))
    if n_releases[0] != n_releases[1]:
        return RoundingProbe(np.inf, False, (), n_releases, rtol)
    releases = []
    ratio = 0.0
    for (mech_a, value_a, _), (mech_b, value_b, _) in zip(*taps):
        if value_a.shape != value_b.shape or type(mech_a) is not type(mech_b):
            return RoundingProbe(np.inf, False, tuple(releases), n_releases, rtol)
        norm = 2 if isinstance(mech_a, _L2_MECHANISMS) else 1
        change = float(np.linalg.norm(np.ravel(value_b - value_a), ord=norm))
        sensitivity = float(mech_a.sensitivity)
        releases.append((type(mech_a).__name__, norm, change, sensitivity))
        if change > 0:
            ratio = max(ratio, change / sensitivity if sensitivity > 0 else np.inf)
    return RoundingProbe(float(ratio), bool(ratio <= 1.0 + rtol), tuple(releases), n_releases, rtol)


def _golden_fractions(n, start=0):
    """``n`` deterministic, well-spread fractions in [0, 1) (the golden-ratio sequence).

    Not symmetric about the middle, and with full mantissas once scaled: sums of such
    values round, which is what the family is for.
    """
    return np.modf((np.arange(start, start + n) + 1) * 0.6180339887498949)[0]


def _offset_range(estimator, n_features, narrow):
    """(lower, upper) per feature: the estimator's public bounds, or a thin shell of its data_norm ball."""
    params = estimator.get_params()
    bounds = params.get("bounds_X", params.get("bounds"))
    if bounds is not None:
        lower = np.broadcast_to(np.asarray(bounds[0], dtype=np.float64), (n_features,)).copy()
        upper = np.broadcast_to(np.asarray(bounds[1], dtype=np.float64), (n_features,)).copy()
        return lower, upper, None
    if params.get("data_norm") is not None:
        # Rows along the first axis, of norm in [(1 − narrow)·R, R]: a large common
        # offset (the radius) with a narrow spread, inside the ball (never clipped).
        radius = float(params["data_norm"])
        lower = np.zeros(n_features)
        upper = np.zeros(n_features)
        lower[0], upper[0] = radius * (1.0 - narrow), radius
        return lower, upper, radius
    raise ValueError(
        f"{type(estimator).__name__} has no public bounds, bounds_X or data_norm set; the offset "
        "family places its values inside them (set e.g. bounds=(1.7e9, 1.7e9 + 3600))"
    )


def _point(lower, upper, fraction, radius):
    row = lower + (upper - lower) * fraction
    row = np.clip(row, lower, upper)  # lower + width·1 may round above upper
    if radius is not None:
        while np.linalg.norm(row) > radius:
            row = np.nextafter(row, 0.0)
    return row


def offset_neighbours(
    estimator,
    *,
    n_samples=1000,
    n_features=1,
    dtype=np.float64,
    candidates=33,
    rows_per_user=5,
    narrow=1e-4,
    placements=("first", "last"),
    random_state=0,
    return_probe=False,
):
    """Neighbours with a large common offset in a narrow range, the record placed where rounding is worst.

    The base dataset has ``n_samples`` rows spread over the estimator's public range
    (``bounds``/``bounds_X``, e.g. ``(1.7e9, 1.7e9 + 3600)``: UNIX timestamps in one
    hour; for a ``data_norm`` estimator, rows along the first axis with norms in
    ``[(1 − narrow) R, R]``). The added record is one of ``candidates`` evenly spaced
    positions inside the range (every feature at the same fraction of its range), the
    one where :func:`rounding_probe` measures the largest noise-free change relative to
    the declared sensitivity (fits with identical noise on D and D′). Nothing is clipped:
    a correct estimator's changes stay within its sensitivity at every candidate, one
    whose computed statistic rounds (e.g. centring after summing) moves by far more.

    Classifiers get labels alternating over their public ``classes`` and the record in
    the last class; regressors targets spread over ``bounds_y`` and the record at its
    top; estimators whose ``fit`` takes ``groups`` get users of ``rows_per_user`` rows
    and a new user with as many rows at the chosen position.

    Parameters
    ----------
    estimator : estimator
        Unfitted, with its public range set (see above) and a ``random_state`` parameter.
    n_samples : int, default=1000
        Rows of the base dataset. Rounding grows with n (about ``n·m²·2⁻⁵³`` for a sum
        of squares centred on m afterwards): use enough rows for the offset.
    n_features : int, default=1
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        dtype of ``X`` (float32 rounds the values themselves to the float32 grid).
    candidates : int, default=33
        Positions tried for the record: fractions ``0, 1/(candidates−1), ..., 1`` of the range.
    rows_per_user : int, default=5
    narrow : float, default=1e-4
        Relative thickness of the shell for ``data_norm`` estimators.
    placements : tuple of {"first", "last"}, default=("first", "last")
        Where the record is tried in D′: first (a left-to-right sum then differs in every
        partial sum) or last. ``("last",)`` for estimators that draw a random value per
        row in order (a forest's partition of the rows): only then do the other rows
        keep their draws on D′, which the probe's identical noise needs.
    random_state : int, default=0
        Seed of the common noise of the probe fits.
    return_probe : bool, default=False
        Also return the :class:`RoundingProbe` of the chosen pair.

    Returns
    -------
    without, with_record : dict
        ``fit`` keyword arguments, as for :func:`~dpsk.audit.audit_estimator`.
    probe : RoundingProbe
        Only with ``return_probe=True``.

    Notes
    -----
    **Privacy.** Builds synthetic datasets from the estimator's public parameters and
    fits it ``2 × candidates`` times with no accountant; reads no personal data.

    Examples
    --------
    >>> from dpsk.audit import offset_neighbours
    >>> from dpsk.preprocessing import MinMaxScaler
    >>> scaler = MinMaxScaler(epsilon=1.0, bounds=(1.7e9, 1.7e9 + 3600))
    >>> without, with_record = offset_neighbours(scaler, n_samples=200, candidates=5)
    >>> with_record["X"].shape
    (201, 1)
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if int(candidates) < 1:
        raise ValueError("candidates must be >= 1")
    placements = tuple(placements)
    if not placements or not set(placements) <= {"first", "last"}:
        raise ValueError(f"placements must be a non-empty tuple of 'first' and 'last', got {placements!r}")
    lower, upper, radius = _offset_range(estimator, n_features, narrow)
    n_samples = int(n_samples)
    fractions = _golden_fractions(n_samples)
    X = np.array([_point(lower, upper, f, radius) for f in fractions]).astype(dtype)
    y = None
    record_y = None
    params = estimator.get_params()
    if is_classifier(estimator):
        if params.get("classes") is None:
            raise ValueError("set the public `classes` of the classifier under audit")
        classes = np.asarray(params["classes"])
        y = classes[np.arange(n_samples) % classes.size]
        record_y = classes[-1]
    elif is_regressor(estimator) and params.get("bounds_y") is not None:
        low_y, high_y = (float(b) for b in params["bounds_y"])
        y = low_y + (high_y - low_y) * _golden_fractions(n_samples, start=n_samples)
        record_y = high_y
    groups = None
    n_record = 1
    if "groups" in inspect.signature(estimator.fit).parameters:
        groups = np.arange(n_samples) // int(rows_per_user)
        n_record = int(rows_per_user)
    positions = np.linspace(0.0, 1.0, int(candidates)) if int(candidates) > 1 else np.array([1.0])

    best = None
    for fraction in positions:
        record = np.tile(_point(lower, upper, fraction, radius).astype(dtype), (n_record, 1))
        appended = canary_neighbours(X, y, canary_X=record, canary_y=record_y, groups=groups)
        # canary_neighbours works in float64; keep the family's dtype (float32 rounds differently).
        for data in appended:
            data["X"] = data["X"].astype(dtype)
        for placement in placements:
            pair = appended
            if placement == "first":
                # The record first: a left-to-right sum then differs in every partial sum,
                # not only in its last addition.
                order = np.roll(np.arange(n_samples + n_record), n_record)
                pair = (appended[0], {key: value[order] for key, value in appended[1].items()})
            probe = rounding_probe(estimator, pair, random_state=random_state)
            # Ties (every candidate moves the count by exactly its sensitivity) are broken
            # by the total of the releases' ratios: the most rounding overall.
            score = (probe.ratio, sum(change / sens for _, _, change, sens in probe.releases if sens > 0))
            if best is None or score > best[2]:
                best = (pair, probe, score)
    pair, probe, _ = best
    return (*pair, probe) if return_probe else pair
