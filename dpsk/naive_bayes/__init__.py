# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Naive Bayes classifiers with differential privacy: noisy counts and class moments."""

from dpsk.naive_bayes._categorical import CategoricalNB
from dpsk.naive_bayes._discrete import BernoulliNB, MultinomialNB
from dpsk.naive_bayes._gaussian import GaussianNB

__all__ = ["BernoulliNB", "CategoricalNB", "GaussianNB", "MultinomialNB"]
