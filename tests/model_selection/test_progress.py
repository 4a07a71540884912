# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""verbose=1 draws a progress bar of the fits: tqdm's when installed, plain lines otherwise."""

import sys
import types

import numpy as np
import pytest

from dpsk.model_selection import GridSearchCV, cross_val_score, privacy_utility_curve
from dpsk.utils._testing import ToyDPMeanClassifier


def _classifier():
    return ToyDPMeanClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1], random_state=0)


def _runs(data):
    X, y = data
    return {
        "GridSearchCV": (
            lambda verbose: GridSearchCV(
                _classifier(), {"epsilon": [1.0, 2.0]}, cv=3, epsilon=1.0, verbose=verbose, random_state=0
            ).fit(X, y),
            6,
        ),
        "cross_val_score": (
            lambda verbose: cross_val_score(_classifier(), X, y, cv=4, epsilon=1.0, verbose=verbose, random_state=0),
            4,
        ),
        "privacy_utility_curve": (
            lambda verbose: privacy_utility_curve(
                _classifier(), [0.5, 1.0, 2.0], X, y, X, y, n_seeds=2, verbose=verbose, random_state=0
            ),
            6,
        ),
    }


@pytest.fixture
def no_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)


@pytest.mark.parametrize("name", ["GridSearchCV", "cross_val_score", "privacy_utility_curve"])
def test_plain_lines_without_tqdm(toy_data, name, no_tqdm, capsys):
    run, n_fits = _runs(toy_data)[name]
    run(0)
    assert capsys.readouterr().err == ""
    run(1)
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"{name}: {n_fits}/{n_fits} fits done"
    assert all(line.startswith(f"{name}: ") and line.endswith(" fits done") for line in err.splitlines())


def test_tqdm_when_installed(toy_data, monkeypatch):
    seen = []

    def fake_tqdm(iterable, total, desc, unit, file):
        seen.append((total, desc))
        return iterable

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = fake_tqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    run, n_fits = _runs(toy_data)["GridSearchCV"]
    run(1)
    assert seen == [(n_fits, "GridSearchCV")]


def test_plain_lines_are_few_for_many_fits(no_tqdm, capsys):
    from dpsk.utils._progress import progress

    assert list(progress(iter(range(1000)), 1000, "run")) == list(range(1000))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10 and lines[-1] == "run: 1000/1000 fits done"
    assert np.all([line.startswith("run: ") for line in lines])
