# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP multinomial, Bernoulli and categorical naive Bayes: limits, noise, domains, inputs."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

from dpsk.accounting import PureDPEvent, record_releases
from dpsk.audit import rounding_probe
from dpsk.exceptions import PrivacyLeakWarning
from dpsk.naive_bayes import BernoulliNB, CategoricalNB, MultinomialNB
from dpsk.naive_bayes._discrete import _check_exact_rows, _exact_class_table, _multinomial_grid
from dpsk.utils._testing import ALPHA, chisquare_pvalue
from dpsk.utils.validation import _weight_units


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
        clf = MultinomialNB(data_norm="data", classes=[0, 1, 2]).fit(X, y)
    assert clf.data_norm_ == X.sum(axis=1).max() and clf.data_norm == "data"


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
        clf = CategoricalNB(n_categories="data", classes=[0, 1]).fit([[0, 2], [1, 0]], [0, 1])
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


# --------------------------------------------------------------------------------------
# MultinomialNB releases exact integer sums on a public grid (rounding, issue 14 class)
# --------------------------------------------------------------------------------------


def _tie_neighbours(m=32):
    """D and D' = D + x where float sums of the rows round differently because of x.

    Feature j > 0 holds 1.0 (one leading row each) and a final half-ulp 2**-53: 1 + 2**-53
    ties to the even 1.0. In D', x (L1 norm exactly data_norm = 1, inserted before the
    last row) adds 2**-52 to each such feature: 1 + 2**-52 + 2**-53 ties to 1 + 2**-51,
    so the float sum of each cell grows by twice x's value and the table by more than
    the sensitivity 1 + data_norm."""
    d = m + 1
    lead = np.zeros((m, d))
    lead[np.arange(m), np.arange(1, d)] = 1.0
    tie = np.zeros((1, d))
    tie[0, 1:] = 2.0**-53
    x = np.zeros((1, d))
    x[0, 1:] = 2.0**-52
    x[0, 0] = 1.0 - m * 2.0**-52
    return np.vstack([lead, tie]), np.vstack([lead, x, tie]), x


@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_computed_table_moves_at_most_the_sensitivity(sparse):
    """Regression: float sums (BLAS dense, fused sparse kernel) moved by 1 + 2**-43 times
    the sensitivity on these neighbours; the exact integer table moves by x's own units."""
    D, D1, _ = _tie_neighbours()
    convert = sp.csr_matrix if sparse else np.asarray
    neighbours = [dict(X=convert(A), y=np.zeros(A.shape[0], dtype=int)) for A in (D, D1)]
    probe = rounding_probe(MultinomialNB(epsilon=1.0, data_norm=1.0, classes=[0, 1]), neighbours, rtol=0.0)
    assert probe.passed, probe.releases


@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_table_changes_by_exactly_the_rows_units(sparse):
    D, D1, x = _tie_neighbours()
    convert = sp.csr_matrix if sparse else np.asarray
    k, top = _multinomial_grid(1.0)

    def table(A):
        return _exact_class_table(convert(A), np.zeros(A.shape[0], dtype=np.intp), 2, k, top, None)

    change = table(D1) - table(D)
    assert np.array_equal(change, table(x))
    assert change[0, 0] == 2**k and change[0, 1:].sum() <= top and not change[1].any()
    # Here no clipping: the row's value on the grid, rounded down (2**-52 is below the step).
    assert change[0, 1] == np.floor((1.0 - 32 * 2.0**-52) * 2.0**k) and not change[0, 2:].any()


@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_table_is_order_independent(sparse):
    rng = np.random.default_rng(0)
    X = rng.exponential(1.0, (3000, 7)) * (rng.random((3000, 7)) < 0.6) * 10.0 ** rng.integers(-8, 8, (3000, 1))
    y = rng.integers(0, 3, 3000)
    w = rng.random(3000)
    order = rng.permutation(3000)
    convert = sp.csr_matrix if sparse else np.asarray
    k, top = _multinomial_grid(2.5)
    units, _ = _weight_units(w)
    a = _exact_class_table(convert(X), y, 3, k, top, units)
    b = _exact_class_table(convert(X[order]), y[order], 3, k, top, units[order])
    assert a.dtype == np.int64 and np.array_equal(a, b)
    # Every row is clipped to data_norm exactly in units (across blocks of rows too).
    for i in range(0, 3000, 997):
        one = _exact_class_table(convert(X[i : i + 1]), y[i : i + 1], 3, k, top, None)
        assert one[y[i], 1:].sum() <= top


def test_multinomial_exact_sum_limits_are_public():
    with pytest.raises(ValueError, match="below 2\\*\\*31"):
        MultinomialNB(epsilon=1.0, data_norm=2.0**31, classes=[0, 1]).fit([[1.0], [2.0]], [0, 1])
    k, top = _multinomial_grid(1e6)
    assert 2**k * 1e6 > 2**19 and top <= 1e6 * 2**k  # a step of about data_norm·2**-20
    _check_exact_rows(2**31, *_multinomial_grid(2.0**20 - 1), 1024)  # at least 2**31 rows
    with pytest.raises(ValueError, match="rows exactly"):
        _check_exact_rows(2**31, *_multinomial_grid(2.0**30), 1024)
