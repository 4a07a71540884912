# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""``on_invalid``: records outside the declared domain raise, or are dropped or clipped
inside the mechanism (issue 14, finding 4).

Dropping or clipping maps each record by a function of that record alone, so a dataset
with one invalid record and the same dataset without it are screened to the same data:
with an integer seed (whose stream is derived from the screened data) they give the same
release. ``"raise"`` keeps the errors users rely on, before anything is spent.
"""

import numpy as np
import pytest

from dpsk import BudgetAccountant, stats
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB
from dpsk.utils._sklearn_compat import InvalidParameterError
from dpsk.utils.validation import labels_in, screen_invalid, screen_sample_weight

# ------------------------------------------------------------------ the helper


def test_screen_invalid_drop_clip_raise():
    """Check each policy on rows with NaN, ±inf and a caller-invalid row."""
    X = np.array([[0.5, np.inf], [0.2, 0.3], [np.nan, 0.1], [-np.inf, 0.0], [0.4, 0.4]])
    valid = np.array([True, True, True, True, False])
    same, keep = screen_invalid("raise", X, valid=valid)
    assert same is X and keep is None
    _, keep = screen_invalid("drop", X, valid=valid)
    np.testing.assert_array_equal(keep, [False, True, False, False, False])
    clipped, keep = screen_invalid("clip", X, valid=valid)
    np.testing.assert_array_equal(keep, [True, True, False, True, False])
    big = np.finfo(np.float64).max
    assert clipped[0, 1] == big and clipped[3, 0] == -big
    assert np.isinf(X[0, 1])  # the input is not modified
    _, keep = screen_invalid("clip", X, infinite="drop")
    np.testing.assert_array_equal(keep, [False, True, False, False, True])
    kept, keep = screen_invalid("clip", X, infinite="keep")
    assert keep.tolist() == [True, True, False, True, True] and np.isinf(kept[0, 1])
    _, keep = screen_invalid("drop", np.array([[1.0], [2.0]]))
    assert keep is None  # nothing to drop


def test_screen_invalid_float32_clips_to_its_own_extreme():
    """Check that float32 infinities become float32's largest value (the dtype is kept)."""
    X = np.array([[np.inf], [1.0]], dtype=np.float32)
    out, _ = screen_invalid("clip", X)
    assert out.dtype == np.float32 and out[0, 0] == np.finfo(np.float32).max


def test_screen_sample_weight():
    """Check drop (NaN, inf, negative invalid) and clip (into [0, 1], NaN invalid)."""
    w = np.array([0.5, np.nan, np.inf, -1.0, 2.0])
    weights, valid = screen_sample_weight("drop", w, 5)
    np.testing.assert_array_equal(valid, [True, False, False, False, True])
    weights, valid = screen_sample_weight("clip", w, 5)
    np.testing.assert_array_equal(valid, [True, False, True, True, True])
    np.testing.assert_array_equal(weights[valid], [0.5, 1.0, 0.0, 1.0])
    assert screen_sample_weight("raise", w, 5)[0] is w


def test_labels_in():
    """Check labels against public classes: NaN, None and unknown labels are outside."""
    np.testing.assert_array_equal(labels_in([0, 1], np.array([0, 1, 2, np.nan])), [True, True, False, False])
    np.testing.assert_array_equal(labels_in(["a", "b"], np.array(["a", None], dtype=object)), [True, False])
    np.testing.assert_array_equal(labels_in(None, np.array([0.0, np.nan])), [True, False])


# ------------------------------------------------------------------ dpsk.stats

_VALID = np.array([0.1, 0.4, 0.45, 0.8, 0.9, 0.3])
STATISTICS = {
    "count": (stats.count, {}),
    "sum": (stats.sum, {"bounds": (0, 1)}),
    "mean": (stats.mean, {"bounds": (0, 1)}),
    "var": (stats.var, {"bounds": (0, 1)}),
    "std": (stats.std, {"bounds": (0, 1)}),
    "quantile": (stats.quantile, {"q": 0.3, "bounds": (0, 1)}),
    "percentile": (stats.percentile, {"q": 30, "bounds": (0, 1)}),
    "median": (stats.median, {"bounds": (0, 1)}),
    "histogram": (stats.histogram, {"bins": 4, "range": (0, 1)}),
}


def _value(result):
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("name", sorted(STATISTICS))
@pytest.mark.parametrize("invalid", [np.nan, np.inf, -np.inf])
def test_stats_drop_releases_as_without_the_invalid_record(name, invalid):
    """D with one invalid record and D without it: the same release (same seed, same value)."""
    function, kwargs = STATISTICS[name]
    with_invalid = np.insert(_VALID, 2, invalid)
    for seed in range(3):
        a = _value(function(with_invalid, epsilon=1.0, on_invalid="drop", random_state=seed, **kwargs))
        b = _value(function(_VALID, epsilon=1.0, on_invalid="drop", random_state=seed, **kwargs))
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(STATISTICS))
def test_stats_raise_keeps_the_error_and_spends_nothing(name):
    """The default raises for NaN, before the accountant records anything."""
    function, kwargs = STATISTICS[name]
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="NaN"):
        function(np.insert(_VALID, 2, np.nan), epsilon=1.0, accountant=acc, **kwargs)
    assert len(acc) == 0
    function(np.insert(_VALID, 2, np.nan), epsilon=1.0, accountant=acc, on_invalid="drop", **kwargs)
    assert len(acc) == 1


@pytest.mark.parametrize("name", ["sum", "mean", "var", "median"])
def test_stats_clip_maps_infinity_to_the_bound(name):
    """Under "clip", +inf and -inf release what the bounds 1 and 0 release (same noise)."""
    function, kwargs = STATISTICS[name]
    with_inf = np.concatenate([_VALID, [np.inf, -np.inf, np.nan]])
    at_bounds = np.concatenate([_VALID, [1.0, 0.0]])
    a = function(with_inf, epsilon=1.0, on_invalid="clip", random_state=np.random.PCG64(7), **kwargs)
    b = function(at_bounds, epsilon=1.0, on_invalid="clip", random_state=np.random.PCG64(7), **kwargs)
    np.testing.assert_array_equal(a, b)


def test_stats_drop_user_level_missing_ids():
    """A record without a user id (None or NaN) is dropped with ``groups``, as without it."""
    groups = np.array([1, 1, 2, 3, 3, 4], dtype=object)
    a = stats.mean(
        np.insert(_VALID, 1, 0.7),
        bounds=(0, 1),
        groups=np.insert(groups, 1, None),
        on_invalid="drop",
        random_state=0,
    )
    b = stats.mean(_VALID, bounds=(0, 1), groups=groups, on_invalid="drop", random_state=0)
    assert a == b
    float_ids = np.array([1.0, 1, 2, 3, 3, 4])
    a = stats.sum(
        np.insert(_VALID, 0, 0.7),
        bounds=(0, 1),
        groups=np.insert(float_ids, 0, np.nan),
        on_invalid="drop",
        random_state=0,
    )
    assert a == stats.sum(_VALID, bounds=(0, 1), groups=float_ids, on_invalid="drop", random_state=0)
    with pytest.raises(ValueError, match="groups contains NaN"):
        stats.sum(
            np.insert(_VALID, 0, 0.7),
            bounds=(0, 1),
            groups=np.insert([1.0, 1, 2, 3, 3, 4], 0, np.nan),
            on_invalid="raise",
        )


def test_stats_all_records_invalid_release_noise_only():
    """No valid record left: the release runs on no data instead of raising (both neighbours release)."""
    for name, (function, kwargs) in STATISTICS.items():
        assert np.all(np.isfinite(_value(function(np.array([np.nan, np.inf]), on_invalid="drop", **kwargs)))), name
    assert np.isfinite(stats.mean(np.array([np.nan]), bounds=(0, 1), groups=[1], on_invalid="drop"))
    hist, _ = stats.histogramdd(np.array([[np.nan, 0.1]]), bins=2, range=[(0, 1), (0, 1)], on_invalid="drop")
    assert hist.shape == (2, 2)


def test_stats_on_invalid_parameter_errors():
    """Bad values and impossible combinations are refused from the parameters alone."""
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(InvalidParameterError, match="on_invalid"):
        stats.mean(_VALID, bounds=(0, 1), on_invalid="ignore", accountant=acc)
    with pytest.raises(ValueError, match="public `bounds`"):
        stats.mean(_VALID, bounds="data", on_invalid="clip", accountant=acc)
    with pytest.raises(ValueError, match="public `range`"):
        stats.histogram(_VALID, bins=3, on_invalid="clip", accountant=acc)
    with pytest.raises(ValueError, match="public_user_counts"):
        stats.mean(_VALID, bounds=(0, 1), groups=[1, 1, 2, 2, 3, 3], public_user_counts=True, on_invalid="drop")
    assert len(acc) == 0
    stats.histogram(_VALID, bins=[0, 0.5, 1], on_invalid="clip")  # edges are public: accepted


# ------------------------------------------------------------------ naive Bayes

_X = np.array([[0.1, 0.7], [0.9, 0.2], [0.4, 0.4], [0.8, 0.9], [0.3, 0.1], [0.6, 0.5]])
_Y = np.array([0, 1, 0, 1, 0, 1])


def _models():
    return {
        "GaussianNB": (GaussianNB(bounds=(0, 1)), _X),
        "MultinomialNB": (MultinomialNB(data_norm=2.0), _X * 3),
        "BernoulliNB": (BernoulliNB(binarize=0.5), _X),
        "CategoricalNB": (CategoricalNB(n_categories=3), np.floor(_X * 3)),
    }


def _released(est):
    names = ("class_count_", "theta_", "var_", "feature_count_", "category_count_")
    return [np.asarray(getattr(est, n)) for n in names if hasattr(est, n) and not isinstance(getattr(est, n), list)] + [
        np.concatenate([c.ravel() for c in getattr(est, "category_count_", [])] or [np.zeros(0)])
    ]


def _invalid_rows(name):
    """(row, label, weight) of rows outside each model's domain."""
    rows = [([np.nan, 0.5], 0, 1.0), ([np.inf, 0.5], 1, 1.0), ([0.5, 0.5], 7, 1.0), ([0.5, 0.5], 0, np.nan)]
    if name == "MultinomialNB":
        rows.append(([-1.0, 0.5], 0, 1.0))
    if name == "CategoricalNB":
        rows += [([-1.0, 0.0], 0, 1.0), ([0.5, 1.0], 1, 1.0)]
    return rows


@pytest.mark.parametrize("name", ["GaussianNB", "MultinomialNB", "BernoulliNB", "CategoricalNB"])
def test_naive_bayes_drop_releases_as_without_the_invalid_row(name):
    """Each kind of invalid row is dropped: the fit is the fit without it (same seed, same release)."""
    est, X = _models()[name]
    est.set_params(classes=[0, 1], on_invalid="drop", random_state=0)
    w = np.full(len(X), 0.75)
    reference = _released(est.fit(X, _Y, sample_weight=w))
    for row, label, weight in _invalid_rows(name):
        Xd = np.vstack([X[:3], [row], X[3:]])
        yd = np.insert(_Y, 3, label)
        wd = np.insert(w, 3, weight)
        for got, want in zip(_released(est.fit(Xd, yd, sample_weight=wd)), reference):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["GaussianNB", "MultinomialNB", "BernoulliNB", "CategoricalNB"])
def test_naive_bayes_raise_keeps_the_errors(name):
    """The default refuses each kind of invalid row, before anything is spent."""
    est, X = _models()[name]
    acc = BudgetAccountant(epsilon=100.0)
    est.set_params(classes=[0, 1], accountant=acc, random_state=0)
    for row, label, weight in _invalid_rows(name):
        with pytest.raises(ValueError):
            est.fit(np.vstack([X, [row]]), np.append(_Y, label), sample_weight=np.append(np.ones(len(X)), weight))
    assert len(acc) == 0


@pytest.mark.parametrize("name", ["GaussianNB", "MultinomialNB", "BernoulliNB", "CategoricalNB"])
def test_naive_bayes_all_rows_invalid_release(name):
    """Every row invalid: the fit releases noise (no error that only one neighbour would raise)."""
    est, X = _models()[name]
    est.set_params(classes=[0, 1], on_invalid="drop", random_state=0).fit(np.full((2, 2), np.nan), [0, 1])
    assert est.classes_.tolist() == [0, 1]


def test_naive_bayes_clip():
    """What "clip" does per model, checked against the same fit on the clipped values (same noise)."""
    inf_row = np.vstack([_X, [[np.inf, -np.inf]]])
    y = np.append(_Y, 1)

    def fit(est, X):
        return est.set_params(classes=[0, 1], on_invalid="clip", random_state=np.random.PCG64(3)).fit(X, y)

    # GaussianNB: ±inf to the bounds.
    a, b = fit(GaussianNB(bounds=(0, 1)), inf_row), fit(GaussianNB(bounds=(0, 1)), np.vstack([_X, [[1.0, 0.0]]]))
    np.testing.assert_array_equal(a.theta_, b.theta_)
    # MultinomialNB: negative counts (and -inf) to 0.
    neg = np.vstack([_X, [[-2.0, 0.5]]])
    a, b = fit(MultinomialNB(data_norm=2.0), neg), fit(MultinomialNB(data_norm=2.0), np.vstack([_X, [[0.0, 0.5]]]))
    np.testing.assert_array_equal(a.feature_count_, b.feature_count_)
    # BernoulliNB: infinities are binarized.
    a, b = fit(BernoulliNB(), inf_row), fit(BernoulliNB(), np.vstack([_X, [[1.0, -1.0]]]))
    np.testing.assert_array_equal(a.feature_count_, b.feature_count_)
    # CategoricalNB: invalid codes count in no category, as codes >= n_categories.
    codes = np.floor(_X * 3)
    a = fit(CategoricalNB(n_categories=3), np.vstack([codes, [[np.nan, -1.0]]]))
    b = fit(CategoricalNB(n_categories=3), np.vstack([codes, [[5.0, 5.0]]]))
    for ca, cb in zip(a.category_count_, b.category_count_):
        np.testing.assert_array_equal(ca, cb)


def test_naive_bayes_on_invalid_parameter_errors():
    """A bad value is refused by ``_parameter_constraints``; "clip" without bounds before any spend."""
    acc = BudgetAccountant(epsilon=10.0)
    for est in (GaussianNB(), MultinomialNB(), BernoulliNB(), CategoricalNB()):
        with pytest.raises(InvalidParameterError, match="on_invalid"):
            est.set_params(on_invalid="ignore", accountant=acc).fit(_X, _Y)
    with pytest.raises(ValueError, match="public `bounds`"):
        GaussianNB(on_invalid="clip", bounds="data", accountant=acc).fit(_X, _Y)
    assert len(acc) == 0


# ------------------------------------------------------------------ black box


class _SumSampler:
    """``stats.sum`` with ``on_invalid``, run ``size`` times (the audit's sampler)."""

    def __init__(self, on_invalid):
        self.on_invalid = on_invalid

    def __call__(self, data, size, rng):
        return np.array(
            [
                stats.sum(data, epsilon=1.0, bounds=(0, 1), on_invalid=self.on_invalid, random_state=rng)
                for _ in range(size)
            ]
        )


def _neighbours():
    """Many invalid records and zeros; the neighbour adds one record at the upper bound."""
    base = np.concatenate([np.zeros(20), np.full(10, np.nan), np.full(5, np.inf)])
    return base, np.append(base, 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("on_invalid", ["drop", "clip"])
def test_on_invalid_audit(on_invalid):
    """Black box: with invalid records in both neighbours, the release is still ε-DP."""
    from dpsk.audit import audit

    result = audit(_SumSampler(on_invalid), _neighbours(), epsilon=1.0, n_samples=4_000, random_state=0)
    assert result.passed, str(result)


class _SparseSumSampler(_SumSampler):
    """``stats.sum`` over the rows of a one-column CSR matrix (sparse screening)."""

    def __call__(self, data, size, rng):
        import scipy.sparse as sp

        M = sp.csr_matrix(np.asarray(data, dtype=np.float64)[:, None])
        return np.array(
            [
                stats.sum(M, epsilon=1.0, bounds=(0, 1), axis=0, on_invalid=self.on_invalid, random_state=rng)[0]
                for _ in range(size)
            ]
        )


@pytest.mark.slow
@pytest.mark.parametrize("on_invalid", ["drop", "clip"])
def test_on_invalid_audit_sparse(on_invalid):
    """Black box on sparse X: invalid stored values in both neighbours, still ε-DP."""
    from dpsk.audit import audit

    result = audit(_SparseSumSampler(on_invalid), _neighbours(), epsilon=1.0, n_samples=4_000, random_state=0)
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_on_invalid_audit_rejects_a_screen_that_reads_other_records(monkeypatch):
    """Validity: a screen that is not a per-record map (NaN imputed with the largest valid
    value) moves the sum by every NaN record when one record is added; the audit rejects it."""
    from dpsk.audit import audit
    from dpsk.stats import _protocol

    honest = _protocol.screen_invalid

    def imputing(on_invalid, values, **kwargs):
        values = np.where(np.isnan(values), np.nanmax(np.where(np.isinf(values), np.nan, values)), values)
        return honest(on_invalid, values, **kwargs)

    monkeypatch.setattr(_protocol, "screen_invalid", imputing)
    result = audit(_SumSampler("clip"), _neighbours(), epsilon=1.0, n_samples=4_000, random_state=0)
    assert not result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_on_invalid_audit_sparse_rejects_a_screen_that_reads_other_records(monkeypatch):
    """Validity of the sparse audit: the same imputing screen, on the stored values."""
    import scipy.sparse as sp

    from dpsk.audit import audit
    from dpsk.stats import _protocol

    honest = _protocol.screen_invalid

    def imputing(on_invalid, values, **kwargs):
        data = values.data
        finite = data[np.isfinite(data)]
        data = np.where(np.isnan(data), finite.max(initial=0.0), data)
        return honest(on_invalid, sp.csr_matrix((data, values.indices, values.indptr), shape=values.shape), **kwargs)

    monkeypatch.setattr(_protocol, "screen_invalid", imputing)
    result = audit(_SparseSumSampler("clip"), _neighbours(), epsilon=1.0, n_samples=4_000, random_state=0)
    assert not result.passed, str(result)
