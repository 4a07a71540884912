# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""``partial_fit`` of the sufficient-statistics estimators: one release per call.

The naive Bayes classifiers and the scalers are post-processing of noisy sums. Their
``partial_fit`` releases the sums of its batch (one spend, checked before the batch is
read) and adds the noisy sums to those of the earlier calls; the model is recomputed from
the accumulated noisy sums, so it is post-processing of the released values.

What is fixed at the first call (public): the classes, the bounds (or ``data_norm``,
``n_categories``), the number of features. Later calls reuse them and never derive them
from their own batch.

Accounting: sequential composition. Every call is its own event on the accountant, so
k calls at ε cost what k releases at ε cost (kε under basic composition, less under the
accountant's tighter composition for Gaussian noise). Parallel composition (cost ε for
any number of *disjoint* batches) is not offered: the accountant's ledger is
append-only and expresses parallel composition only as one :class:`ParallelEvent`
recorded at once, so a stream of separate calls cannot be recorded as parallel without
charging nothing for later calls, which would be wrong whenever the batches overlap or
the accountant changes between calls. Users with disjoint batches who want parallel
composition fit each batch with its own estimator in one
:class:`~dpsk.accounting.ParallelEvent` of their own, or call ``fit`` once on all rows.
"""

import numpy as np

__all__ = ["PARTIAL_FIT_NOTE", "PartialFitMixin", "partial_fit_classes"]

#: The accounting paragraph of every ``partial_fit`` docstring.
PARTIAL_FIT_NOTE = """Each call is one release of its batch, with its own spend of ``epsilon`` (and
    ``delta`` where the estimator has one), checked against the budget before the batch is
    read; the calls compose sequentially on the accountant (k calls cost k releases; there
    is no parallel composition over disjoint batches). The fitted attributes are
    recomputed from the sum of the noisy statistics of all calls (post-processing). What
    the first call fixes stays fixed and public: the classes, the bounds (or
    ``data_norm``, ``n_categories``) and the number of features; ``fit`` starts over."""


def partial_fit_classes(estimator, classes):
    """The public classes of a ``partial_fit`` call.

    First call: ``classes`` (the argument) or the estimator's ``classes`` parameter,
    required as in scikit-learn (never derived from the batch); both given must agree.
    Later calls: the fitted ``classes_``; an argument that differs raises.
    """
    if estimator._partial_fit_started():
        if classes is not None and not np.array_equal(np.unique(classes), estimator.classes_):
            raise ValueError(f"classes={classes!r} is not the same as on the first call to partial_fit")
        return estimator.classes_
    param = getattr(estimator, "classes", None)
    if classes is None and param is None:
        raise ValueError(
            "classes must be passed on the first call to partial_fit (the public list of all labels), "
            "as the `classes` argument or the `classes` parameter"
        )
    if classes is not None and param is not None and not np.array_equal(np.unique(classes), np.unique(param)):
        raise ValueError("the classes passed to partial_fit differ from the `classes` parameter")
    return classes if classes is not None else param


class PartialFitMixin:
    """Accumulated noisy statistics for ``partial_fit`` (private ``_noisy_sums`` state).

    ``fit`` calls ``_reset_partial_fit()`` first; each release then passes its noisy
    arrays (and scalars such as noise variances) to ``_accumulate``, which returns the
    sums of each over all releases since the last reset.
    """

    def _partial_fit_started(self):
        return getattr(self, "_noisy_sums", None) is not None

    def _reset_partial_fit(self):
        self._noisy_sums = None
        self._scalar_sums = None
        self._n_releases = 0

    def _accumulate(self, noisy, scalars=()):
        """Add this release's noisy arrays (and scalars, e.g. noise variances) to the running sums."""
        noisy = [np.asarray(a, dtype=np.float64) for a in noisy]
        scalars = [float(v) for v in scalars]
        if not self._partial_fit_started():
            self._noisy_sums, self._scalar_sums, self._n_releases = noisy, scalars, 1
        else:
            self._noisy_sums = [a + b for a, b in zip(self._noisy_sums, noisy)]
            self._scalar_sums = [a + b for a, b in zip(self._scalar_sums, scalars)]
            self._n_releases += 1
        return self._noisy_sums, self._scalar_sums

    def _release_tag(self):
        """Extra digest input of a later ``partial_fit`` release (its index), so that two calls
        on the same batch with an integer seed draw independent noise; ``()`` for the first."""
        return (np.asarray([self._n_releases]),) if self._partial_fit_started() else ()
