# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP k-means: accuracy, the fit protocol details, and the budget split settled by audits."""

import math
from fractions import Fraction

import numpy as np
import pytest
from sklearn.cluster import KMeans as SkKMeans
from sklearn.datasets import make_blobs

from dpsk.accounting import BudgetAccountant, LaplaceEvent, get_epsilon, record_releases
from dpsk.audit import audit, audit_estimator, canary_neighbours
from dpsk.cluster import KMeans
from dpsk.cluster._kmeans import su_split
from dpsk.exceptions import BudgetExceededError
from dpsk.mechanisms._joint import Box, JointRelease


def _inertia(X, centres):
    return float(((X[:, None, :] - centres[None]) ** 2).sum(axis=2).min(axis=1).sum())


@pytest.fixture(scope="module")
def blobs():
    X, _ = make_blobs(20_000, centers=4, n_features=5, random_state=0)
    return X


def test_close_to_scikit_learn_on_separated_blobs(blobs):
    reference = SkKMeans(4, n_init=10, random_state=0).fit(blobs).inertia_
    ratios = [
        _inertia(blobs, KMeans(4, epsilon=1.0, bounds=(-15, 15), random_state=seed).fit(blobs).cluster_centers_)
        / reference
        for seed in range(3)
    ]
    assert max(ratios) < 1.1, ratios


def test_huge_epsilon_with_public_init_is_lloyd(blobs):
    init = blobs[:4]
    ours = KMeans(4, epsilon=1e9, bounds=(-15, 15), init=init, max_iter=3, random_state=0).fit(blobs)
    reference = SkKMeans(4, init=init, n_init=1, max_iter=3, tol=0, algorithm="lloyd").fit(blobs)
    np.testing.assert_allclose(ours.cluster_centers_, reference.cluster_centers_, atol=1e-4)


def test_random_init_and_one_iteration_work(blobs):
    km = KMeans(4, epsilon=1.0, bounds=(-15, 15), init="random", max_iter=1, random_state=0).fit(blobs)
    assert km.cluster_centers_.shape == (4, 5) and len(km.privacy_spent_.flatten()) == 1
    assert np.all(np.abs(km.cluster_centers_) <= 15)


def test_no_labels_or_inertia_are_stored(blobs):
    km = KMeans(4, epsilon=1.0, bounds=(-15, 15), random_state=0)
    labels = km.fit_predict(blobs)
    assert not hasattr(km, "labels_") and not hasattr(km, "inertia_")
    np.testing.assert_array_equal(labels, km.predict(blobs))
    assert km.score(blobs) == pytest.approx(-_inertia(blobs, km.cluster_centers_), rel=1e-9)
    np.testing.assert_allclose(
        km.transform(blobs[:3]) ** 2, ((blobs[:3, None] - km.cluster_centers_) ** 2).sum(2), rtol=1e-9
    )
    assert list(km.get_feature_names_out()) == [f"kmeans{i}" for i in range(4)]


def test_centres_stay_in_the_bounds_and_float32_is_kept(blobs):
    km = KMeans(4, epsilon=0.01, bounds=(-2, 2), random_state=0).fit(blobs.astype(np.float32))
    assert km.cluster_centers_.dtype == np.float32
    assert np.all(np.abs(km.cluster_centers_) <= 2)


def test_float32_box_without_a_float32_value():
    """Check float32 timestamps in a one-hour box (which holds no float32 value: the spacing at
    1e12 is 65 536): the fit clips in float64, and spends once (it used to raise after the spend)."""
    X = (1e12 + np.arange(160).reshape(40, 4) * 10.0).astype(np.float32)
    accountant = BudgetAccountant(epsilon=10)
    km = KMeans(2, epsilon=1.0, bounds=(1e12, 1e12 + 3600.0), accountant=accountant, random_state=0).fit(X)
    assert km.cluster_centers_.dtype == np.float32 and len(accountant.spent_budget) == 1


def test_init_array_is_validated():
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match="init must have shape"):
        KMeans(3, bounds=(-1, 1), init=np.zeros((2, 2))).fit(X)
    with pytest.raises(ValueError, match="finite"):
        KMeans(2, bounds=(-1, 1), init=[[0, 0], [np.nan, 0]]).fit(X)


@pytest.mark.parametrize(
    "init, n_clusters, max_iter", [("summary", 8, 5), ("summary", 1, 2), ("random", 3, 4), ("array", 2, 3)]
)
@pytest.mark.parametrize("n_features", [1, 7])
def test_declared_passes_are_the_releases_made(init, n_clusters, max_iter, n_features):
    """Check the cost's structure: one release per pass, ε split as documented, total <= ε."""
    X = np.random.default_rng(0).uniform(-1, 1, (200, n_features))
    n_seeding = math.ceil(math.log2(4 * n_clusters)) if init == "summary" else 0
    init = np.zeros((n_clusters, n_features)) if init == "array" else init
    km = KMeans(n_clusters, epsilon=0.5, bounds=(-1, 1), init=init, max_iter=max_iter, random_state=0)
    with record_releases() as drawn:
        km.fit(X)
    leaves = km.privacy_spent_.flatten()
    assert sorted(map(repr, drawn)) == sorted(map(repr, leaves))
    assert len(leaves) == n_seeding + max_iter
    assert sum(Fraction(e.epsilon) for e in leaves) <= Fraction(0.5)
    # The last Lloyd iteration gets 30% of ε, the other passes equal parts of the rest.
    if len(leaves) > 1:
        assert leaves[-1].epsilon == pytest.approx(0.15, rel=1e-6)
        assert leaves[0].epsilon == pytest.approx(0.35 / (len(leaves) - 1), rel=1e-6)


def test_spends_exactly_its_budget():
    X = np.random.default_rng(0).uniform(-1, 1, (100, 3))
    accountant = BudgetAccountant(epsilon=1.0)
    km = KMeans(2, epsilon=1.0, bounds=(-1, 1), accountant=accountant, random_state=0).fit(X)
    assert get_epsilon(km.privacy_spent_, 0.0) <= 1.0
    assert accountant.total().epsilon <= 1.0
    with pytest.raises(BudgetExceededError):
        KMeans(2, epsilon=1e-3, bounds=(-1, 1), accountant=accountant, random_state=0).fit(X)


# --------------------------------------------------------------------------- the budget split

# Su et al.'s split, with ε_count : ε_coordinate = ∛(4dρ²) : 1 and the d coordinates of the
# sums summing to d·ε_coordinate. The leading library unpacks the pair in the wrong order,
# giving the count the coordinate's share and every coordinate the count's: its iterations
# then cost (1 + d·c)/(d + c) times their budget, c = ∛(4dρ²). dpsk's JointRelease
# normalises the shares it is given, so a split summing above one cannot overspend there;
# SwappedKMeans re-creates the leading library's situation (the swapped shares applied as
# given) to show that the audits would catch it.


def _swapped_split(n_features):
    count_share, sum_share = su_split(n_features)
    unit = count_share * n_features / sum_share  # ∛(4dρ²)
    normaliser = 1.0 / (n_features + unit)
    return normaliser, n_features * unit * normaliser  # sums to (1 + d·c)/(d + c)


class _SharesAsGiven(JointRelease):
    """A joint release that trusts its shares (no normalisation): the bug's precondition."""

    def __init__(self, sensitivities, shares, **kwargs):
        super().__init__(sensitivities, shares, **kwargs)
        self.weights = np.array([s / sens[0] for s, sens in zip(shares, sensitivities)]) * (1.0 - 1e-12)


class SwappedKMeans(KMeans):
    """k-means with the count and per-coordinate shares swapped, applied as given."""

    def _release(self, box, epsilon, rng):
        d = box.n_active
        return _SharesAsGiven(
            ((1.0, 1.0), (d, np.sqrt(d))), _swapped_split(d), epsilon=epsilon, delta=0.0, random_state=rng
        )


@pytest.mark.parametrize("d, expected", [(10, 1.2118), (50, 2.0928)])
def test_swapped_split_overspends_as_reported(d, expected):
    """Check the overspend of the swapped split: 1.2–2.1x at d >= 10 (derived from the formula)."""
    c = (4 * d * 0.225**2) ** (1 / 3)
    assert sum(_swapped_split(d)) == pytest.approx((1 + d * c) / (d + c), rel=1e-12)
    assert sum(_swapped_split(d)) == pytest.approx(expected, abs=1e-4)
    count_share, sum_share = su_split(d)
    assert count_share + sum_share == pytest.approx(1.0)
    assert count_share / (sum_share / d) == pytest.approx(c)
    # The vector released by the swapped variant has L1 sensitivity (1 + d·c)/(d + c), not 1.
    release = SwappedKMeans()._release(Box(-np.ones(d), np.ones(d)), 1.0, np.random.default_rng(0))
    assert release.weights[0] * 1 + release.weights[1] * d == pytest.approx(expected, abs=1e-4)


def _coordinate_sampler(estimator_cls, n_features, epsilon):
    """One Lloyd release of the estimator's own split, vectorised: coordinate 0 of cluster 0's Σz."""
    box = Box(-np.ones(n_features), np.ones(n_features))

    def sampler(shift, size, rng):
        release = estimator_cls()._release(box, epsilon, rng)
        sums = np.zeros((size, n_features))
        sums[:, 0] = shift
        return release.randomise([np.zeros(size), sums])[1][:, 0]

    return sampler


@pytest.mark.audit
@pytest.mark.parametrize("n_features", [10, 50])
@pytest.mark.parametrize("cls", [KMeans, SwappedKMeans], ids=["correct", "swapped"])
def test_audit_settles_the_split_per_coordinate(cls, n_features):
    """Check that one coordinate of the sums costs its share, ε_t/(d + c); the swapped split fails.

    A row moves each coordinate of its cluster's Σz by at most 1; under the split each
    coordinate must then be ε_t·(sum share)/d-DP. The release is KMeans's own (its
    ``_release`` and ``_budget_split``), vectorised over the audit's runs.
    """
    count_share, sum_share = su_split(n_features)
    per_coordinate = math.log(3)  # ε of one coordinate: the audit's best-calibrated regime
    epsilon = per_coordinate * n_features / sum_share
    sampler = _coordinate_sampler(cls, n_features, epsilon)
    claim = LaplaceEvent(1.0 / per_coordinate)
    result = audit(sampler, (0.0, 1.0), event=claim, n_samples=200_000, random_state=0)
    assert result.passed == (cls is KMeans), str(result)


def _project_coordinate(est):
    """Coordinate 0 of the noisy Σz of the only cluster, from the public centre and size."""
    return est.cluster_centers_[0, 0] * max(est.cluster_sizes_[0], 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [KMeans, SwappedKMeans], ids=["correct", "swapped"])
@pytest.mark.extended
def test_estimator_audit_rejects_the_swapped_split_at_50_features(cls):
    """Check the same through the estimator's public output (black box), at d = 50."""
    d = 50
    count_share, sum_share = su_split(d)
    per_coordinate = math.log(3)
    params = dict(
        n_clusters=1, epsilon=per_coordinate * d / sum_share, bounds=(-1.0, 1.0), init=np.zeros((1, d)), max_iter=1
    )
    canary = np.zeros(d)
    canary[0] = 4.0  # clipped to the corner of coordinate 0
    neighbours = canary_neighbours(np.zeros((100, d)), canary_X=canary)
    result = audit(
        _estimator_sampler(cls(**params)),
        neighbours,
        event=LaplaceEvent(1.0 / per_coordinate),
        n_samples=4_000,
        random_state=0,
    )
    assert result.passed == (cls is KMeans), str(result)


def _estimator_sampler(estimator):
    from dpsk.audit import estimator_sampler

    return estimator_sampler(estimator, _project_coordinate)


def test_audit_estimator_runs_on_kmeans():
    """Check the ESTIMATOR_AUDITS configuration end to end on a smaller sample (smoke test)."""
    est = KMeans(1, epsilon=2.0, bounds=(-1.0, 1.0), init=[[0.0]], max_iter=1)
    neighbours = canary_neighbours(np.zeros((50, 1)), canary_X=[4.0])
    result = audit_estimator(est, neighbours, lambda e: e.cluster_centers_[0, 0], n_samples=500, random_state=0)
    assert result.passed


def test_infinite_epsilon_with_a_given_init_is_exact():
    """Check epsilon=inf adds no noise: with public starting centres the fit no longer depends on the seed
    (the common check cannot show it: the default seeding is random, public randomness)."""
    X = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    init = np.array([[-0.5, -0.5], [0.5, 0.5]])
    fits = [
        KMeans(n_clusters=2, init=init, epsilon=math.inf, bounds=(-1, 1), random_state=seed).fit(X)
        for seed in (0, 1, 2)
    ]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.cluster_centers_, fits[0].cluster_centers_)
    assert math.isinf(get_epsilon(fits[0].privacy_spent_, 0.5))
