# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The offset family: rounding in the computed statistic (issue 14, finding 1).

Every statistic and estimator is fitted on :func:`dpsk.audit.offset_neighbours` — values
with a large common offset inside a narrow public range, the added record placed where
the noise-free change is largest — and

* the default run checks with :func:`dpsk.audit.rounding_probe` (two fits with identical
  noise, deterministic and exact) that no release's noise-free value moves by more than
  its declared sensitivity, on two families: UNIX timestamps in one hour (offset 1.7e9,
  20 000 rows) and an offset of 1e12 (1 000 rows: the cancellation grows with m², so
  far fewer rows show it);
* the ``audit`` run (CI) audits every case statistically (:func:`dpsk.audit.audit_estimator`)
  on the offset-1e12 family, where one broken release is far outside its claim.

``ToyDPVariance(centring="after")`` (``dpsk/utils/_testing/offset.py``) computes
``Σc² − 2mΣc + m²n`` and must be rejected by both, while ``centring="before"`` passes:
the family stays validated whatever the library's own statistics do.

**Adding an estimator or statistic**: one ``OFFSET_CASES`` entry in the audit registry
(``dpsk/utils/_testing/registry.py``: an instance whose public bounds the family fills,
and a projection for the statistical audit), or an ``OFFSET_NOT_APPLICABLE`` reason.
"""

import numpy as np
import pytest

from dpsk.audit import audit_estimator, offset_neighbours, project_attribute, rounding_probe
from dpsk.utils._testing.offset import ToyDPVariance
from dpsk.utils._testing.registry import (
    FAMILIES,
    OFFSET_CASES,
    WIDTH,
)


def _bounds(family):
    offset, _ = FAMILIES[family]
    return (offset, offset + WIDTH)


def _neighbours(name, family, **kwargs):
    case = OFFSET_CASES[name]
    estimator = case.make(_bounds(family))
    kwargs.setdefault("n_samples", FAMILIES[family][1])
    return estimator, offset_neighbours(
        estimator,
        n_features=case.n_features,
        candidates=17,
        placements=case.placements,
        return_probe=True,
        **kwargs,
    )


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("name", sorted(n for n, c in OFFSET_CASES.items() if c.probe_applies))
def test_offset_rounding_probe(name, family):
    """Check that no release moves by more than its declared sensitivity on offset data.

    Fails on main before issue 14's fix for stats.var/std, StandardScaler, GaussianNB and
    PCA (centring after summing).
    """
    _, (_, _, probe) = _neighbours(name, family)
    assert probe.n_releases[0] > 0, "the probe saw no release: mark the case probe_applies=False"
    assert probe.passed, str(probe)


@pytest.mark.parametrize("name", ["stats.var", "StandardScaler"])
def test_offset_rounding_probe_float32(name):
    """Check float32 data (timestamps on the float32 grid of one hour) the same way."""
    _, (_, _, probe) = _neighbours(name, "timestamps", dtype=np.float32)
    assert probe.passed, str(probe)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_rounding_probe_rejects_centring_after_summing(family):
    """Check the probe's power: Σc² − 2mΣc + m²n is rejected, exact centred sums pass."""
    bounds = _bounds(family)
    rows = FAMILIES[family][1]
    broken = offset_neighbours(
        ToyDPVariance(epsilon=1.0, bounds=bounds, centring="after"), n_samples=rows, return_probe=True
    )[2]
    correct = offset_neighbours(
        ToyDPVariance(epsilon=1.0, bounds=bounds, centring="before"), n_samples=rows, return_probe=True
    )[2]
    assert not broken.passed and broken.ratio > 2.0, str(broken)
    assert correct.passed, str(correct)


def test_default_neighbours_miss_what_the_offset_family_finds():
    """Check why the family exists: the default neighbours (rows at the bounds of a box
    around the origin) cannot see the rounding of centring after summing."""
    from dpsk.audit import worst_case_neighbours

    broken = ToyDPVariance(epsilon=1.0, bounds=(-1.0, 1.0), centring="after")
    assert rounding_probe(broken, worst_case_neighbours(broken, n_samples=1_000)).passed


def test_offset_neighbours_stay_inside_the_public_range():
    """Check that nothing is clipped: every row of both neighbours lies inside the bounds."""
    estimator, (without, with_record, _) = _neighbours("StandardScaler", "timestamps", n_samples=500)
    low, high = estimator.bounds
    assert with_record["X"].shape[0] == without["X"].shape[0] + 1
    for data in (without, with_record):
        assert np.all((data["X"] >= low) & (data["X"] <= high))


def test_offset_neighbours_try_every_placement(monkeypatch):
    """Check that the record is tried both first and last in D′, and only where asked.

    Before the fix, "last" probed the pair already rolled for "first": the record was never
    tried last, and forests (which draw each row's tree in row order) could only be probed
    with one tree.
    """
    import dpsk.audit._offset as offset_module

    seen = []
    probe = offset_module.rounding_probe

    def recording_probe(estimator, pair, **kwargs):
        without, with_record = pair
        seen.append("last" if np.array_equal(with_record["X"][:-1], without["X"]) else "first")
        return probe(estimator, pair, **kwargs)

    monkeypatch.setattr(offset_module, "rounding_probe", recording_probe)
    scaler = OFFSET_CASES["MinMaxScaler"].make(_bounds("offset 1e12"))
    offset_neighbours(scaler, n_samples=50, candidates=2)
    assert seen == ["first", "last"] * 2
    seen.clear()
    without, with_record = offset_neighbours(scaler, n_samples=50, candidates=2, placements=("last",))
    assert seen == ["last"] * 2
    np.testing.assert_array_equal(with_record["X"][:-1], without["X"])
    with pytest.raises(ValueError, match="placements"):
        offset_neighbours(scaler, n_samples=50, placements=("middle",))


#: The statistical audit runs on the family where rounding is largest per row: at offset
#: 1e12 with 1 000 rows, centring after summing moves the toy's sum of squares by 4·10⁴
#: times its sensitivity, and AUDIT_RUNS fits per neighbour reject it with ε ≥ 3.5 against
#: a claim of 1 (α = 1e-6). On the timestamp family (20 000 rows, ratio 2.1) the same
#: audit accepts the broken toy even with 2 000 fits (ε ≥ 0.31): the rounding probe above
#: is the check there.
AUDIT_FAMILY = "offset 1e12"
AUDIT_RUNS = 1_000


def _audit_toy(centring):
    toy = ToyDPVariance(epsilon=1.0, bounds=_bounds(AUDIT_FAMILY), centring=centring)
    neighbours = offset_neighbours(toy, n_samples=FAMILIES[AUDIT_FAMILY][1], candidates=17)
    return audit_estimator(toy, neighbours, project_attribute("sum_sq_"), n_samples=AUDIT_RUNS, random_state=0)


@pytest.mark.audit
@pytest.mark.extended
def test_offset_audit_rejects_centring_after_summing():
    """Check the statistical audit's power at the settings of every case below: the broken
    toy's empirical ε is far above its claim."""
    broken = _audit_toy("after")
    assert not broken.passed and broken.epsilon_lower_bound > 3.0, str(broken)


@pytest.mark.audit
def test_offset_audit_accepts_exact_centring():
    """Check that the statistical audit accepts the correct toy on the same family."""
    assert _audit_toy("before").passed


@pytest.mark.audit
@pytest.mark.parametrize("name", sorted(OFFSET_CASES))
def test_offset_privacy_audit(name):
    """Audit every statistic and estimator statistically on its offset neighbours (α = 1e-6)."""
    case = OFFSET_CASES[name]
    estimator, (without, with_record, _) = _neighbours(name, AUDIT_FAMILY)
    result = audit_estimator(estimator, (without, with_record), case.projection, n_samples=AUDIT_RUNS, random_state=0)
    assert result.passed, str(result)
