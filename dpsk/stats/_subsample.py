# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Subsample-and-aggregate (Nissim, Raskhodnikova & Smith 2007; seed 004): any statistic, made private.

The rows are split at random into ``n_parts`` disjoint parts (each row draws its part
independently, ``dpsk.utils._units.random_parts``); the user's function runs on each part
and returns a vector inside a public box; a private aggregate of the ``n_parts`` vectors
is released. Adding or removing a row changes one part, hence *replaces* one of the
``n_parts`` vectors by another vector of the box (``n_parts`` is public), whatever the
function computes. Parts that are empty, whose function raises, or whose output has the
wrong shape or is not finite contribute the box's centre (a data-independent value).

Aggregates
==========

* ``"mean"`` (default): the winsorised mean. Each vector is clipped to the box and
  standardised to z ∈ [−1, 1]^d (:class:`~dpsk.mechanisms._joint.Box`, exact fixed-point
  sums); replacing one vector moves Σz by at most 2 per coordinate (L1 2d, L2 2√d). One
  joint release (:class:`~dpsk.mechanisms._joint.JointRelease`): lattice Laplace noise
  (δ = 0) or lattice Gaussian noise (δ > 0, zCDP), then the mean Σz / n_parts mapped back
  to the box.
* ``"median"``: the median of each coordinate by the exact quantile mechanism
  (:class:`~dpsk.stats._quantile.QuantileQuery`, the exponential mechanism over a public
  grid of the box; the score moves by at most 1 when one vector is replaced), ε split
  equally over the d coordinates. Robust to parts far from the others, but the d
  selections compose linearly in d, while the Gaussian mean's noise grows as √d: the
  mean is the default for vectors (coefficients).
"""

import math
import warnings

import numpy as np

from dpsk.mechanisms._joint import Box, JointRelease
from dpsk.stats._protocol import StatCall
from dpsk.stats._quantile import QuantileQuery
from dpsk.utils._units import random_parts
from dpsk.utils.validation import check_bounds

__all__ = ["SubsampleQuery", "run_quietly", "subsample_aggregate"]

_AGGREGATES = ("mean", "median")


class SubsampleQuery:
    """The release of a private aggregate of ``n_parts`` vectors of ``n_outputs`` entries (public parameters).

    Parameters
    ----------
    n_parts, n_outputs : int
    aggregate : {"mean", "median"}
    epsilon, delta : float
    bins : int or None
        Grid of the median (see :func:`dpsk.stats.quantile`).
    rng : numpy.random.Generator

    Attributes
    ----------
    event : PrivacyEvent
        The cost of :meth:`release` (known before any data is read).
    """

    def __init__(self, n_parts, n_outputs, *, aggregate, epsilon, delta, bins, rng):
        if aggregate not in _AGGREGATES:
            raise ValueError(f"aggregate must be one of {_AGGREGATES}, got {aggregate!r}")
        self.n_parts, self.n_outputs, self.aggregate = int(n_parts), int(n_outputs), aggregate
        if aggregate == "median":
            self.query = QuantileQuery(np.array([0.5]), epsilon=epsilon, n_outputs=n_outputs, bins=bins, rng=rng)
            self.event = self.query.event
        else:
            d = self.n_outputs
            # Replacing one vector moves each standardised sum by at most 2.
            self.release_ = JointRelease(
                [(2.0 * d, 2.0 * math.sqrt(d))], [1.0], epsilon=epsilon, delta=delta, random_state=rng
            )
            self.event = self.release_.privacy_event([d])

    def release(self, outputs, lower, upper):
        """The aggregate of ``outputs`` (shape (n_parts, n_outputs); NaN rows: failed parts)."""
        outputs = np.array(outputs, dtype=np.float64)
        box = Box(lower, upper)
        failed = ~np.all(np.isfinite(outputs), axis=1)
        outputs[failed] = box.centre
        if self.aggregate == "median":
            return self.query.release(outputs, box.lower, box.upper)[0]
        # The sensitivity counts every coordinate, constant ones included: keep n_active = d.
        _, sum_z, _ = box.standardised_sums(box.exact_sums(outputs), squares=False)
        noisy = self.release_.randomise([sum_z[0]])[0]
        return box.to_original(noisy / self.n_parts)


def part_outputs(results, n_outputs):
    """The parts' outputs as an (n_parts, n_outputs) array, NaN rows for unusable ones."""
    out = np.full((len(results), n_outputs), np.nan)
    for k, value in enumerate(results):
        if value is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = np.asarray(value, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                continue
        if value.shape == (n_outputs,) and np.all(np.isfinite(value)):
            out[k] = value
    return out


def run_quietly(func, *args):
    """``func(*args)`` with warnings silenced, or None if it raises.

    A part's computation (a user's function or model) must reveal nothing but its output:
    an exception or a warning that depends on the rows would be a release outside the noise.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return func(*args)
        except Exception:  # noqa: BLE001 -- any failure of user code: the part gives nothing
            return None


def subsample_aggregate(
    func,
    X,
    *,
    bounds,
    n_parts=100,
    aggregate="mean",
    epsilon=1.0,
    delta=0.0,
    bins=None,
    accountant=None,
    random_state=None,
):
    """Release ``func`` of the rows of X privately, whatever ``func`` computes (subsample-and-aggregate).

    The rows of X (first axis) are split at random into ``n_parts`` disjoint parts;
    ``func`` runs on each part (the rows of that part, in order) and returns a value of
    the shape of ``bounds``; the private mean (winsorised) or median of the parts' values
    is released.

    Parameters
    ----------
    func : callable ``func(X_part) -> float or array-like``
        Any statistic of a subset of rows: a model's coefficients, a trimmed mean...
        Its value must have the shape of ``bounds``; values outside the box are
        clipped (mean) or ranked at its edge (median). A part whose call raises or
        returns a wrong shape, NaN or inf contributes the box's centre.
    X : array-like of shape (n_samples, ...)
        The records, one per row.
    bounds : tuple (lower, upper)
        The public box of ``func``'s value: scalars (a scalar value) or arrays of the
        value's shape.
    n_parts : int, default=100
        Number of parts. Each has about ``n_samples / n_parts`` rows; more parts give
        less noise but noisier parts.
    aggregate : {"mean", "median"}, default="mean"
        The winsorised mean (one joint Laplace or Gaussian release) or the median of
        each entry (exponential mechanism, ε split over the entries).
    epsilon : float, default=1.0
    delta : float, default=0.0
        > 0 with ``"mean"``: Gaussian noise (zCDP), better for vectors. Not used by
        ``"median"``.
    bins : int or None, default=None
        The median's grid of each entry's range (see :func:`dpsk.stats.quantile`).
    accountant : BudgetAccountant or None, default=None
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    value : float or ndarray
        The shape of ``bounds``' entries.

    Notes
    -----
    **Privacy.** (ε, δ)-DP (ε-DP with δ = 0 or ``"median"``) under add/remove-one-row of
    X, for public ``bounds`` and ``n_parts``. Each row draws its part independently and
    uniformly, so one row changes one part's value: one of ``n_parts`` vectors of the
    box is replaced (parallel composition; Nissim, Raskhodnikova & Smith 2007). The mean
    of the clipped values then moves by at most the box width / ``n_parts`` per entry,
    released with lattice Laplace or Gaussian noise on exact sums (floating-point safe);
    the median's scores move by at most 1 (exact exponential mechanism, one per entry
    with ε / entries). ``func`` is not trusted: its failures and warnings are silenced,
    as they would depend on the rows. Released: the aggregate only.
    Domain: any rows; ``func``'s failures and non-finite outputs are handled inside the
    mechanism (the part contributes the box's centre), so no data raise an error
    (:ref:`declared_domain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import stats
    >>> x = np.random.default_rng(0).normal(size=(20000, 1))
    >>> m = stats.subsample_aggregate(np.median, x, bounds=(-1.0, 1.0), epsilon=1.0, random_state=0)
    >>> bool(abs(m) < 0.05)
    True
    """
    if not (isinstance(n_parts, (int, np.integer)) and not isinstance(n_parts, bool) and n_parts >= 1):
        raise ValueError(f"n_parts must be an integer >= 1, got {n_parts!r}")
    if not callable(func):
        raise TypeError("func must be callable")
    if not (isinstance(bounds, tuple) and len(bounds) == 2):
        raise ValueError("bounds must be a tuple (lower, upper) of the public box of func's value")
    shape = np.broadcast_shapes(np.shape(bounds[0]), np.shape(bounds[1]))
    n_outputs = int(np.prod(shape, dtype=np.int64))
    lower, upper = check_bounds(
        (np.broadcast_to(bounds[0], shape).reshape(-1), np.broadcast_to(bounds[1], shape).reshape(-1)), n_outputs
    )
    call = StatCall(epsilon, delta, None, "smooth", None, False, accountant, random_state)
    query = SubsampleQuery(
        n_parts, n_outputs, aggregate=aggregate, epsilon=call.epsilon, delta=call.delta, bins=bins, rng=call.rng
    )
    call.check(query.event)
    X = np.asarray(X)
    if X.ndim == 0:
        raise ValueError("X must have at least one dimension (the records)")
    call.spend(
        X.shape[0],
        function="dpsk.stats.subsample_aggregate",
        params=(getattr(func, "__qualname__", repr(func)), bounds, n_parts, aggregate, bins),
        data=(X,),
    )
    parts = random_parts(call.rng, int(n_parts), X.shape[0], None)
    results = [run_quietly(func, X[parts == k]) if np.any(parts == k) else None for k in range(int(n_parts))]
    value = query.release(part_outputs(results, n_outputs), lower, upper)
    value = np.asarray(value, dtype=np.float64).reshape(shape)
    return value[()] if value.ndim == 0 else value
