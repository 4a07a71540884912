# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""A Dask fit gives bitwise the in-memory statistics and model, for any chunking.

Both fits draw their noise from fresh copies of the same bit generator, so any
difference comes from the statistics: the per-chunk exact sums must merge exactly. The
data are adversarial for floating-point sums: a large common offset and values that
cancel, so that summing rounded per-chunk partials would depend on the chunking
(:func:`test_the_data_catch_a_rounded_merge` checks that it would).
"""

import numpy as np
import pytest

from dpsk import stats
from dpsk._core._exact_sums import exact_moments
from dpsk.linear_model import LinearRegression, Ridge
from dpsk.naive_bayes import GaussianNB
from dpsk.preprocessing import MinMaxScaler, StandardScaler

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

N, D = 1500, 3
OFFSET = 1e6
BOUNDS = (OFFSET - 4.0, OFFSET + 4.0)
#: 1 chunk, 7 chunks, 63 chunks, ragged chunks (a one-row and an empty chunk among them).
CHUNKINGS = [(N,), (215,) * 6 + (N - 6 * 215,), (24,) * 62 + (N - 62 * 24,), (1, 2, 0, 997, 500)]


def _chunkings():
    assert all(sum(chunks) == N for chunks in CHUNKINGS)
    return CHUNKINGS


def _data(dtype=np.float64):
    rng = np.random.default_rng(3)
    # Offset values that cancel: +-3.999... pairs around the offset, plus small noise.
    signs = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)[:, None]
    X = OFFSET + signs * 3.9999999 + rng.normal(scale=1e-3, size=(N, D))
    X[::97] = OFFSET + 50.0  # outside the bounds: clipped
    y = X @ np.array([1.0, -2.0, 0.5]) - OFFSET * -0.5 + rng.normal(size=N)
    labels = (rng.random(N) < 0.4).astype(int)
    weights = rng.uniform(0.0, 1.5, size=N)  # above 1 clipped to 1
    return X.astype(dtype), y, labels, weights


def _rng():
    return np.random.Generator(np.random.PCG64(2024))


def _dask(values, chunks):
    values = np.asarray(values)
    return da.from_array(values, chunks=(chunks,) + tuple((s,) for s in values.shape[1:]))


def _assert_same_values(lazy, expected, scale=None):
    """Lazy predictions: the same model applied per chunk (a matrix product's rounding may
    depend on the block's size in BLAS, so equal up to a few ulps, not bitwise). ``scale``:
    the largest sum of absolute terms (rounding is relative to it, not to the result, where
    the terms cancel); by default the largest expected value."""
    expected = np.asarray(expected)
    assert isinstance(lazy, np.ndarray) and lazy.shape == expected.shape and lazy.dtype == expected.dtype
    if scale is None:
        scale = float(np.max(np.abs(expected), initial=1.0))
    np.testing.assert_allclose(lazy, expected, rtol=1e-12, atol=1e-12 * scale)


def _assert_same_fit(a, b, attributes):
    for name in attributes:
        x, y = getattr(a, name), getattr(b, name)
        assert np.asarray(x).dtype == np.asarray(y).dtype, name
        assert np.array_equal(x, y), f"{name}: {x} != {y}"
    assert a.privacy_spent_ == b.privacy_spent_


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
def test_standard_scaler(chunks, dtype, weighted):
    X, _, _, w = _data(dtype)
    weights = w if weighted else None
    dweights = _dask(w, chunks) if weighted else None
    a = StandardScaler(bounds=BOUNDS, random_state=_rng()).fit(X, sample_weight=weights)
    b = StandardScaler(bounds=BOUNDS, random_state=_rng()).fit(_dask(X, chunks), sample_weight=dweights)
    _assert_same_fit(a, b, ["mean_", "var_", "scale_", "n_samples_seen_"])
    out = b.transform(_dask(X, chunks))
    assert isinstance(out, da.Array)
    _assert_same_values(out.compute(), a.transform(X))


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
@pytest.mark.parametrize("weighted", [False, True])
def test_min_max_scaler(chunks, weighted):
    X, _, _, w = _data()
    a = MinMaxScaler(bounds=BOUNDS, bins=8, random_state=_rng()).fit(X, sample_weight=w if weighted else None)
    b = MinMaxScaler(bounds=BOUNDS, bins=8, random_state=_rng())
    b.fit(_dask(X, chunks), sample_weight=_dask(w, chunks) if weighted else None)
    _assert_same_fit(a, b, ["histogram_", "data_min_", "data_max_", "scale_", "min_"])
    _assert_same_values(b.transform(_dask(X, chunks)).compute(), a.transform(X))


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
def test_gaussian_nb(chunks):
    X, _, labels, w = _data()
    params = dict(bounds=BOUNDS, classes=[0, 1])
    a = GaussianNB(**params, random_state=_rng()).fit(X, labels, sample_weight=w)
    b = GaussianNB(**params, random_state=_rng()).fit(_dask(X, chunks), _dask(labels, chunks), _dask(w, chunks))
    _assert_same_fit(a, b, ["theta_", "var_", "class_count_", "class_prior_", "classes_"])


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
@pytest.mark.parametrize(
    "estimator",
    [
        LinearRegression(bounds_X=BOUNDS, bounds_y=(OFFSET / 2 - 20, OFFSET / 2 + 20)),
        LinearRegression(bounds_X=BOUNDS, bounds_y=(OFFSET / 2 - 20, OFFSET / 2 + 20), fit_intercept=False),
        LinearRegression(bounds_X=BOUNDS, bounds_y=(OFFSET / 2 - 20, OFFSET / 2 + 20), row_norm=5.0, delta=1e-6),
        Ridge(alpha=3.0, bounds_X=BOUNDS, bounds_y=(OFFSET / 2 - 20, OFFSET / 2 + 20)),
    ],
    ids=["ols", "no-intercept", "row-norm-gaussian", "ridge"],
)
def test_least_squares(chunks, estimator):
    X, y, _, w = _data()
    a = estimator.set_params(random_state=_rng()).fit(X, y, sample_weight=w)
    coef, intercept, spent = a.coef_, a.intercept_, a.privacy_spent_
    b = estimator.set_params(random_state=_rng()).fit(
        _dask(X, chunks), _dask(y, chunks), sample_weight=_dask(w, chunks)
    )
    assert np.array_equal(coef, b.coef_) and intercept == b.intercept_ and spent == b.privacy_spent_
    pred = b.predict(_dask(X, chunks))
    assert isinstance(pred, da.Array)
    _assert_same_values(pred.compute(), b.predict(X))


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
def test_least_squares_several_targets(chunks):
    X, y, _, _ = _data()
    Y = np.column_stack([y, -y])
    params = dict(bounds_X=BOUNDS, bounds_y=(-OFFSET, OFFSET))
    a = LinearRegression(**params, random_state=_rng()).fit(X, Y)
    b = LinearRegression(**params, random_state=_rng()).fit(_dask(X, chunks), _dask(Y, chunks))
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    terms = np.abs(X) @ np.abs(a.coef_).T + np.abs(a.intercept_)  # noisy coefficients may cancel
    _assert_same_values(b.predict(_dask(X, chunks)).compute(), a.predict(X), scale=float(terms.max()))


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
@pytest.mark.parametrize("function", [stats.sum, stats.mean, stats.var, stats.std])
def test_stats(chunks, function):
    X, _, _, _ = _data()
    for delta in (0.0, 1e-6):
        a = function(X, bounds=BOUNDS, axis=0, delta=delta, random_state=_rng(), return_error=True)
        b = function(_dask(X, chunks), bounds=BOUNDS, axis=0, delta=delta, random_state=_rng(), return_error=True)
        assert np.array_equal(a.value, b.value) and np.array_equal(a.noise_std, b.noise_std)
        assert a.privacy_spent == b.privacy_spent
    # one column, axis=None
    a = function(X[:, 0], bounds=BOUNDS, random_state=_rng())
    b = function(_dask(X[:, 0], chunks), bounds=BOUNDS, random_state=_rng())
    assert a == b


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
def test_count(chunks):
    X, _, _, _ = _data()
    assert np.array_equal(
        stats.count(X, axis=0, random_state=_rng()), stats.count(_dask(X, chunks), axis=0, random_state=_rng())
    )


def test_data_frames():
    """A Dask DataFrame's columns are the features: names are kept, bounds may be keyed by them."""
    pd = pytest.importorskip("pandas")
    X, y, _, _ = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    dframe = dd.from_pandas(frame, npartitions=5)
    bounds = {"a": BOUNDS, "b": BOUNDS, "c": BOUNDS}
    a = StandardScaler(bounds=bounds, random_state=_rng()).fit(frame)
    b = StandardScaler(bounds=bounds, random_state=_rng()).fit(dframe)
    _assert_same_fit(a, b, ["mean_", "var_", "feature_names_in_"])
    _assert_same_values(b.transform(dframe).compute(), a.transform(frame))
    lr = dict(bounds_X=bounds, bounds_y=(OFFSET / 2 - 20, OFFSET / 2 + 20))
    a = LinearRegression(**lr, random_state=_rng()).fit(frame, y)
    b = LinearRegression(**lr, random_state=_rng()).fit(dframe, dd.from_pandas(pd.Series(y), npartitions=5))
    assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(
        stats.mean(frame, bounds=bounds, axis=0, random_state=_rng()).to_numpy(),
        stats.mean(dframe, bounds=bounds, axis=0, random_state=_rng()),
    )


def test_integer_seed_reproducible_and_chunking_invariant():
    """With an int seed the Dask fit's stream is keyed by the exact statistics: the same for
    every chunking (and so the same model), another for other data."""
    X, _, _, _ = _data()
    fits = [StandardScaler(bounds=BOUNDS, random_state=5).fit(_dask(X, c)).mean_ for c in _chunkings()]
    assert all(np.array_equal(fits[0], f) for f in fits[1:])
    other = StandardScaler(bounds=BOUNDS, random_state=5).fit(_dask(X[1:], N - 1)).mean_
    assert not np.array_equal(fits[0], other)


def test_the_data_catch_a_rounded_merge():
    """Validity of the equality tests: merging per-chunk *rounded* sums (a naive combine)
    gives other values than the exact merge on these data, for these chunkings."""
    X, _, _, _ = _data()
    lower, upper = np.full(D, BOUNDS[0]), np.full(D, BOUNDS[1])
    whole = exact_moments(X, lower, upper)
    exact = whole.round(whole.about(np.zeros(D))[1][0])  # Σ clip(x), rounded once
    differs = 0
    for chunks in _chunkings()[1:]:
        parts = np.split(X, np.cumsum(chunks)[:-1])
        naive = np.zeros(D)
        for part in parts:
            m = exact_moments(part, lower, upper)
            naive += m.round(m.about(np.zeros(D))[1][0])
        differs += not np.array_equal(naive, exact)
    assert differs >= 2


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
def test_merged_statistics_are_the_in_memory_integers(chunks):
    """The statistics themselves (exact integers), not only the released floats (whose one
    rounding could hide a small error in a merge): a rounded merge fails here."""
    import functools

    from dpsk.dask._fit import _moments_chunk
    from dpsk.dask._reduce import map_reduce

    X, y, labels, w = _data()
    lower, upper = np.full(D, BOUNDS[0]), np.full(D, BOUNDS[1])
    whole = exact_moments(X, lower, upper)
    merged = map_reduce(functools.partial(_moments_chunk, lower, upper), _dask(X, chunks))
    for name in ("count", "sum_q", "sum_q2"):
        assert np.array_equal(getattr(whole, name), getattr(merged, name)), name
    # the Gram of a weighted least-squares fit, through the estimator's own statistic method
    est = LinearRegression(bounds_X=BOUNDS, bounds_y=(OFFSET / 2 - 20, OFFSET / 2 + 20))
    centre = np.full(D, OFFSET)
    target = (np.array([OFFSET / 2 - 20]), np.array([OFFSET / 2 + 20]), np.array([OFFSET / 2]), np.array([20.0]))
    half = np.full(D, 4.0)
    weights = np.minimum(w, 1.0)
    expected = est._exact_sums(X, y[:, None], lower, upper, centre, half, target, weights)
    from dpsk.dask._fit import _least_squares_chunk

    chunk = functools.partial(_least_squares_chunk, est, lower, upper, centre, half, target, None)
    got = map_reduce(chunk, _dask(X, chunks), _dask(y, chunks), _dask(w, chunks))
    assert got.count == expected.count and got.weight_scale == expected.weight_scale
    assert np.array_equal(got.total, expected.total) and np.array_equal(got.gram, expected.gram)


@pytest.mark.parametrize("chunks", _chunkings()[1:3], ids=len)
@pytest.mark.parametrize("init", ["summary", "random"])
def test_kmeans_one_map_reduce_per_pass(chunks, init):
    from dpsk.cluster import KMeans

    X, _, labels, w = _data()
    X = X + 6.0 * labels[:, None]  # two groups
    params = dict(n_clusters=2, bounds=(OFFSET - 4, OFFSET + 12), init=init, max_iter=3)
    a = KMeans(**params, random_state=_rng()).fit(X, sample_weight=w)
    b = KMeans(**params, random_state=_rng()).fit(_dask(X, chunks), sample_weight=_dask(w, chunks))
    _assert_same_fit(a, b, ["cluster_centers_", "cluster_sizes_"])
    _assert_same_values(b.predict(_dask(X, chunks)).compute(), a.predict(X))
    _assert_same_values(b.transform(_dask(X, chunks)).compute(), a.transform(X))
    # an integer seed: reproducible across chunkings (keyed by the exact moments)
    c = KMeans(**params, random_state=9).fit(_dask(X, chunks)).cluster_centers_
    assert np.array_equal(c, KMeans(**params, random_state=9).fit(_dask(X, N)).cluster_centers_)


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
def test_histograms(chunks):
    X, _, _, _ = _data()
    cases = [
        (stats.histogram, X[:, 0], dict(bins=16, range=BOUNDS)),
        (stats.histogram, X, dict(bins=[OFFSET - 5, OFFSET, OFFSET + 0.5, OFFSET + 60])),
        (stats.histogramdd, X[:, :2], dict(bins=3, range=[BOUNDS, BOUNDS], density=True)),
    ]
    for function, values, params in cases:
        a, edges_a = function(values, **params, random_state=_rng(), return_error=True)
        b, edges_b = function(_dask(values, chunks), **params, random_state=_rng(), return_error=True)
        assert np.array_equal(a.value, b.value) and a.privacy_spent == b.privacy_spent
        assert all(np.array_equal(e, f) for e, f in zip(np.atleast_2d(edges_a), np.atleast_2d(edges_b)))


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
@pytest.mark.parametrize("weighted", [False, True])
def test_bernoulli_nb(chunks, weighted):
    from dpsk.naive_bayes import BernoulliNB

    X, _, labels, w = _data()
    params = dict(classes=[0, 1], binarize=OFFSET)
    weights = w if weighted else None
    a = BernoulliNB(**params, random_state=_rng()).fit(X, labels, sample_weight=weights)
    b = BernoulliNB(**params, random_state=_rng())
    b.fit(_dask(X, chunks), _dask(labels, chunks), sample_weight=_dask(w, chunks) if weighted else None)
    _assert_same_fit(a, b, ["class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_"])
    _assert_same_values(b.predict_proba(_dask(X, chunks)).compute(), a.predict_proba(X))


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
@pytest.mark.parametrize(
    "params",
    [
        dict(bounds=BOUNDS),
        dict(bounds=BOUNDS, centered=True, delta=1e-6),
        dict(data_norm=2.0 * OFFSET),
    ],
    ids=["box", "centered-gaussian", "ball"],
)
def test_pca(chunks, params):
    from dpsk.decomposition import PCA

    X, _, _, w = _data()
    a = PCA(n_components=2, **params, random_state=_rng()).fit(X, sample_weight=w)
    b = PCA(n_components=2, **params, random_state=_rng()).fit(_dask(X, chunks), sample_weight=_dask(w, chunks))
    _assert_same_fit(a, b, ["components_", "explained_variance_", "mean_", "singular_values_"])
    _assert_same_values(b.transform(_dask(X, chunks)).compute(), a.transform(X))


@pytest.mark.parametrize("chunks", _chunkings(), ids=len)
@pytest.mark.parametrize("weighted", [False, True])
def test_categorical_nb(chunks, weighted):
    from dpsk.naive_bayes import CategoricalNB

    _, _, labels, w = _data()
    codes = np.random.default_rng(5).integers(0, 4, size=(N, D)).astype(np.float64)
    codes[::41, 1] = 9.0  # outside the public domain: counted nowhere
    params = dict(classes=[0, 1], n_categories=[4, 5, 4])
    weights = w if weighted else None
    a = CategoricalNB(**params, random_state=_rng()).fit(codes, labels, sample_weight=weights)
    b = CategoricalNB(**params, random_state=_rng())
    b.fit(_dask(codes, chunks), _dask(labels, chunks), sample_weight=_dask(w, chunks) if weighted else None)
    for x, y in zip(a.category_count_, b.category_count_):
        assert np.array_equal(x, y)
    assert a.privacy_spent_ == b.privacy_spent_
    _assert_same_values(b.predict_proba(_dask(codes, chunks)).compute(), a.predict_proba(codes))


def test_scores_are_reduced_on_dask():
    """``score`` on Dask input: the in-memory R² / accuracy, from Dask reductions."""
    X, y, labels, w = _data()
    lr = dict(bounds_X=BOUNDS, bounds_y=(OFFSET / 2 - 20, OFFSET / 2 + 20))
    model = LinearRegression(**lr, random_state=0).fit(X, y)
    classifier = GaussianNB(bounds=BOUNDS, classes=[0, 1], random_state=0).fit(X, labels)
    for chunks in _chunkings()[1:]:
        Xd, yd, ld, wd = _dask(X, chunks), _dask(y, chunks), _dask(labels, chunks), _dask(w, chunks)
        for weights, dweights in ((None, None), (w, wd)):
            assert model.score(Xd, yd, dweights) == pytest.approx(model.score(X, y, weights), rel=1e-12)
            assert classifier.score(Xd, ld, dweights) == pytest.approx(classifier.score(X, labels, weights), rel=1e-12)
