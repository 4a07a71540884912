# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's checks on dpsk.local's aggregators, and the same API properties on real reports.

The aggregators are not discovered by the common tests (``dpsk.utils.discovery``: fitting
is post-processing, not a DP release, so the DP contract checks do not apply). Most of
scikit-learn's checks fit on arbitrary float features, which are not reports of any
protocol and are rejected: those are listed below, and the properties they check
(cloning, pickling, idempotent fits, inputs left untouched, read-only and
Fortran-ordered input, integer and float dtypes) are tested here on valid reports.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpsk.local import FrequencyEstimator, MeanEstimator, OneBitMean, make_randomizer

_NOT_REPORTS = (
    "fits on arbitrary float features, which are not reports of a local-DP protocol "
    "(integers in the protocol's range) and are rejected; tested on valid reports in this file"
)
_FITS_ON_FEATURES = [
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
]
EXPECTED_FAILED = dict.fromkeys(_FITS_ON_FEATURES, _NOT_REPORTS)


@parametrize_with_checks(
    [FrequencyEstimator(), MeanEstimator()], expected_failed_checks=lambda estimator: EXPECTED_FAILED
)
def test_sklearn_compatible_aggregator(estimator, check):
    check(estimator)


def _cases():
    values = np.arange(200) % 10
    for protocol in ("grr", "oue", "olh"):
        reports = make_randomizer(protocol, epsilon=1.0, n_categories=10, random_state=0).randomise(values)
        yield FrequencyEstimator(protocol=protocol, epsilon=1.0, n_categories=10), reports, "counts_"
    bits = OneBitMean(epsilon=1.0, bounds=(0, 10), random_state=0).randomise(values)
    yield MeanEstimator(epsilon=1.0, bounds=(0, 10)), bits, "mean_"


CASES = list(_cases())
IDS = ["grr", "oue", "olh", "mean"]


@pytest.mark.parametrize("estimator, reports, attribute", CASES, ids=IDS)
def test_api_properties_on_valid_reports(estimator, reports, attribute, tmp_path):
    """Check fit returns self, is idempotent, leaves reports and params alone, survives clone and pickle."""
    before = reports.copy()
    params = estimator.get_params()
    fitted = estimator.fit(reports)
    assert fitted is estimator and estimator.get_params() == params
    np.testing.assert_array_equal(reports, before)
    first = np.copy(getattr(estimator, attribute))
    np.testing.assert_array_equal(getattr(estimator.fit(reports), attribute), first)
    np.testing.assert_array_equal(getattr(clone(estimator).fit(reports), attribute), first)
    np.testing.assert_array_equal(getattr(pickle.loads(pickle.dumps(estimator)), attribute), first)
    # Read-only, Fortran-ordered, float and int32 copies of the reports give the same result.
    memmap = np.lib.format.open_memmap(tmp_path / "r.npy", mode="w+", dtype=reports.dtype, shape=reports.shape)
    memmap[...] = reports
    memmap.flush()
    readonly = np.load(tmp_path / "r.npy", mmap_mode="r")
    narrow = np.uint32 if reports.max() >= 2**31 else np.int32  # hash seeds reach 2^32 - 6
    for variant in (readonly, np.asfortranarray(reports), reports.astype(np.float64), reports.astype(narrow)):
        np.testing.assert_allclose(getattr(clone(estimator).fit(variant), attribute), first)


@pytest.mark.parametrize("estimator, reports, attribute", CASES, ids=IDS)
def test_unfitted_and_bad_input(estimator, reports, attribute):
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    with pytest.raises(NotFittedError):
        check_is_fitted(clone(estimator))
    with pytest.raises(ValueError):
        clone(estimator).fit(reports[:0])
    bad = reports.astype(np.float64)
    bad.flat[0] = np.nan
    with pytest.raises(ValueError):
        clone(estimator).fit(bad)


@pytest.mark.parametrize(
    "params", [dict(epsilon=0.0), dict(epsilon=-1.0), dict(protocol="rappor"), dict(n_categories=1)]
)
def test_invalid_parameters_are_rejected(params):
    with pytest.raises(ValueError):
        FrequencyEstimator(**params).fit(np.zeros(3))
