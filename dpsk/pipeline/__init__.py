# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pipelines whose whole privacy budget is checked before any step reads the data.

* :class:`Pipeline` — scikit-learn's :class:`~sklearn.pipeline.Pipeline` (a subclass),
  whose ``fit``, ``fit_transform`` and ``fit_predict`` first check the composed cost of
  all its DP steps with :func:`dpsk.accounting.check_budget`.
* :func:`make_pipeline` — the same, with steps named after their classes.

Swap one import (``from dpsk.pipeline import make_pipeline``) and a pipeline that the
budget cannot afford is refused before its first step spends anything.
"""

from dpsk.pipeline._pipeline import Pipeline, make_pipeline

__all__ = ["Pipeline", "make_pipeline"]
