# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Which estimators the common tests run, and how (scikit-learn's instance_generator, for dpsk).

* :data:`INIT_PARAMS` — cheap constructor arguments per estimator (one line each). The
  scikit-learn checks demand accuracy on easy data, so they run at a large ε; the dpsk
  contract checks set ε, bounds and seeds themselves.
* :data:`EXPECTED_FAILED_CHECKS` — scikit-learn checks an estimator is known to fail, each
  with the reason (a DP estimator cannot always behave like its non-private model).
* :func:`estimators_under_test` — every public estimator found by
  :func:`dpsk.utils.all_estimators`, plus the reference :class:`ToyDPMeanClassifier`, so
  that the suites never run empty and a new estimator cannot skip them.
"""

from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

from dpsk.utils._sklearn_compat import SKLEARN_VERSION
from dpsk.utils._testing import ToyDPMeanClassifier
from dpsk.utils._testing.selection import ToyShiftedMeanClassifier
from dpsk.utils.discovery import all_estimators

__all__ = [
    "EXPECTED_FAILED_CHECKS",
    "EXPECTED_FAILED_DP_CHECKS",
    "INIT_PARAMS",
    "expected_failed_checks",
    "expected_failed_dp_checks",
    "estimators_under_test",
]

#: Constructor arguments for tests, by class name.
INIT_PARAMS = {
    "ToyDPMeanClassifier": dict(epsilon=1e4),
    "LabelPrivateLinearRegression": dict(epsilon=1e4),
    "LinearRegression": dict(epsilon=1e4),
    "LinearSVC": dict(epsilon=1e4),
    "LogisticRegression": dict(epsilon=1e4),
    "Ridge": dict(epsilon=1e4),
    # Full-batch steps (the checks' data sets are small): DP-GD, many epochs for accuracy.
    "SGDClassifier": dict(epsilon=1e4, max_iter=200, n_samples=100),  # partial_fit needs the public size
    "SGDRegressor": dict(epsilon=1e4, max_iter=200, n_samples=100),
    # One pass over the checks' small data: a large epsilon and a free leader (small alpha).
    "OnlineSGDClassifier": dict(epsilon=1e4, max_samples=1000, alpha=1.0),
    "OnlineSGDRegressor": dict(epsilon=1e4, max_samples=1000, alpha=10.0),
    "MLPClassifier": dict(epsilon=1e4, max_iter=100, hidden_layer_sizes=(16,), learning_rate_init=0.01),
    "MLPRegressor": dict(epsilon=1e4, max_iter=100, hidden_layer_sizes=(16,), learning_rate_init=0.01),
    # Integer noise at ε = 1e4 is almost always 0: fits would not differ between seeds.
    "BernoulliNB": dict(epsilon=1.0),
    "CategoricalNB": dict(epsilon=1.0, n_categories="data"),  # required: the checks' codes vary
    "GaussianNB": dict(epsilon=1e4),
    "KMeans": dict(n_clusters=3, epsilon=1e4, max_iter=3),
    "MinMaxScaler": dict(epsilon=1.0),  # integer noise: see BernoulliNB
    "MultinomialNB": dict(epsilon=1e4, data_norm="data"),  # required (no private estimate yet)
    "PCA": dict(epsilon=1e4, delta=1e-5),
    "StandardScaler": dict(epsilon=1e4),
    # k = 1 of the checks' few features: something to choose, at a cost.
    "SelectKBest": dict(k=1, epsilon=1.0),
    "SelectPercentile": dict(percentile=50, epsilon=1.0),
    "DecisionTreeClassifier": dict(epsilon=1.0),  # integer noise: see BernoulliNB
    "RandomForestClassifier": dict(epsilon=1.0),
    # Few rounds keep the checks fast; ε = 1e4 leaves almost no noise on the checks' small data.
    "HistGradientBoostingClassifier": dict(epsilon=1e4, max_iter=20),
    "HistGradientBoostingRegressor": dict(epsilon=1e4, max_iter=20),
    # One teacher / part: no partition randomness, so the spread over seeds is the noise's.
    "PATEClassifier": dict(estimator=SkLogisticRegression(), n_teachers=1, epsilon=1e4),
    "SubsampleAggregate": dict(estimator=SkLinearRegression(), n_parts=1, epsilon=1e4, bounds="data"),
    # Two candidates that predict differently at the same privacy cost.
    "GridSearchCV": dict(
        estimator=ToyShiftedMeanClassifier(epsilon=1e4), param_grid={"shift": [0.0, 0.1]}, epsilon=1e4
    ),
    "RandomizedSearchCV": dict(
        estimator=ToyShiftedMeanClassifier(epsilon=1e4), param_distributions={"shift": [0.0, 0.1]}, epsilon=1e4
    ),
}
# partial_fit (one epoch per call) needs the public size, as for the SGD models.
for _name in ("MLPClassifier", "MLPRegressor"):
    INIT_PARAMS[_name] = {**INIT_PARAMS[_name], "n_samples": 100}

#: scikit-learn checks expected to fail, by class name: {check name: reason}.
EXPECTED_FAILED_CHECKS = {
    "KMeans": {
        "check_clustering": "labels_ (the cluster of each training row) is not stored: it is a "
        "function of individual rows that the noise does not protect",
    },
}

# sample_weight is clipped to [0, 1] on purpose (issue 14: a row repeated through a weight
# of k must not cost kε), so a weight of 2 is not a duplicated row here.
_CLIPPED_WEIGHTS = (
    "sample_weight is clipped to [0, 1] so that a row never counts more than once (a "
    "bootstrap count k would otherwise cost kε); a weight of 2 is not a duplicated row"
)
# Refusing all-zero weights would be a value-dependent error: a neighbour that adds one
# row of weight 1 would release, so the error itself would reveal the row (issue 14, 4).
_ZERO_WEIGHTS_RELEASE = (
    "all-zero weights are valid data: raising for them but not for a neighbour with one "
    "more row of weight 1 would itself reveal that row; the fit releases noise as usual"
)
for _name in (
    "BernoulliNB",
    "CategoricalNB",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "GaussianNB",
    "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor",
    "KMeans",
    "LinearRegression",
    "LinearSVC",
    "LogisticRegression",
    "MinMaxScaler",
    "MultinomialNB",
    "PCA",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "Ridge",
    "MLPClassifier",
    "MLPRegressor",
    "SGDClassifier",
    "SGDRegressor",
    "OnlineSGDClassifier",
    "OnlineSGDRegressor",
    "StandardScaler",
):
    EXPECTED_FAILED_CHECKS.setdefault(_name, {}).update(
        {
            "check_sample_weight_equivalence_on_dense_data": _CLIPPED_WEIGHTS,
            "check_all_zero_sample_weights_error": _ZERO_WEIGHTS_RELEASE,
        }
    )
# Sparse input (issue 16): the same clipped weights, on the estimators that take sparse X.
for _name in (
    "BernoulliNB",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "KMeans",
    "LinearRegression",
    "LinearSVC",
    "LogisticRegression",
    "MultinomialNB",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "Ridge",
):
    EXPECTED_FAILED_CHECKS[_name]["check_sample_weight_equivalence_on_sparse_data"] = _CLIPPED_WEIGHTS
EXPECTED_FAILED_CHECKS["StandardScaler"]["check_sample_weight_equivalence_on_sparse_data"] = _CLIPPED_WEIGHTS
EXPECTED_FAILED_CHECKS["CategoricalNB"]["check_classifiers_one_label_sample_weights"] = (
    "the check's X holds negative values, which are not category codes: CategoricalNB rejects them "
    "before it looks at the labels, so the error does not mention the class"
)
if SKLEARN_VERSION < (1, 7):
    # The check subtracts a float mean from the integer X made for categorical tags, in
    # place, and fails before it reaches the estimator (fixed in scikit-learn 1.7).
    EXPECTED_FAILED_CHECKS["CategoricalNB"]["check_positive_only_tag_during_fit"] = (
        "scikit-learn 1.6's check cannot build its input"
    )

_SEARCH_HAS_NO_OWN_MODEL = (
    "a search keeps no fitted float arrays of its own (its model is best_estimator_), and its "
    "epsilon is the budget of the selection step, not the noise of the model"
)

#: dpsk contract checks (dpsk.utils.estimator_checks) expected to fail: {check name: reason}.
EXPECTED_FAILED_DP_CHECKS = {
    name: {
        "check_noise_decreases_with_epsilon": _SEARCH_HAS_NO_OWN_MODEL,
        "check_random_state_none_is_fresh": _SEARCH_HAS_NO_OWN_MODEL,
    }
    for name in ("GridSearchCV", "RandomizedSearchCV")
}
# The weights of a network start from a random (data-independent, public) initialisation
# drawn per seed: their spread over seeds is the initialisation's at any ε. The noise's
# dependence on ε is the calibrated σ, tested in tests/neural_network and the audits.
for _name in ("MLPClassifier", "MLPRegressor"):
    EXPECTED_FAILED_DP_CHECKS[_name] = {
        "check_noise_decreases_with_epsilon": "the weights' spread over seeds is dominated by the random "
        "initialisation (a public, data-independent draw per seed), which does not shrink with epsilon, and Adam's "
        "steps are scale-free; tests/neural_network checks it from a fixed initialisation with SGD steps",
    }

# A network's initial weights are a random draw per seed, noise or not (as in
# scikit-learn): at epsilon=inf its fits still differ with the seed. (The SGD models pass:
# the check's data fit in one full batch.) tests/linear_model/test_sgd.py checks the
# infinite spend and the refusal by a finite budget on the shared engine.
for _name in ("MLPClassifier", "MLPRegressor"):
    EXPECTED_FAILED_DP_CHECKS.setdefault(_name, {})["check_infinite_epsilon_is_exact"] = (
        "a network's initial weights are a random draw per seed (public randomness, not noise): "
        "fits with different seeds differ even at epsilon=inf"
    )


EXPECTED_FAILED_DP_CHECKS["KMeans"] = {
    "check_infinite_epsilon_is_exact": "the starting centres are drawn at random (public randomness, "
    "not noise), so fits with different seeds differ even at epsilon=inf; with a given init they "
    "agree (tests/cluster/test_kmeans.py)",
}

_DISCRETE_LABELS = (
    "the release is a set of noisy argmax labels: with the checks' one teacher the vote margin is "
    "one vote, so labels flip at epsilon=50 too, and at epsilon=1e4 fresh noise gives the teacher's "
    "labels every time; tests/ensemble/test_pate.py checks that sigma_ shrinks with epsilon and "
    "that random_state=None gives fresh noise"
)
EXPECTED_FAILED_DP_CHECKS["PATEClassifier"] = {
    "check_noise_decreases_with_epsilon": _DISCRETE_LABELS,
    "check_random_state_none_is_fresh": _DISCRETE_LABELS,
    "check_privacy_leak_warning": "the checks fit without X_public, so the private rows' features are the "
    "public queries (label privacy only): that fallback warns PrivacyLeakWarning by design",
    "check_infinite_epsilon_is_exact": (
        "PATE's noise is calibrated from a finite epsilon: epsilon=inf is refused with a ValueError before "
        "any data is read (its non-private ceiling is the estimator fitted on all rows), and its teachers' "
        "random parts differ with the seed anyway"
    ),
}

#: Estimators run by the common tests although they are not public.
REFERENCE_ESTIMATORS = [("ToyDPMeanClassifier", ToyDPMeanClassifier)]


def estimators_under_test():
    """Yield one test instance of every public estimator, plus the reference toy."""
    for name, cls in [*all_estimators(), *REFERENCE_ESTIMATORS]:
        yield cls(**INIT_PARAMS.get(name, {}))


def expected_failed_checks(estimator):
    """``expected_failed_checks`` callback of scikit-learn's ``parametrize_with_checks``."""
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


def expected_failed_dp_checks(estimator):
    """``expected_failed_checks`` callback of :func:`~dpsk.utils.estimator_checks.parametrize_with_dp_checks`."""
    return EXPECTED_FAILED_DP_CHECKS.get(type(estimator).__name__, {})
