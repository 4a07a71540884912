# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private feature selection: the top features by a score of proven sensitivity.

:class:`SelectKBest` and :class:`SelectPercentile` mirror scikit-learn's selectors: exact
integer scores of sensitivity 2 (``"class_deviation"``), and the top k chosen by k
rounds of the exponential mechanism (the law of one-shot Gumbel top-k) or of
permute-and-flip, ε/k each.
"""

from dpsk.feature_selection._univariate import SelectKBest, SelectPercentile

__all__ = ["SelectKBest", "SelectPercentile"]
