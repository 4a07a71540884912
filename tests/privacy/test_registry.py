# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The audit registry (``dpsk/utils/_testing/registry.py``) covers the whole public API.

A new public mechanism, :mod:`dpsk.stats` function or estimator fails here until it has
an entry in every registry that applies to it (or a ``NOT_*`` entry with the reason):
the privacy tests parametrize from the registry, so an entry is an audit in CI.
"""

from dpsk.utils import all_estimators
from dpsk.utils._testing.registry import (
    COMPOSED_AUDITS,
    COMPOSED_BROKEN_VARIANTS,
    ESTIMATOR_AUDITS,
    MECHANISM_AUDITS,
    NOT_AUDITED,
    NOT_AUDITED_MECHANISMS,
    OFFSET_CASES,
    OFFSET_NOT_APPLICABLE,
    public_estimators,
    public_mechanism_classes,
    public_statistics,
)


def test_every_estimator_has_a_privacy_audit():
    """Check that a new public estimator cannot skip the privacy audit."""
    names = public_estimators()
    missing = names - set(ESTIMATOR_AUDITS) - set(NOT_AUDITED)
    assert not missing, f"add an entry to ESTIMATOR_AUDITS (or NOT_AUDITED, with a reason) for {sorted(missing)}"
    assert set(ESTIMATOR_AUDITS) <= names, "stale entries in ESTIMATOR_AUDITS"
    assert all(len(reason) > 10 for reason in NOT_AUDITED.values())


def test_every_mechanism_has_a_privacy_audit():
    """Check that a new public mechanism cannot skip the privacy audit (aliases count once)."""
    classes = public_mechanism_classes()
    audited = {classes[name] for name in MECHANISM_AUDITS if name in classes}
    missing = {name for name, cls in classes.items() if cls not in audited and name not in NOT_AUDITED_MECHANISMS}
    assert not missing, (
        f"add an entry to MECHANISM_AUDITS (or NOT_AUDITED_MECHANISMS, with a reason) for {sorted(missing)}"
    )
    assert all(len(reason) > 10 for reason in NOT_AUDITED_MECHANISMS.values())


def test_every_estimator_has_an_offset_case():
    """Check that a new public estimator cannot skip the offset family."""
    names = {name for name, _ in all_estimators()}
    missing = names - set(OFFSET_CASES) - set(OFFSET_NOT_APPLICABLE)
    assert not missing, f"add an OFFSET_CASES entry (or OFFSET_NOT_APPLICABLE, with a reason) for {sorted(missing)}"
    assert set(OFFSET_NOT_APPLICABLE) <= names | public_statistics()


def test_every_statistic_has_an_offset_case():
    """Check that a new public function of dpsk.stats cannot skip the offset family."""
    missing = public_statistics() - {name.split(",")[0] for name in OFFSET_CASES} - set(OFFSET_NOT_APPLICABLE)
    assert not missing, f"add an OFFSET_CASES entry (or OFFSET_NOT_APPLICABLE, with a reason) for {sorted(missing)}"
    stale = {name for name in OFFSET_CASES if name.split(",")[0] not in public_statistics() | public_estimators()}
    assert not stale, f"stale entries in OFFSET_CASES: {sorted(stale)}"


def test_every_composed_audit_has_a_broken_variant():
    """Check that each audit of a composed release names a public estimator and is validated
    by at least one broken variant of that estimator declaring the same cost."""
    assert set(COMPOSED_BROKEN_VARIANTS) == set(COMPOSED_AUDITS)
    for name, config in COMPOSED_AUDITS.items():
        assert name.split(",")[0] == config.cls.__name__ in public_estimators()
        assert COMPOSED_BROKEN_VARIANTS[name]
        assert all(issubclass(cls, config.cls) and cls is not config.cls for cls in COMPOSED_BROKEN_VARIANTS[name])
