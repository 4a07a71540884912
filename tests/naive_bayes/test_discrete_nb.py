# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP multinomial, Bernoulli and categorical naive Bayes: limits, noise, domains, inputs."""

import numpy as np
import pytest
from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

from dpsk.accounting import PureDPEvent, record_releases
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, MultinomialNB
from dpsk.utils._testing import ALPHA, chisquare_pvalue


@pytest.fixture(scope="module")
def counts_data():
    rng = np.random.default_rng(0)
    y = np.arange(600) % 3
    X = rng.poisson(1.0 + 3.0 * np.eye(3)[y] @ np.eye(3, 5), (600, 5)).astype(np.float64)
    return X, y


def test_multinomial_huge_epsilon_matches_scikit_learn(counts_data):
    X, y = counts_data
    ours = MultinomialNB(epsilon=1e9, data_norm=float(X.sum(axis=1).max()), classes=[0, 1, 2], random_state=0).fit(X, y)
    reference = SkMultinomialNB().fit(X, y)
    np.testing.assert_allclose(ours.feature_count_, reference.feature_count_, atol=1e-5)
    np.testing.assert_allclose(ours.feature_log_prob_, reference.feature_log_prob_, atol=1e-6)
    np.testing.assert_allclose(ours.class_log_prior_, reference.class_log_prior_, atol=1e-6)
    np.testing.assert_allclose(ours.predict_log_proba(X), reference.predict_log_proba(X), atol=1e-5)


def test_multinomial_scales_rows_to_the_l1_bound():
    X = np.array([[3.0, 1.0], [1.0, 0.0]])
    clf = MultinomialNB(epsilon=1e9, data_norm=2.0, classes=[0, 1], random_state=0).fit(X, [0, 1])
    np.testing.assert_allclose(clf.feature_count_, [[1.5, 0.5], [1.0, 0.0]], atol=1e-6)


def test_multinomial_rejects_negative_values():
    with pytest.raises(ValueError, match="Negative values"):
        MultinomialNB(data_norm=1.0, classes=[0, 1]).fit([[1.0], [-1.0]], [0, 1])


def test_multinomial_derived_norm_warns(counts_data):
    X, y = counts_data
    with pytest.warns(PrivacyLeakWarning, match="data_norm"):
        clf = MultinomialNB(classes=[0, 1, 2]).fit(X, y)
    assert clf.data_norm_ == X.sum(axis=1).max() and clf.data_norm is None


def test_bernoulli_huge_epsilon_matches_scikit_learn(counts_data):
    X, y = counts_data
    ours = BernoulliNB(epsilon=1e9, binarize=1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    reference = SkBernoulliNB(binarize=1.0).fit(X, y)
    np.testing.assert_array_equal(ours.feature_count_, reference.feature_count_)
    np.testing.assert_allclose(ours.feature_log_prob_, reference.feature_log_prob_, atol=1e-9)
    np.testing.assert_allclose(ours.predict_log_proba(X), reference.predict_log_proba(X), atol=1e-9)


def test_bernoulli_noise_is_discrete_laplace_of_scale_one_plus_d():
    """Check the count noise: exact discrete Laplace of scale (1 + d)/ε (chi-square, power check)."""
    epsilon, d = 2.0, 3
    X = np.ones((400, d))
    y = np.arange(400) % 2
    noise = np.array(
        [
            BernoulliNB(epsilon=epsilon, classes=[0, 1], random_state=s).fit(X, y).feature_count_[0, 0] - 200
            for s in range(3000)
        ]
    ).astype(np.int64)
    support = np.arange(-40, 41)

    def pvalue(scale):
        return chisquare_pvalue(noise, support, np.exp(-np.abs(support) / scale))

    scale = (1 + d) / epsilon
    assert pvalue(scale) > ALPHA
    assert pvalue(scale * 1.2) < ALPHA and pvalue(scale / 1.2) < ALPHA


def test_categorical_huge_epsilon_matches_scikit_learn():
    rng = np.random.default_rng(0)
    y = np.arange(500) % 2
    X = np.column_stack([rng.integers(0, 3, 500) + y, rng.integers(0, 4, 500)])
    ours = CategoricalNB(epsilon=1e9, n_categories=[4, 4], classes=[0, 1], random_state=0).fit(X, y)
    reference = SkCategoricalNB(min_categories=[4, 4]).fit(X, y)
    for a, b in zip(ours.category_count_, reference.category_count_):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ours.feature_log_prob_, reference.feature_log_prob_):
        np.testing.assert_allclose(a, b, atol=1e-9)
    np.testing.assert_allclose(ours.class_count_, reference.class_count_)
    np.testing.assert_allclose(ours.predict_log_proba(X), reference.predict_log_proba(X), atol=1e-9)


def test_categorical_ignores_codes_outside_the_public_domain():
    X = np.array([[0, 1], [5, 1], [1, 0], [1, 0]])
    clf = CategoricalNB(epsilon=1e9, n_categories=2, classes=[0, 1], random_state=0).fit(X, [0, 0, 1, 1])
    np.testing.assert_array_equal(clf.category_count_[0], [[1, 0], [0, 2]])  # the 5 counts nowhere
    np.testing.assert_array_equal(clf.category_count_[1], [[0, 2], [2, 0]])
    # At prediction, an unknown code carries no evidence: only feature 1 counts.
    jll_unknown = clf.predict_joint_log_proba([[7, 1]])[0]
    np.testing.assert_allclose(jll_unknown, clf.class_log_prior_ + clf.feature_log_prob_[1][:, 1])


def test_categorical_validates_codes_without_showing_them():
    clf = CategoricalNB(n_categories=3, classes=[0, 1])
    with pytest.raises(ValueError, match="Negative values") as info:
        clf.fit([[-7.0], [1.0]], [0, 1])
    assert "7" not in str(info.value)
    with pytest.raises(ValueError, match="integer category codes"):
        clf.fit([[0.5], [1.0]], [0, 1])


def test_categorical_derived_domain_warns():
    with pytest.warns(PrivacyLeakWarning, match="n_categories"):
        clf = CategoricalNB(classes=[0, 1]).fit([[0, 2], [1, 0]], [0, 1])
    np.testing.assert_array_equal(clf.n_categories_, [2, 3])


@pytest.mark.parametrize(
    "cls, params, X, size, sensitivity",
    [
        (MultinomialNB, dict(data_norm=4.0), np.ones((10, 3)), 2 * 4, None),
        (BernoulliNB, {}, np.ones((10, 3)), 2 * 4, 4),
        (CategoricalNB, dict(n_categories=[2, 3, 4]), np.zeros((10, 3)), 2 * 9, 3),
    ],
)
def test_one_release_of_the_whole_table(cls, params, X, size, sensitivity):
    with record_releases() as drawn:
        clf = cls(epsilon=0.7, classes=[0, 1], random_state=0, **params).fit(X, np.arange(10) % 2)
    assert drawn == [clf.privacy_spent_] and isinstance(drawn[0], PureDPEvent)
    # The exact discrete Laplace event states ε rounded up from its (rounded) scale: one ulp over.
    assert drawn[0].epsilon <= 0.7 * (1 + 1e-15)
    if sensitivity is not None:  # integer noise: the event is exactly sensitivity/scale
        mechanism = clf._mechanism(sensitivity, np.random.default_rng(0))
        assert mechanism.privacy_event(size) == drawn[0]


@pytest.mark.parametrize("cls", [MultinomialNB, BernoulliNB, CategoricalNB])
def test_priors(cls):
    X, y = np.ones((10, 2)), np.arange(10) % 2
    params = {CategoricalNB: dict(n_categories=2), MultinomialNB: dict(data_norm=2.0)}.get(cls, {})
    clf = cls(class_prior=[0.25, 0.75], classes=[0, 1], random_state=0, **params).fit(X, y)
    np.testing.assert_allclose(np.exp(clf.class_log_prior_), [0.25, 0.75])
    clf = cls(fit_prior=False, classes=[0, 1], random_state=0, **params).fit(X, y)
    np.testing.assert_allclose(np.exp(clf.class_log_prior_), [0.5, 0.5])


def test_alpha_is_checked():
    X, y = np.ones((4, 2)), [0, 1, 0, 1]
    with pytest.warns(UserWarning, match="alpha too small"):
        BernoulliNB(alpha=0.0, force_alpha=False, classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="alpha must be"):
        BernoulliNB(alpha=[1.0, 1.0, 1.0], classes=[0, 1]).fit(X, y)
