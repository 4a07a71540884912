# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit clones of any estimator on disjoint random parts of the rows (PATE, subsample-and-aggregate).

Each row draws its part independently and uniformly (``dpsk.utils._units.random_parts``):
adding or removing a row changes one part and leaves every other row where it was, so
whatever a part's model computes, one row changes the output of one part only. The
private aggregate of the parts' outputs (a noisy vote, a private median or mean) then
needs the sensitivity of one part's output, whatever the estimator does (parallel
composition; Nissim, Raskhodnikova & Smith 2007).

A part's computation must not reveal anything but its output: a part that is empty,
whose fit raises, or whose output is unusable gives ``None`` (the caller substitutes a
data-independent value), and the parts' warnings are silenced, since an exception or a
warning that depends on the rows would be a release outside the noise.
"""

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone

from dpsk.stats._subsample import run_quietly

__all__ = ["fit_parts", "part_rows", "seed_estimators"]


def _fit_output(estimator, X, y, output, constant):
    if constant is not None and y is not None and np.all(y == y[0]):
        return constant(y[0])
    return output(estimator.fit(X) if y is None else estimator.fit(X, y))


def _run_part(estimator, X, y, output, constant):
    """``output(fitted clone)`` of one part, or None if the part cannot give one."""
    if X.shape[0] == 0:
        return None
    return run_quietly(_fit_output, estimator, X, y, output, constant)


def part_rows(parts, n_parts):
    """The row indices of each part, in row order: disjoint, as parallel composition needs."""
    order = np.argsort(parts, kind="stable")
    bounds = np.searchsorted(parts[order], np.arange(n_parts + 1))
    return [order[bounds[k] : bounds[k + 1]] for k in range(n_parts)]


def seed_estimators(estimator, n_parts, rng):
    """``n_parts`` clones of ``estimator``; those with ``random_state=None`` get a seed from ``rng``.

    The seeds come from the release's generator (never numpy's global state), so fits
    with an integer ``random_state`` are reproducible; they do not depend on the data.
    """
    seeds = rng.integers(0, 2**31 - 1, size=n_parts)
    clones = []
    for seed in seeds:
        part = clone(estimator)
        params = part.get_params(deep=False)
        if "random_state" in params and params["random_state"] is None:
            part.set_params(random_state=int(seed))
        clones.append(part)
    return clones


def fit_parts(estimators, X, y, parts, output, n_jobs=None, *, constant=None):
    """``[output(estimator_k fitted on the rows of part k)]`` for every part k (None where it fails).

    Parameters
    ----------
    estimators : list of estimators
        One unfitted clone per part (see :func:`seed_estimators`).
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
    parts : ndarray of shape (n_samples,), dtype intp
        Part of each row, in ``[0, len(estimators))``.
    output : callable ``output(fitted) -> object``
        What a part contributes (its votes, its coefficients...). Must be picklable for
        process-based ``n_jobs``. The fitted models are not kept.
    n_jobs : int or None, default=None
        joblib workers.
    constant : callable ``constant(label) -> object`` or None, default=None
        What a part whose labels are all equal contributes, without a fit (classifiers
        refuse one class).

    Returns
    -------
    outputs : list
    """
    index = part_rows(parts, len(estimators))
    return Parallel(n_jobs=n_jobs)(
        delayed(_run_part)(estimator, X[rows], None if y is None else y[rows], output, constant)
        for estimator, rows in zip(estimators, index)
    )
