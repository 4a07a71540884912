# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures: a seed fixture for statistical tests, a dtype fixture for kernels, a
switch running accounting with and without the optional dp-accounting package, and a
small two-class data set in [-1, 1] for the accounting tests of composite estimators, and a
guard against densifying sparse data."""

import os

import numpy as np
import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (a test that fails on one run and
# passes on the next is a bug of its own); DPSK_HYPOTHESIS_PROFILE=explore draws new ones,
# to look for counterexamples on purpose.
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("DPSK_HYPOTHESIS_PROFILE", "deterministic"))

_SEEDS = os.environ.get("DPSK_TESTS_GLOBAL_RANDOM_SEED", "42")


def pytest_generate_tests(metafunc):
    # `global_random_seed`: 42 by default; DPSK_TESTS_GLOBAL_RANDOM_SEED="all" runs 0..99 and
    # "3-7" a range, so statistical tests can be shown not to pass on one lucky seed.
    if "global_random_seed" in metafunc.fixturenames:
        if _SEEDS == "all":
            seeds = list(range(100))
        elif "-" in _SEEDS:
            start, stop = (int(s) for s in _SEEDS.split("-"))
            seeds = list(range(start, stop + 1))
        else:
            seeds = [int(_SEEDS)]
        metafunc.parametrize("global_random_seed", seeds)


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def global_dtype(request):
    """Both floating dtypes every kernel and estimator supports."""
    return request.param


@pytest.fixture(params=["pld", "no pld"])
def pld_switch(request, monkeypatch):
    """Accounting with dp-accounting's PLD (skipped if it is not installed), then without it."""
    if request.param == "pld":
        pytest.importorskip("dp_accounting")
    else:
        monkeypatch.setattr("dpsk.accounting._pld.available", lambda: False)
    return request.param


@pytest.fixture
def toy_data():
    """120 rows, 3 features uniform in [-1, 1]; the class is the sign of the first feature."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(120, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


@pytest.fixture
def no_densifying(monkeypatch):
    """Make densifying a sparse matrix of 500 rows or more (the data, not a block of rows or a
    d x d product) an error (the sparse paths of issue 16)."""
    from scipy.sparse import _base, _compressed, _coo

    def guard(original):
        def toarray(self, *args, **kwargs):
            if self.shape[0] >= 500:
                raise AssertionError(f"a {self.shape} sparse matrix was densified")
            return original(self, *args, **kwargs)

        return toarray

    for cls in (_base._spbase, _compressed._cs_matrix, _coo._coo_base):
        for method in ("toarray", "todense"):
            if method in vars(cls):
                monkeypatch.setattr(cls, method, guard(vars(cls)[method]))
