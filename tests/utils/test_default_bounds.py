# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""A left-out sensitivity parameter means "private" (issue 19); "data" asks for the old derivation.

Per family: the default fit goes through the private estimate (the recording harness
sees the bound's release inside the fit's one event, the ledger one labelled spend, and
the releases are those of the explicit ``"private"`` fit), ``"data"`` still warns,
and a deliberately broken default that falls back to the data silently fails the check.
Where the private estimate cannot run, a left-out bound raises before any spend, saying
what to pass. (Audits of the private releases themselves: test_private_bounds.py.)
"""

import warnings
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from dpsk import stats
from dpsk.accounting import BudgetAccountant, record_releases
from dpsk.cluster import KMeans
from dpsk.decomposition import PCA
from dpsk.ensemble import RandomForestClassifier, RandomForestRegressor, SubsampleAggregate
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.feature_selection import SelectKBest
from dpsk.linear_model import LinearRegression, LogisticRegression, Ridge, _erm, _least_squares
from dpsk.naive_bayes import CategoricalNB, GaussianNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler
from dpsk.svm import LinearSVC
from dpsk.tree import DecisionTreeRegressor
from dpsk.utils import _private_bounds
from dpsk.utils import validation as dpsk_validation
from dpsk.utils._testing.bounds import classification_data, regression_data


def _leaves(events):
    return Counter(leaf for event in events for leaf in event.flatten())


_regression, _classification = regression_data, classification_data


#: name: (estimator with the bounds left out, its left-out parameters, data, fitted attributes).
DEFAULT_FITS = {
    "LinearRegression": (
        lambda: LinearRegression(epsilon=1.0),
        ["bounds_X", "bounds_y"],
        _regression,
        ["bounds_X_", "bounds_y_"],
    ),
    "Ridge": (lambda: Ridge(epsilon=1.0), ["bounds_X", "bounds_y"], _regression, ["bounds_X_", "bounds_y_"]),
    "LogisticRegression": (
        lambda: LogisticRegression(epsilon=1.0, classes=[0, 1]),
        ["data_norm"],
        _classification,
        ["data_norm_"],
    ),
    "LinearSVC": (lambda: LinearSVC(epsilon=1.0, classes=[0, 1]), ["data_norm"], _classification, ["data_norm_"]),
    "PCA": (lambda: PCA(n_components=2, epsilon=1.0), ["data_norm"], _regression, ["data_norm_"]),
    "StandardScaler": (lambda: StandardScaler(epsilon=1.0), ["bounds"], _regression, ["bounds_"]),
    "MinMaxScaler": (lambda: MinMaxScaler(epsilon=1.0), ["bounds"], _regression, ["bounds_"]),
    "GaussianNB": (lambda: GaussianNB(epsilon=1.0, classes=[0, 1]), ["bounds"], _classification, ["bounds_"]),
    "KMeans": (lambda: KMeans(n_clusters=2, epsilon=1.0), ["bounds"], _regression, ["bounds_"]),
    "DecisionTreeRegressor": (
        lambda: DecisionTreeRegressor(epsilon=1.0, max_depth=3),
        ["bounds", "bounds_y"],
        _regression,
        ["bounds_", "bounds_y_"],
    ),
    "RandomForestClassifier": (
        lambda: RandomForestClassifier(epsilon=1.0, classes=[0, 1], max_depth=3, n_estimators=3),
        ["bounds"],
        _classification,
        ["bounds_"],
    ),
    "RandomForestRegressor": (
        lambda: RandomForestRegressor(epsilon=1.0, max_depth=3, n_estimators=3),
        ["bounds", "bounds_y"],
        _regression,
        ["bounds_", "bounds_y_"],
    ),
    "SelectKBest": (lambda: SelectKBest(k=2, epsilon=1.0), ["bounds"], _classification, ["bounds_"]),
}


def _fit(est, X, y):
    """Fit with an accountant; return the ledger labels, the recorded releases and the leak warnings."""
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5)
    est.set_params(accountant=acc, random_state=0)
    with warnings.catch_warnings(record=True) as caught, record_releases() as drawn:
        warnings.simplefilter("always")
        est.fit(X, y)
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    return [str(label) for label in acc.to_frame()["label"]], drawn, leaks


def _check_default_is_private(name):
    """The left-out fit releases its bounds privately in its one event, as ``"private"`` does."""
    make, params, data, attributes = DEFAULT_FITS[name]
    X, y = data()
    est = make()
    assert all(est.get_params()[p] is None for p in params)
    labels, drawn, leaks = _fit(est, X, y)
    assert not leaks, f"{name}: a left-out bound warned: {leaks[0].message}"
    assert len(labels) == 1, f"{name}: {len(labels)} spends for one fit"
    assert all(f"private {p}" in labels[0] or f", {p}" in labels[0] for p in params), labels[0]
    assert "10% of ε" in labels[0], labels[0]
    assert _leaves(drawn) == _leaves([est.privacy_spent_]), f"{name}: releases differ from the declared event"
    explicit = make().set_params(**dict.fromkeys(params, "private"))
    _, drawn_explicit, _ = _fit(explicit, X, y)
    assert _leaves(drawn) == _leaves(drawn_explicit), f"{name}: not the releases of the explicit private fit"
    for attribute in attributes:  # released (the seed's stream also depends on the parameters' values)
        assert np.all(np.isfinite(np.asarray(getattr(est, attribute), dtype=float)))
    assert all(est.get_params()[p] is None for p in params), "the fit overwrote a hyper-parameter"


@pytest.mark.parametrize("name", sorted(DEFAULT_FITS))
def test_left_out_bound_is_estimated_privately_in_the_fits_one_event(name):
    _check_default_is_private(name)


@pytest.mark.parametrize("name", sorted(DEFAULT_FITS))
def test_data_asks_for_the_derivation_and_warns(name):
    """Check ``"data"``: the old derivation, with its PrivacyLeakWarning, and nothing private spent on it."""
    make, params, data, attributes = DEFAULT_FITS[name]
    X, y = data()
    est = make().set_params(**dict.fromkeys(params, "data"))
    labels, drawn, leaks = _fit(est, X, y)
    assert {p for p in params if any(f"`{p}`" in str(w.message) for w in leaks)} == set(params)
    assert len(labels) == 1 and not any(p in labels[0] for p in params), labels  # not estimated
    assert all(est.get_params()[p] == "data" for p in params)


def _silent_data_default(monkeypatch):
    """A broken default: a left-out bound is derived from the data, without warning or release."""
    monkeypatch.setattr(_private_bounds, "wants_private", _private_bounds.is_private)
    monkeypatch.setattr(_least_squares, "wants_private", _private_bounds.is_private)
    monkeypatch.setattr(_erm, "private_data_norm", lambda est: _private_bounds.is_private(est.data_norm))
    monkeypatch.setattr(dpsk_validation, "warn_data_derived", lambda *args, **kwargs: None)


@pytest.mark.parametrize("name", ["GaussianNB", "LinearRegression", "LogisticRegression", "SelectKBest"])
def test_check_fails_when_the_default_silently_uses_the_data(name, monkeypatch):
    """Check the check: a default that falls back to the data-derived bound silently is caught."""
    _silent_data_default(monkeypatch)
    with pytest.raises(AssertionError):
        _check_default_is_private(name)


def test_stats_default_is_private_and_data_warns():
    """Check dpsk.stats: a left-out bounds is released in the call's event as "private" is; "data" warns."""
    x = np.random.default_rng(0).normal(size=2_000)
    results = {}
    for bounds in (None, "private"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            with record_releases() as drawn:
                results[bounds] = stats.mean(x, epsilon=1.0, bounds=bounds, random_state=0, return_error=True)
        assert _leaves(drawn) == _leaves([results[bounds].privacy_spent])
    assert _leaves([results[None].privacy_spent]) == _leaves([results["private"].privacy_spent])
    assert _leaves([results[None].privacy_spent]) != _leaves(
        [stats.mean(x, epsilon=1.0, bounds=(-4, 4), random_state=0, return_error=True).privacy_spent]
    )
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        stats.quantile(x, 0.5, epsilon=1.0, bounds="data", random_state=0)


# -- where the private estimate cannot run: a left-out bound says what to pass, before any spend


def _refused(fit, match):
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5)
    with record_releases() as drawn, pytest.raises(ValueError, match=match) as error:
        fit(acc)
    assert not drawn and len(acc.to_frame()) == 0
    assert '"data"' in str(error.value) and "PrivacyLeakWarning" in str(error.value), error.value
    return str(error.value)


def test_left_out_bound_on_sparse_x_is_estimated_privately():
    """Check sparse X: the columns' histograms and the rows' norms are those of the dense X
    (implicit zeros counted), so left-out bounds are estimated on it too, without densifying."""
    from dpsk.stats._bounds import _log_histograms, row_norms

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5)) * (rng.random((300, 5)) < 0.3)
    Xs = sp.csr_matrix(X)
    np.testing.assert_array_equal(_log_histograms(Xs), _log_histograms(X))
    np.testing.assert_allclose(row_norms(Xs), row_norms(X), rtol=1e-15)  # each from its own row only
    y = (X[:, 0] > 0).astype(int)
    for est, params in (
        (LogisticRegression(epsilon=1.0, classes=[0, 1]), ["data_norm"]),
        (LinearRegression(epsilon=1.0), ["bounds_X", "bounds_y"]),
        (StandardScaler(epsilon=1.0, with_mean=False), ["bounds"]),
    ):
        labels, drawn, leaks = _fit(est, Xs, y)
        assert not leaks and len(labels) == 1 and all(p in labels[0] for p in params), labels
        assert _leaves(drawn) == _leaves([est.privacy_spent_])
    # Refused where the estimate needs dense rows (box-clipped norms): before any spend.
    acc = BudgetAccountant(epsilon=5.0)
    with record_releases() as drawn, pytest.raises(ValueError, match="sparse X"):
        LogisticRegression(data_norm="private", bounds=(-2, 2), classes=[0, 1], accountant=acc).fit(Xs, y)
    assert not drawn and len(acc.to_frame()) == 0


def test_left_out_bound_with_groups_says_what_to_pass():
    X, y = _regression(n=200)
    groups = np.arange(200) % 10
    _refused(lambda acc: LinearRegression(accountant=acc).fit(X, y, groups=groups), "groups")
    _refused(lambda acc: stats.mean(y, epsilon=1.0, groups=groups, accountant=acc), "user level.*left out, `bounds`")


def test_stats_left_out_bounds_of_several_values_per_record_say_what_to_pass():
    X, _ = _regression(n=200)
    _refused(lambda acc: stats.mean(X, epsilon=1.0, accountant=acc), "one value per record.*left out")
    stats.mean(X, epsilon=1.0, axis=0, random_state=0)  # one output per column: private


@pytest.mark.parametrize(
    "make, param",
    [
        (lambda acc: CategoricalNB(classes=[0, 1], accountant=acc), "n_categories"),
    ],
)
def test_parameters_without_a_private_estimate_are_required(make, param):
    X = np.random.default_rng(0).integers(0, 3, size=(100, 3))
    y = np.arange(100) % 2
    message = _refused(lambda acc: make(acc).fit(X, y), f"`{param}` was left out, but it is not estimated privately")
    assert "public" in message
    _refused(lambda acc: make(acc).set_params(**{param: "private"}).fit(X, y), "not estimated privately")
    with pytest.warns(PrivacyLeakWarning, match=param):
        make(None).set_params(**{param: "data"}).fit(X, y)


def test_subsample_aggregate_requires_its_output_box():
    from sklearn.linear_model import LinearRegression as SkLinearRegression

    X, y = _regression(n=200)
    make = lambda acc, **kw: SubsampleAggregate(SkLinearRegression(), n_parts=2, accountant=acc, **kw)  # noqa: E731
    _refused(lambda acc: make(acc).fit(X, y), "`bounds` was left out")
    _refused(lambda acc: make(acc, bounds="private").fit(X, y), '`bounds`="private" was asked for')
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        make(None, bounds="data", random_state=0).fit(X, y)


def test_classes_private_is_refused_with_the_reason():
    X, y = _classification(n=100)
    for est in (
        GaussianNB(classes="private"),
        LogisticRegression(classes="private"),
        RandomForestClassifier(classes="private"),
    ):
        with record_releases() as drawn, pytest.raises(ValueError, match="a private label set cannot be estimated"):
            est.fit(X, y)
        assert not drawn
