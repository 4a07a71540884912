# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The release-recording harness: every estimator releases exactly what it declares.

Inside :func:`dpsk.accounting.record_releases`, every mechanism call (and every noise draw
an estimator makes from a kernel directly) logs its privacy event. For every estimator and
several numbers of features, the multiset of logged leaf events must equal
``privacy_spent_.flatten()``: no undeclared release, no declared release that was skipped.
"""

import threading

import pytest

from dpsk.accounting import LaplaceEvent, note_release, record_releases
from dpsk.utils._testing import BrokenToyDPMeanClassifier
from dpsk.utils._testing.common import estimators_under_test
from dpsk.utils.estimator_checks import check_releases_match_declared_cost

N_FEATURES = [1, 2, 5, 20, 50]
ESTIMATORS = list(estimators_under_test())


@pytest.mark.parametrize("n_features", N_FEATURES)
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda est: type(est).__name__)
def test_releases_match_declared_cost(estimator, n_features):
    check_releases_match_declared_cost(type(estimator).__name__, estimator, n_features=n_features)


@pytest.mark.parametrize("n_features", N_FEATURES)
def test_harness_catches_an_undeclared_release(n_features):
    with pytest.raises(AssertionError, match="undeclared"):
        check_releases_match_declared_cost(
            "BrokenToyDPMeanClassifier", BrokenToyDPMeanClassifier(bug="under_declares"), n_features=n_features
        )


def test_nested_recorders_each_see_the_releases_inside_them():
    event = LaplaceEvent(1.0)
    with record_releases() as outer:
        note_release(event)
        with record_releases() as inner:
            note_release(event)
    note_release(event)  # outside every recorder: not logged, no error
    assert outer == [event, event]
    assert inner == [event]


def test_recording_is_per_context():
    """Check that a recorder does not collect releases made by another thread.

    An estimator that draws noise in worker threads must log the releases in the calling
    thread, otherwise the recording check fails for it (it cannot pass silently).
    """
    with record_releases() as drawn:
        worker = threading.Thread(target=note_release, args=(LaplaceEvent(1.0),))
        worker.start()
        worker.join()
    assert drawn == []
