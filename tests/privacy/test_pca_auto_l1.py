# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy of PCA's private L1 clip (``l1_norm="auto"``, pure ε): the composed release.

The fit releases the clip L (an exponential-mechanism quantile of the rows' L1 norms),
then the exact Gram of the rows scaled into the L1 ball L less a rounding margin
(``_l1_margin``), with Laplace noise calibrated to L; one event. Three checks, each
validated by a deliberately broken variant (``dpsk/utils/_testing/family.py``):

* the statistical audit (:data:`PCA_AUTO_L1_AUDIT`: the 0.9-quantile of D on the boundary
  of two groups of norms, a canary above it, the projection the log-likelihood ratio of
  the whole release) accepts PCA at its declared cost and rejects a clip drawn for 2ε with
  the Laplace release for 2ε, and a clip drawn without (practically) any noise;
* the rounding probe on :func:`l1_margin_neighbours` (identical noise on D and D′) accepts
  PCA and rejects the clip without its rounding margin (``_l1_margin`` the identity). That
  bug moves one row's L1 norm by half a grid step per feature, a relative 2**-20·d at most:
  no feasible number of fits sees it, and only with about 100 features or more does it
  exceed the 2**-14 of ``ROUNDING_MARGIN`` the release keeps, so the probe runs at d = 128;
* the recording harness sees the quantile's release, at ``bounds_epsilon_share`` of ε.

A clip released but not charged (``PCAAutoL1ClipNotCharged``: the Laplace release at the
whole ε, the quantile's ε/10 on top, ε declared) is not audited statistically: the
excess is 10 % of a total of 2, below what a few thousand fits resolve (accepted with
6 000 fits per neighbour: ε >= 1.25 against 2); the recording harness, which compares
the releases made with the declared cost, rejects it.
"""

import numpy as np
import pytest

import dpsk._core._exact_sums as exact_sums
from dpsk.accounting import ExponentialEvent, record_releases
from dpsk.audit import rounding_probe
from dpsk.decomposition import PCA
from dpsk.utils._testing.family import PCAAutoL1ClipNotCharged, l1_margin_neighbours
from dpsk.utils._testing.registry import COMPOSED_AUDITS, COMPOSED_BROKEN_VARIANTS
from dpsk.utils.estimator_checks import check_releases_match_declared_cost

NAME = "PCA, l1_norm='auto'"
BROKEN = COMPOSED_BROKEN_VARIANTS[NAME]
#: The default run's smoke audits, fits per neighbour (the full audit: the config's n_samples).
#: 300 is about the least with which a deterministic difference refutes ε = 2 at α = 1e-6.
SMOKE_SAMPLES = {"PCA": 200, "PCAAutoL1NoiselessClip": 300}


def _audit(cls, n_samples=None):
    return COMPOSED_AUDITS[NAME].run(cls, n_samples=n_samples)


def test_auto_l1_audit_smoke():
    """Check, with few fits, that the audit accepts PCA and rejects a clip released without noise."""
    assert _audit(PCA, SMOKE_SAMPLES["PCA"]).passed
    noiseless = next(cls for cls in BROKEN if cls.__name__ == "PCAAutoL1NoiselessClip")
    result = _audit(noiseless, SMOKE_SAMPLES[noiseless.__name__])
    assert not result.passed, str(result)


@pytest.mark.audit
def test_auto_l1_privacy_audit():
    """Check that the composed release (clip, then Gram) is as private as it declares."""
    result = _audit(PCA)
    assert result.passed, str(result)


@pytest.mark.audit
@pytest.mark.parametrize("cls", BROKEN, ids=lambda cls: cls.__name__)
@pytest.mark.extended
def test_auto_l1_audit_rejects_broken_variant(cls):
    result = _audit(cls)
    assert not result.passed, str(result)


@pytest.mark.parametrize("cls", [*BROKEN, PCAAutoL1ClipNotCharged], ids=lambda cls: cls.__name__)
def test_broken_variant_declares_the_correct_cost(cls):
    """Check that a broken variant declares what PCA declares: only its noise differs."""
    config = COMPOSED_AUDITS[NAME]
    without, _ = config.neighbours()
    broken = cls(random_state=0, **config.params).fit(**without)
    assert broken.privacy_spent_ == PCA(random_state=0, **config.params).fit(**without).privacy_spent_
    assert broken.l1_norm_ is not None  # the private clip is what is under test


def _margin_probe(dtype):
    pair = [{"X": data["X"].astype(dtype)} for data in l1_margin_neighbours()]
    estimator = PCA(epsilon=1000.0, data_norm=1.0)
    # The probe sees the Laplace release only; its pairing needs the same clip on D and D′.
    clips = [estimator.set_params(random_state=np.random.PCG64(0)).fit(**data).l1_norm_ for data in pair]
    assert clips[0] is not None and clips[0] == clips[1]
    return rounding_probe(estimator.set_params(random_state=None), pair, random_state=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_l1_margin_probe_accepts_pca(dtype):
    """Check that the clipped, quantised canary moves the release by at most its sensitivity."""
    probe = _margin_probe(dtype)
    assert probe.passed, str(probe)
    assert probe.ratio > 0.99  # the canary is at the boundary: the probe tests something


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_l1_margin_probe_rejects_clip_without_margin(dtype, monkeypatch):
    """Check that the probe rejects the L1 clip scaled to L itself, before rounding to nearest."""
    monkeypatch.setattr(exact_sums, "_l1_margin", lambda l1_norm, step: float(l1_norm))
    probe = _margin_probe(dtype)
    assert not probe.passed, str(probe)


@pytest.mark.parametrize("n_features", [4, 5, 20])
def test_recording_sees_the_clip_release(n_features):
    """Check that the harness records the quantile of "auto" at its share of ε, with the rest."""
    estimator = PCA(epsilon=1.0, delta=0.0)
    check_releases_match_declared_cost("PCA", estimator, n_features=n_features)
    X = np.random.default_rng(0).uniform(-1.0, 1.0, (40, n_features))
    with record_releases() as drawn:
        fitted = PCA(epsilon=1.0, data_norm=2.0, random_state=0).fit(X)
    assert fitted.l1_norm_ is not None
    assert [event for event in drawn if isinstance(event, ExponentialEvent)] == [ExponentialEvent(0.1)]


@pytest.mark.parametrize("cls", [*BROKEN, PCAAutoL1ClipNotCharged], ids=lambda cls: cls.__name__)
def test_recording_rejects_broken_clip(cls):
    """Check that the harness catches a clip drawn with another ε than declared, and a
    Laplace release drawn for the whole ε as if the clip were free."""
    with pytest.raises(AssertionError, match="undeclared"):
        check_releases_match_declared_cost(cls.__name__, cls(epsilon=1.0, delta=0.0), n_features=5)
