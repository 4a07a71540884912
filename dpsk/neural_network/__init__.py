# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private neural networks: multi-layer perceptrons trained by DP-SGD."""

from dpsk.neural_network._multilayer_perceptron import MLPClassifier, MLPRegressor

__all__ = ["MLPClassifier", "MLPRegressor"]
