# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy audits of the weighted paths (``sample_weight``), and a broken variant.

A weight above 1 counts as 1 (``_check_sample_weight_dp``): a bootstrap count k must cost
ε, not kε. Each audit is an existing audit of the same estimator (``ESTIMATOR_AUDITS`` or
``SPARSE_AUDITS``: same estimator, neighbours, projection and number of fits) with
``sample_weight`` passed: weight 1 for every row of the dataset, and
:data:`CANARY_WEIGHT` (a bootstrap count) for the canary. Correctly clipped, the canary
counts once and the audit sees the loss of the unweighted audit, through the weighted
kernels.

Broken variant (declares the correct cost, as in ``family.py``): :func:`weights_unclipped`
makes a row of weight w count ⌈w⌉ times (the row repeated, each copy of weight at most 1),
which is what a weight that is not clipped to [0, 1] does to a bootstrap count.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["CANARY_WEIGHT", "weighted_audit", "weights_unclipped", "with_weights"]

#: The canary's weight: a row drawn four times by a bootstrap.
CANARY_WEIGHT = 4.0


def with_weights(neighbours):
    """``neighbours(estimator)`` with ``sample_weight``: 1 per row, :data:`CANARY_WEIGHT` for the canary."""

    def make(estimator=None):
        without, with_canary = neighbours(estimator)
        n = without["X"].shape[0]
        extra = with_canary["X"].shape[0] - n
        return (
            {**without, "sample_weight": np.ones(n)},
            {**with_canary, "sample_weight": np.concatenate([np.ones(n), np.full(extra, CANARY_WEIGHT)])},
        )

    return make


def weighted_audit(audit, cls=None):
    """The EstimatorAudit ``audit`` with weighted neighbours; ``cls`` replaces the estimator's class."""
    from dpsk.utils._testing.registry import EstimatorAudit

    estimator = audit.estimator if cls is None else cls(**audit.estimator.get_params(deep=False))
    return EstimatorAudit(
        estimator, audit.projection, with_weights(audit.neighbours), audit.n_samples, audit.audit_params
    )


def weights_unclipped(cls):
    """Subclass of ``cls`` whose fit counts a row of weight w ⌈w⌉ times (weights not clipped)."""

    def fit(self, X, y=None, sample_weight=None, **params):
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            rows = np.repeat(np.arange(w.size), np.ceil(w).astype(np.intp))
            X = X[rows] if sp.issparse(X) else np.asarray(X)[rows]
            y = None if y is None else np.asarray(y)[rows]
            sample_weight = np.minimum(w[rows], 1.0)
        if y is None:
            return cls.fit(self, X, sample_weight=sample_weight, **params)
        return cls.fit(self, X, y, sample_weight=sample_weight, **params)

    name = f"{cls.__name__}WeightsUnclipped"
    return type(name, (cls,), {"fit": fit, "__module__": __name__, "__qualname__": name})
