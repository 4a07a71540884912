# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Noise mechanisms: calibrated, floating-point safe, and accounted.

Every mechanism takes keyword-only privacy parameters (``epsilon``, ``delta``,
``sensitivity``, ``random_state``, as in diffprivlib), releases with ``randomise``,
reports the privacy event of a release (``privacy_event``) and calls
:func:`dpsk.accounting.note_release` once per release.

=============================  ====================================================  ====
mechanism                      noise                                                 safe
=============================  ====================================================  ====
:class:`Laplace`               exact discrete Laplace on a 2⁻⁴⁰-fine lattice (ε)     yes
:class:`Gaussian`              exact discrete Gaussian on a lattice, analytic σ      yes
:class:`DiscreteLaplace`       geometric noise on integers (ε); alias ``Geometric``  yes
:class:`DiscreteGaussian`      discrete Gaussian on integers (ε, δ)                  yes
:class:`ExponentialMechanism`  exact exponential-mechanism selection                 yes
:class:`ReportNoisyMax`        permute-and-flip selection                            yes
:class:`RandomizedResponse`    binary / k-ary randomized response                    yes
:class:`SparseVector`          sparse vector: ⊤/⊥ answers, halts after c ⊤ (ε)       yes
:class:`AboveThreshold`        sparse vector with c = 1                              yes
:class:`UnsafeLaplace`         textbook inverse-CDF Laplace (comparison only)        no
:class:`UnsafeGaussian`        textbook continuous Gaussian (comparison only)        no
=============================  ====================================================  ====

Calibration formulas (σ from (ε, δ), ...) live in :mod:`dpsk.accounting`, shared with
the accountant's conversions.

The estimators' joint release of several bounded statistics as one noisy vector
(``Box``, ``JointRelease``) is in the private module ``dpsk.mechanisms._joint``.
"""

from dpsk.mechanisms._discrete import DiscreteGaussian, DiscreteLaplace, Geometric
from dpsk.mechanisms._gaussian import Gaussian, UnsafeGaussian
from dpsk.mechanisms._laplace import Laplace, UnsafeLaplace
from dpsk.mechanisms._randomized_response import RandomizedResponse
from dpsk.mechanisms._selection import ExponentialMechanism, ReportNoisyMax
from dpsk.mechanisms._sparse_vector import AboveThreshold, SparseVector, SparseVectorRun

__all__ = [
    "AboveThreshold",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "ExponentialMechanism",
    "Gaussian",
    "Geometric",
    "Laplace",
    "RandomizedResponse",
    "ReportNoisyMax",
    "SparseVector",
    "SparseVectorRun",
    "UnsafeGaussian",
    "UnsafeLaplace",
]
