# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Local differential privacy: users randomize their own values; the server aggregates reports.

* Client side, run by each user on their own value: the frequency oracles
  :class:`DirectEncoding` (generalized randomized response, GRR),
  :class:`UnaryEncoding` (OUE, SUE) and :class:`LocalHashing` (OLH, BLH) of Wang, Blocki,
  Li & Jha (2017), and :class:`OneBitMean` for bounded numbers (Duchi, Jordan &
  Wainwright 2018). Each is an immutable mechanism: ``randomise(values)`` returns one
  ε-LDP report per value.
* Server side, post-processing only: :class:`FrequencyEstimator` (unbiased counts and
  their variance) and :class:`MeanEstimator`.
* :func:`make_randomizer` and :func:`choose_protocol` pick the client of a protocol from
  public parameters.

See the user guide, :ref:`local`.
"""

from dpsk.local._estimators import FrequencyEstimator, MeanEstimator
from dpsk.local._randomizers import (
    DirectEncoding,
    LocalHashing,
    OneBitMean,
    UnaryEncoding,
    choose_protocol,
    make_randomizer,
)

__all__ = [
    "DirectEncoding",
    "FrequencyEstimator",
    "LocalHashing",
    "MeanEstimator",
    "OneBitMean",
    "UnaryEncoding",
    "choose_protocol",
    "make_randomizer",
]
