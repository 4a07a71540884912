# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP PCA: the ε → ∞ limit, clipping geometry and sensitivities, both noise methods, the API."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.decomposition import PCA as SkPCA

from dpsk.accounting import BudgetAccountant, CalibratedEvent, GaussianEvent, PureDPEvent, ZCDPEvent, record_releases
from dpsk.audit import audit, estimator_sampler
from dpsk.decomposition import PCA
from dpsk.decomposition._pca import _Geometry
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.utils._testing.family import AUDITS, PCA_L1_AUDIT, PCAEpsilonX2, PCAL1NoClipping


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 4)) * [3.0, 2.0, 1.0, 0.5] @ np.linalg.qr(rng.normal(size=(4, 4)))[0] + [
        1.0,
        -1.0,
        0.0,
        2.0,
    ]
    return X


def _subspace_match(A, B):
    """|cos| of the principal angles between the row spaces of A and B (1 = same subspace)."""
    return np.linalg.svd(A @ B.T, compute_uv=False)


@pytest.mark.parametrize(
    "params", [dict(bounds=(-20, 20)), dict(data_norm=30.0), dict(bounds=(-20, 20), data_norm=30.0)]
)
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_huge_epsilon_matches_scikit_learn(data, params, delta):
    # l1_norm=None: the private L1 clip of the pure-ε default clips some rows on purpose.
    ours = PCA(3, epsilon=1e9, delta=delta, l1_norm=None, random_state=0, **params).fit(data)
    reference = SkPCA(3).fit(data)
    np.testing.assert_allclose(np.abs(np.sum(ours.components_ * reference.components_, axis=1)), 1.0, atol=1e-6)
    np.testing.assert_allclose(ours.explained_variance_, reference.explained_variance_, rtol=1e-5)
    np.testing.assert_allclose(ours.explained_variance_ratio_, reference.explained_variance_ratio_, rtol=1e-5)
    np.testing.assert_allclose(ours.singular_values_, reference.singular_values_, rtol=1e-5)
    np.testing.assert_allclose(ours.mean_, reference.mean_, atol=1e-5)
    np.testing.assert_allclose(np.abs(ours.transform(data)), np.abs(reference.transform(data)), atol=1e-4)
    assert ours.noise_variance_ == pytest.approx(reference.noise_variance_, rel=1e-4)


@pytest.mark.parametrize("delta, event_type", [(0.0, PureDPEvent), (1e-6, CalibratedEvent)])
def test_private_subspace_is_close_at_epsilon_one(data, delta, event_type):
    with record_releases() as drawn:
        ours = PCA(2, epsilon=1.0, delta=delta, data_norm=15.0, l1_norm=None, random_state=0).fit(data)
    assert drawn == [ours.privacy_spent_] and isinstance(drawn[0], event_type)
    if delta:  # zCDP noise, calibrated for the δ asked for
        assert isinstance(drawn[0].event, ZCDPEvent)
    assert _subspace_match(ours.components_, SkPCA(2).fit(data).components_).min() > 0.99


def test_centered_uses_the_origin_and_releases_no_sum(data):
    X = data - data.mean(axis=0)
    with record_releases() as drawn:
        ours = PCA(2, epsilon=1e9, centered=True, bounds=(-20, 20), l1_norm=None, random_state=0).fit(X)
    assert len(drawn) == 1
    np.testing.assert_array_equal(ours.mean_, 0.0)
    np.testing.assert_allclose(np.abs(np.sum(ours.components_ * SkPCA(2).fit(X).components_, axis=1)), 1, atol=1e-6)


def test_geometry_picks_the_cheaper_centre():
    lower, upper = np.array([-1.0, -1.0]), np.array([3.0, 1.0])
    box = _Geometry(lower, upper, None, 2)  # box only: about the midpoint, half-widths (2, 1)
    np.testing.assert_array_equal(box.centre, [1.0, 0.0])
    assert box.l2 == pytest.approx(math.sqrt(5)) and box.l1 == pytest.approx(3.0)
    ball = _Geometry(None, None, 2.0, 2)  # ball only: about the origin
    assert ball.l2 == 2.0 and ball.l1 == pytest.approx(2 * math.sqrt(2))
    np.testing.assert_array_equal(ball.centre, 0.0)
    both = _Geometry(lower, upper, 2.0, 2)  # ball (2) smaller than the box (√5): origin
    assert both.l2 == 2.0 and np.all(both.centre == 0.0)
    both = _Geometry(lower, upper, 5.0, 2)  # box smaller, and it contains the origin: midpoint
    assert both.l2 == pytest.approx(math.sqrt(5)) and both.centre[0] == 1.0
    away = _Geometry(np.array([1.0, 1.0]), np.array([2.0, 2.0]), 5.0, 2)  # box without the origin
    np.testing.assert_array_equal(away.centre, 0.0)  # scaling towards 0 may leave the box
    assert away.l2 == pytest.approx(math.sqrt(8))
    fixed = _Geometry(lower, upper, None, 2, allow_midpoint=False)  # centered=True
    np.testing.assert_array_equal(fixed.centre, 0.0)
    assert fixed.l2 == pytest.approx(math.sqrt(10))


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 6), elements=st.floats(-1e3, 1e3)))
def test_sensitivity_of_the_upper_triangle(y):
    """Check the stated bounds: ‖triu(yyᵀ)‖₂ <= ‖y‖₂² and ‖triu(yyᵀ)‖₁ = (‖y‖₁² + ‖y‖₂²)/2."""
    triangle = np.outer(y, y)[np.triu_indices(y.size)]
    l2 = float(np.sum(y * y))
    assert np.linalg.norm(triangle) <= l2 * (1 + 1e-12) + 1e-300
    assert np.abs(triangle).sum() == pytest.approx((np.abs(y).sum() ** 2 + l2) / 2, rel=1e-9, abs=1e-12)


def test_rows_are_clipped_to_the_ball():
    X = np.array([[100.0, 0.0], [0.0, 1.0], [-100.0, 0.0], [0.0, -1.0]])
    ours = PCA(2, epsilon=1e9, data_norm=1.0, random_state=0).fit(X)
    np.testing.assert_allclose(ours.explained_variance_, [2 / 3, 2 / 3], rtol=1e-5)  # all rows on the unit circle


def test_whiten_inverse_transform_and_feature_names(data):
    pca = PCA(2, epsilon=1e9, whiten=True, bounds=(-20, 20), l1_norm=None, random_state=0).fit(data)
    Z = pca.transform(data)
    np.testing.assert_allclose(Z.var(axis=0, ddof=1), 1.0, rtol=1e-3)
    full = PCA(4, epsilon=1e9, bounds=(-20, 20), l1_norm=None, random_state=0).fit(data)
    np.testing.assert_allclose(full.inverse_transform(full.transform(data)), data, atol=1e-6)
    assert list(pca.get_feature_names_out()) == ["pca0", "pca1"]


def test_n_components_as_a_fraction_and_errors(data):
    pca = PCA(0.9, epsilon=1e9, bounds=(-20, 20), random_state=0).fit(data)
    ratios = np.cumsum(SkPCA().fit(data).explained_variance_ratio_)
    assert pca.n_components_ == np.searchsorted(ratios, 0.9) + 1
    with pytest.raises(ValueError, match="n_components=5 must be <= n_features=4"):
        PCA(5, bounds=(-1, 1)).fit(data)


def test_float32_is_kept(data):
    pca = PCA(2, epsilon=1.0, bounds=(-20, 20), random_state=0).fit(data.astype(np.float32))
    assert pca.components_.dtype == np.float32 and pca.transform(data.astype(np.float32)).dtype == np.float32


#: float32 UNIX-like timestamps in a one-hour box: float32's spacing at 1e12 is 65 536, so the
#: box holds no float32 value (the kernels, which clip in X's dtype, have nothing to clip to).
TIMESTAMPS_F32 = (1e12 + np.arange(160).reshape(40, 4) * 10.0).astype(np.float32)
ONE_HOUR = (1e12, 1e12 + 3600.0)


@pytest.mark.parametrize(
    "params",
    [{}, {"data_norm": 5000.0}, {"l1_norm": 100.0}, {"delta": 1e-6, "data_norm": 5000.0}, {"bounds": None}],
    ids=["auto-l1", "ball", "public-l1", "gaussian", "private-box"],
)
def test_float32_box_without_a_float32_value(params):
    """Check a float32 fit whose box holds no float32 value: it fits (the kernels read X in
    float64), keeps float32 out, and spends once, what it declares (it used to raise after
    the spend); with a public box it is the float64 fit of the same values."""
    params = {"bounds": ONE_HOUR, **params}
    accountant = BudgetAccountant(epsilon=10, delta=1e-3)
    pca = PCA(2, epsilon=1.0, accountant=accountant, random_state=0, **params).fit(TIMESTAMPS_F32)
    assert pca.components_.dtype == np.float32
    assert len(accountant.spent_budget) == 1
    if params["bounds"] is not None:
        reference = PCA(2, epsilon=1.0, random_state=0, **params).fit(TIMESTAMPS_F32.astype(np.float64))
        np.testing.assert_array_equal(pca.components_, reference.components_.astype(np.float32))


def test_data_derived_norm_warns(data):
    with pytest.warns(PrivacyLeakWarning, match="data_norm"):
        pca = PCA(2, data_norm="data").fit(data)
    assert pca.data_norm_ == pytest.approx(np.linalg.norm(data, axis=1).max())


def test_both_bounds_clip_to_the_box_then_the_ball():
    X = np.array([[10.0, 0.0], [0.0, 10.0], [-10.0, 0.0], [0.0, -10.0]])
    ours = PCA(2, epsilon=1e9, bounds=(-2.0, 2.0), data_norm=1.0, random_state=0).fit(X)
    np.testing.assert_allclose(ours.explained_variance_, [2 / 3, 2 / 3], rtol=1e-5)


# ------------------------------------------------------ privacy of the Gaussian method
# The declared event of Analyze Gauss is zCDP (vector lattice Gaussian noise). The noise
# itself is Gaussian with σ = Δ₂/√(2ρ): its exact profile is the Gaussian one with that
# multiplier, which the audit can test along the whole curve (dpsk.audit has no zCDP profile).


def _gaussian_claim(estimator, neighbours):
    fitted = estimator.set_params(random_state=0).fit(**neighbours[0])
    return GaussianEvent(1.0 / math.sqrt(2.0 * fitted.privacy_spent_.event.rho))


@pytest.mark.parametrize(
    "cls",
    [PCA, pytest.param(PCAEpsilonX2, marks=[pytest.mark.slow, pytest.mark.extended])],
    ids=["correct", "epsilon_x2"],
)
@pytest.mark.audit
def test_gaussian_method_audit(cls):
    config = AUDITS["PCA"]
    params = {**config.params, "delta": 1e-5}
    neighbours = config.neighbours()
    claim = _gaussian_claim(PCA(**params), neighbours)
    # 3000 runs are at the edge of the power needed to reject the broken variant (measured:
    # it passed on 1 of audit seeds 0-6 before integer seeds were derived per release, 3
    # of 0-8 after); 6000 runs rejected it on audit seeds 0-3.
    n_samples = 3_000 if cls is PCA else 6_000
    result = audit(
        estimator_sampler(cls(**params), config.projection),
        neighbours,
        event=claim,
        n_samples=n_samples,
        random_state=0,
    )
    assert result.passed == (cls is PCA), str(result)


# ----------------------------------------------------------------- probabilistic PCA interface


@pytest.mark.parametrize("n_components, whiten", [(2, False), (2, True), (4, False)])
def test_probabilistic_pca_matches_scikit_learn_at_infinite_epsilon(n_components, whiten):
    """Check score, score_samples, get_covariance and get_precision against scikit-learn's
    formulas: at epsilon=inf the released model is the exact one (up to the 2**-20 grid)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4)) @ rng.normal(size=(4, 4)) * 0.2
    ours = PCA(n_components=n_components, whiten=whiten, epsilon=math.inf, bounds=(-5, 5)).fit(X)
    theirs = SkPCA(n_components=n_components, whiten=whiten).fit(X)
    np.testing.assert_allclose(ours.get_covariance(), theirs.get_covariance(), atol=1e-6)
    np.testing.assert_allclose(ours.get_precision(), theirs.get_precision(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.score_samples(X[:20]), theirs.score_samples(X[:20]), rtol=1e-4)
    assert ours.score(X) == pytest.approx(theirs.score(X), rel=1e-5)


@pytest.mark.parametrize("n_components", [1, 3])
def test_probabilistic_pca_is_consistent_on_a_noisy_model(n_components):
    """The precision inverts the covariance and scoring spends nothing (post-processing)."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (300, 3))
    acc = BudgetAccountant()
    pca = PCA(n_components=n_components, epsilon=1.0, bounds=(-1, 1), accountant=acc, random_state=0).fit(X)
    spends = len(acc)
    np.testing.assert_allclose(pca.get_precision() @ pca.get_covariance(), np.eye(3), atol=1e-8)
    assert np.all(np.isfinite(pca.score_samples(X)))
    assert pca.score(X) == pytest.approx(pca.score_samples(X).mean())
    assert len(acc) == spends


def _one_hot_rows(n, groups=6, levels=6, seed=0):
    """Rows of ``groups`` one-hot blocks (‖x‖₁ = groups, ‖x‖₂ = √groups), with correlated levels."""
    rng = np.random.default_rng(seed)
    latent = rng.integers(0, levels, size=n)
    X = np.zeros((n, groups * levels))
    for g in range(groups):
        level = np.where(rng.random(n) < 0.6, latent, rng.integers(0, levels, size=n))
        X[np.arange(n), g * levels + level] = 1.0
    return X


def test_auto_l1_norm_rule_uses_public_parameters_only(data):
    """ "auto": a private L1 clip for pure ε from 4 features on, none with δ > 0 or fewer features."""
    acc = BudgetAccountant(epsilon=5.0)
    pure = PCA(2, epsilon=1.0, data_norm=15.0, accountant=acc, random_state=0).fit(data)
    assert pure.l1_norm_ is not None and pure.l1_norm_ < 2 * 15.0  # tighter than √d · data_norm
    frame = acc.to_frame()
    assert len(frame) == 1 and "private l1_norm: 10% of ε" in str(frame["label"].iloc[0])
    assert sum(e.epsilon for e in pure.privacy_spent_.events) == pytest.approx(1.0)
    gauss = PCA(2, epsilon=1.0, delta=1e-6, data_norm=15.0, random_state=0).fit(data)
    assert gauss.l1_norm_ is None
    three = PCA(2, epsilon=1.0, data_norm=15.0, random_state=0).fit(data[:, :3])
    assert three.l1_norm_ is None and isinstance(three.privacy_spent_, PureDPEvent)


def test_l1_norm_private_records_one_event(data):
    with record_releases() as drawn:
        pca = PCA(2, epsilon=1.0, bounds=(-20, 20), l1_norm="private", random_state=0).fit(data)
    assert drawn == list(pca.privacy_spent_.events)  # the L1 quantile, then the fit: one composed spend
    again = PCA(2, epsilon=1.0, bounds=(-20, 20), l1_norm="private", random_state=0).fit(data)
    np.testing.assert_array_equal(again.components_, pca.components_)  # reproducible from the seed


@pytest.mark.parametrize("data_norm, bounds", [(1.0, None), (None, (-1.0, 1.0)), (1.0, (-1.0, 3.0))])
def test_l1_clip_holds_for_the_computed_statistics(data_norm, bounds):
    """One row's computed contribution stays within the declared B₁ (grid rounding included)."""
    lower = upper = None
    if bounds is not None:
        lower, upper = np.full(5, bounds[0]), np.full(5, bounds[1])
    geometry = _Geometry(lower, upper, data_norm, 5, l1_norm=0.3)
    assert geometry.l1 == 0.3
    rng = np.random.default_rng(0)
    for row in [np.full(5, 7.0), -np.full(5, 1 / 3), rng.normal(size=5), np.array([0.3, 0.1, -0.2, 0.05, 1e-9])]:
        _, total, gram = geometry.statistics(row[None, :])
        assert np.abs(total).sum() <= 0.3
        triangle = gram[np.triu_indices(5)]
        assert np.abs(triangle).sum() <= (0.3**2 + geometry.l2**2) / 2
        assert np.linalg.norm(triangle) <= geometry.l2**2


def test_pure_epsilon_on_one_hot_data_captures_the_top_subspace():
    """Regression (issue 19): one-hot rows have ‖x‖₁ far below √d ‖x‖₂; the L1-calibrated
    Laplace release keeps the top-3 subspace where the L2-only one (l1_norm=None) loses it."""
    X = _one_hot_rows(20_000, groups=8, levels=8)  # d = 64
    cov = np.cov(X.T)
    best = np.sort(np.linalg.eigvalsh(cov))[::-1][:3].sum()

    def captured(**params):
        values = [
            np.trace(
                (p := PCA(3, epsilon=0.5, data_norm=8**0.5, random_state=s, **params).fit(X)).components_
                @ cov
                @ p.components_.T
            )
            / best
            for s in range(3)
        ]
        return min(values)

    assert captured() > 0.9
    assert captured(l1_norm=8.0) > 0.9  # the public bound of the schema
    assert captured(l1_norm=None) < 0.7  # B₁ = √64 · √8 from data_norm: 0.59-0.63 on these seeds


def _l1_audit(cls, seed):
    from dpsk.audit import audit_estimator

    config = PCA_L1_AUDIT
    return audit_estimator(
        cls(**config.params), config.neighbours(), config.projection, n_samples=config.n_samples, random_state=seed
    )


@pytest.mark.audit
def test_l1_clip_privacy_audit():
    """The L1-calibrated release on worst-case neighbours: a canary spread over every
    feature, clipped by the L1 ball (lower bound 0 on audit seeds 0 and 1000, claimed 2)."""
    result = _l1_audit(PCA, 0)
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.extended
def test_l1_clip_audit_rejects_the_unclipped_sum():
    """The same audit rejects a release calibrated to the L1 clip that sums unclipped rows
    (lower bounds 2.01 and 2.20 on audit seeds 0 and 1000, claimed 2)."""
    result = _l1_audit(PCAL1NoClipping, 0)
    assert not result.passed, str(result)


def test_auto_l1_norm_leaves_private_bounds_their_share(data):
    """Next to private bounds "auto" spends nothing on the L1 norm (it would halve their ε)."""
    pca = PCA(2, epsilon=1.0, bounds="private", random_state=0).fit(data)
    assert pca.l1_norm_ is None
    without = PCA(2, epsilon=1.0, bounds="private", l1_norm=None, random_state=0).fit(data)
    assert pca.privacy_spent_ == without.privacy_spent_  # the bounds' histogram (10 % of ε), then the fit


@pytest.mark.slow
def test_pure_epsilon_pca_on_adult_meets_issue_19_target():
    """Issue 19: the pure-ε top-5 subspace of Adult (data_norm = √13, ε = 1) captures at
    least 0.9 of the non-private top-5 variance (0.45-0.55 before the L1 clip)."""
    from dpsk.datasets import load_adult

    X = load_adult().data
    cov = np.cov(X.T)
    best = np.sort(np.linalg.eigvalsh(cov))[::-1][:5].sum()
    for seed in range(3):
        pca = PCA(5, epsilon=1.0, data_norm=math.sqrt(13), random_state=seed).fit(X)
        assert np.trace(pca.components_ @ cov @ pca.components_.T) / best >= 0.9


def test_second_moment_is_never_released_without_noise_at_float64_ends():
    """The second moment's sensitivity is a square of the bound: infinite above ~1.3e154
    and 0 below ~1.5e-162, and either once gave it weight 0 in the joint release (released
    exactly: with ``centered=True`` the components then did not depend on the seed).
    Huge bounds are refused before the spend; tiny ones are assumed to be 2**-400."""
    X = np.random.default_rng(0).normal(size=(200, 4))
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="rescale"):
        PCA(2, epsilon=1.0, bounds=(-2e154, 2e154), accountant=accountant).fit(X * 1e150)
    assert not accountant.spent_budget
    tiny = X * 1e-163
    fits = [PCA(2, epsilon=1.0, data_norm=1.5e-162, centered=True, random_state=s).fit(tiny) for s in (1, 2)]
    assert not np.allclose(np.abs(fits[0].components_), np.abs(fits[1].components_))
