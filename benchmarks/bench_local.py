# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Local-DP frequency oracles: the variance per user of GRR, OUE and OLH, formula against simulation.

For each domain size d ∈ {2, 16, 1024} and ε ∈ {0.5, 1, 2, 4}: Wang, Blocki, Li & Jha's
(2017) approximate variance Var* / n = q(1-q)/(p-q)^2 of the unbiased count of a
category no one holds (the variance of its estimated frequency times n), and the same
measured: over independent groups of n = 100 users who all hold category 0 (one
``randomise`` call for all groups, seed 0), the sample variance of
``FrequencyEstimator.frequencies_`` across groups, times n, averaged over the d - 1
categories no one holds (400 groups for d <= 16, 40 for d = 1024; a quarter with
``--quick``). The column "auto" is the protocol ``FrequencyEstimator(protocol="auto")``
picks (GRR iff d < 3e^ε + 2).
Run: ``python benchmarks/bench_local.py``.
"""

import time

import numpy as np
from _family_common import main

from dpsk.local import FrequencyEstimator, choose_protocol, make_randomizer

DOMAINS = (2, 16, 1024)
EPSILONS = (0.5, 1.0, 2.0, 4.0)
PROTOCOLS = ("grr", "oue", "olh")
USERS = 100


def measured_variance(protocol, epsilon, d, groups, seed=0):
    """n x the sample variance of the estimated frequencies of the categories no one holds, and Var*."""
    randomizer = make_randomizer(protocol, epsilon=epsilon, n_categories=d, random_state=seed)
    reports = randomizer.randomise(np.zeros(groups * USERS, dtype=np.int64))
    reports = reports.reshape(groups, USERS, *reports.shape[1:])
    estimator = FrequencyEstimator(protocol=protocol, epsilon=epsilon, n_categories=d)
    unheld = np.array([estimator.fit(group).frequencies_[1:] for group in reports])
    return USERS * float(np.var(unheld, axis=0, ddof=1).mean()), USERS * estimator.variance_


def run(quick=False):
    """One row per (d, ε): Var* per user of each protocol, formula / measured."""
    rows = []
    for d in DOMAINS:
        groups = (400 if d <= 16 else 40) // (4 if quick else 1)
        for epsilon in EPSILONS:
            row = {"d": d, "ε": epsilon}
            start = time.perf_counter()
            for protocol in PROTOCOLS:
                measured, formula = measured_variance(protocol, epsilon, d, groups)
                row[f"{protocol.upper()} formula"] = round(formula, 3)
                row[f"{protocol.upper()} measured"] = round(measured, 3)
            row["auto"] = choose_protocol(epsilon, d)
            row["time (s)"] = round(time.perf_counter() - start, 2)
            rows.append(row)
    return rows


if __name__ == "__main__":
    main(run, __doc__.splitlines()[0])
