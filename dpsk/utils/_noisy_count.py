# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""A noisy row count released inside an estimator's one event.

Some data-independent plans depend on the number of rows n (DP-SGD's sampling rate
without ``n_samples``, boosting's ``max_iter="auto"``, the random tree regressors'
default depth). Under add/remove
neighbours n is private, so a fit that needs it releases it first: the geometric
mechanism with ``COUNT_SHARE`` of the fit's ε, drawn before the spend and composed into
the fit's one event (:meth:`RowCount.compose`), the fit's own releases getting the rest
(``RowCount.fit_epsilon``).
"""

import math

from dpsk.accounting import ComposedEvent
from dpsk.accounting._calibration import round_down, split_epsilon
from dpsk.mechanisms import DiscreteLaplace

__all__ = ["COUNT_SHARE", "RowCount"]

#: Share of ε spent on the noisy row count.
COUNT_SHARE = 0.01


class RowCount:
    """The number of rows, released with ``COUNT_SHARE`` of ε when a plan needs it.

    Used by DP-SGD without ``n_samples``, boosting's ``max_iter="auto"`` and the tree
    regressors' ``max_depth=None``: the geometric mechanism (sensitivity 1) with
    ``COUNT_SHARE`` of ε, clamped at 1 (post-processing); its event goes into the fit's
    one event (:meth:`compose`) and the fit's releases get the rest (``fit_epsilon``).
    Not ``needed`` (an explicit parameter) or ε = ∞: no release, the whole ε for the
    fit, and ``value`` is the data's count.
    """

    def __init__(self, epsilon, n_rows, rng, *, needed):
        self.event = None
        self.fit_epsilon, self.value = epsilon, float(n_rows)
        if not needed or math.isinf(epsilon):
            return
        count_epsilon = split_epsilon(epsilon * COUNT_SHARE, 1)
        counter = DiscreteLaplace(epsilon=count_epsilon, random_state=rng)
        self.event = counter.privacy_event()
        self.fit_epsilon = round_down(epsilon - count_epsilon)
        self.value = max(1.0, float(counter.randomise(float(n_rows))))

    def compose(self, fit_event):
        """The fit's one event: the count's release (if any), then the fit's."""
        return fit_event if self.event is None else ComposedEvent((self.event, fit_event))
