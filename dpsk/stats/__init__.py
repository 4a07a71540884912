# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private statistics, item level and user level.

====================================================  ============================================================
function(s)                                           what
====================================================  ============================================================
:func:`count`                                         number of values (records, or capped users)
:func:`sum`, :func:`mean`                             sums and means of clipped values
:func:`var`, :func:`std`                              variance and standard deviation
:func:`quantile`, :func:`percentile`, :func:`median`  quantiles (exponential mechanism over a public grid of bins)
:func:`histogram`, :func:`histogramdd`                counts over public bins
:func:`subsample_aggregate`                           any statistic: private mean or median of its values on parts
:func:`bounds`                                        per-column bounds or a row-norm bound, for estimators' sensitivity
====================================================  ============================================================

Each function takes ``epsilon`` (and ``delta`` where Gaussian noise helps), public
``bounds``, ``axis`` (always including axis 0: records, the privacy unit, lie along the
first axis), an ``accountant`` and a ``random_state``. With ``groups=`` (a user id per
record) the privacy unit is the user, whatever their number of records: rows are
weighted as in Epasto et al., "Smoothly Bounding User Contributions in Differential
Privacy" (NeurIPS 2020). With ``return_error=True`` a :class:`DPResult` tells how much
noise was added (standard deviation, guaranteed confidence interval) and what it cost.

Privacy units and relations: by default neighbouring datasets differ by one record
(``a[i]``, added or removed); with ``groups``, by all records of one user (added or
removed: the users' row counts stay private, and the weighting threshold is chosen with
10% of ε unless given); with ``groups`` and ``public_user_counts=True``, by the values of
one user's records (the users and their row counts declared public, as in the paper).

Building blocks for estimators (they follow their own fit protocol and accountant):
``dpsk.stats._moments.MomentsQuery`` (count / sum / mean / var from one fused pass) and
``dpsk.stats._quantile.QuantileQuery``: ``query.event`` is the cost, known before the
data is read; ``query.release(X, lower, upper)`` makes the releases.
"""

from dpsk.stats._bounds import bounds
from dpsk.stats._histogram import histogram, histogramdd
from dpsk.stats._moments import count, mean, std, sum, var
from dpsk.stats._quantile import median, percentile, quantile
from dpsk.stats._result import DPResult
from dpsk.stats._subsample import subsample_aggregate

__all__ = [
    "DPResult",
    "bounds",
    "count",
    "histogram",
    "histogramdd",
    "mean",
    "median",
    "percentile",
    "quantile",
    "std",
    "subsample_aggregate",
    "sum",
    "var",
]
