# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Strict mode: dpsk.set_config(require_accountant=True) refuses untracked releases before any read."""

import threading

import numpy as np
import pytest

import dpsk
from dpsk.accounting import BudgetAccountant, record_releases
from dpsk.accounting._preflight import _Unreadable as _Spy  # raises if anything reads it
from dpsk.exceptions import AccountantRequiredError
from dpsk.model_selection import GridSearchCV
from dpsk.pipeline import make_pipeline
from dpsk.stats import mean
from dpsk.utils._testing import ToyDPMeanClassifier
from dpsk.utils._testing.accounting import ToyDPCenterer
from dpsk.utils._testing.common import estimators_under_test


@pytest.fixture
def strict():
    with dpsk.config_context(require_accountant=True):
        yield


def _classifier(**params):
    return ToyDPMeanClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1], random_state=0, **params)


def test_default_is_off_and_get_config_returns_a_copy(toy_data):
    assert dpsk.get_config() == {"require_accountant": False, "bounds_epsilon_share": 0.1}
    dpsk.get_config()["require_accountant"] = True
    assert dpsk.get_config()["require_accountant"] is False
    assert _classifier().fit(*toy_data).privacy_spent_ is not None  # silent, as before


def test_a_fit_without_accountant_is_refused_before_reading(strict):
    with record_releases() as drawn:
        with pytest.raises(AccountantRequiredError, match=r"ToyDPMeanClassifier\.fit has no accountant"):
            _classifier().fit(_Spy(), _Spy())
    assert drawn == []


def test_statistics_and_searches_are_refused_before_reading(strict):
    with pytest.raises(AccountantRequiredError, match="dpsk.stats"):
        mean(_Spy(), epsilon=1.0, bounds=(0, 1))
    search = GridSearchCV(_classifier(), {"epsilon": [1.0, 2.0]}, cv=2, epsilon=1.0)
    with pytest.raises(AccountantRequiredError, match="search"):
        search.fit(_Spy(), _Spy())


def test_a_pipeline_with_one_untracked_step_spends_nothing(strict, toy_data):
    acc = BudgetAccountant(epsilon=10.0)
    pipe = make_pipeline(ToyDPCenterer(epsilon=1.0, bounds=(-1.0, 1.0), accountant=acc), _classifier())
    with pytest.raises(AccountantRequiredError):
        pipe.fit(_Spy(), _Spy())
    assert len(acc) == 0


def test_explicit_context_and_bound_accountants_are_accepted(strict, toy_data):
    acc = BudgetAccountant(epsilon=10.0)
    _classifier(accountant=acc).fit(*toy_data)
    with acc:
        _classifier().fit(*toy_data)
        mean(np.zeros(5), epsilon=1.0, bounds=(0, 1), random_state=0)
    assert len(acc) == 3


def test_config_context_restores_and_set_config_validates():
    with dpsk.config_context(require_accountant=True):
        assert dpsk.get_config()["require_accountant"] is True
        with dpsk.config_context(require_accountant=False):
            assert dpsk.get_config()["require_accountant"] is False
        assert dpsk.get_config()["require_accountant"] is True
    assert dpsk.get_config()["require_accountant"] is False
    dpsk.set_config(require_accountant=True)
    try:
        assert dpsk.get_config()["require_accountant"] is True
        dpsk.set_config()  # None leaves it unchanged
        assert dpsk.get_config()["require_accountant"] is True
    finally:
        dpsk.set_config(require_accountant=False)
    with pytest.raises(TypeError):
        dpsk.set_config(require_accountant="yes")


def test_the_setting_is_per_thread(strict):
    seen = []
    thread = threading.Thread(target=lambda: seen.append(dpsk.get_config()["require_accountant"]))
    thread.start()
    thread.join()
    assert seen == [False] and dpsk.get_config()["require_accountant"] is True


@pytest.mark.parametrize("estimator", list(estimators_under_test()), ids=lambda e: type(e).__name__)
def test_every_estimator_is_refused_before_reading(strict, estimator):
    with record_releases() as drawn:
        with pytest.raises(AccountantRequiredError):
            estimator.fit(_Spy(), _Spy())
    assert drawn == []
