# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The offset rounding probe on Dask input (``tests/privacy/test_offset_privacy.py``).

The neighbours of :func:`dpsk.audit.offset_neighbours` (a large common offset in a narrow
public range, the added record where the noise-free change is largest) are handed to the
fits as Dask arrays in 7 chunks: :func:`dpsk.audit.rounding_probe` fits both with
identical noise (drawn on the client, where the probe watches the mechanisms) and checks
that no release's noise-free value moves by more than its declared sensitivity. The
probe's power is checked on the same families by ``test_offset_privacy.py``
(``ToyDPVariance(centring="after")`` is rejected).
"""

import numpy as np
import pytest

from dpsk.audit import offset_neighbours, rounding_probe
from dpsk.utils._testing.registry import FAMILIES, OFFSET_CASES, WIDTH

da = pytest.importorskip("dask.array")

#: The offset cases that run on Dask (the others refuse Dask input).
DASK_CASES = [
    "stats.count",
    "stats.sum",
    "stats.mean",
    "stats.var",
    "stats.var, delta",
    "stats.std",
    "stats.histogram",
    "stats.histogramdd",
    "StandardScaler",
    "MinMaxScaler",
    "GaussianNB",
    "PCA",
    "KMeans",
    "LinearRegression",
    "Ridge",
]


def _as_dask(arguments, n_chunks=7):
    """The fit arguments as Dask arrays, item level (``groups``, one user per row here, left out:
    the probes compare item-level releases)."""
    out = {}
    groups = arguments.get("groups")
    assert groups is None or np.unique(groups).size == len(groups), "one row per user expected"
    for key, value in arguments.items():
        if key == "groups":
            continue
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            size = -(-value.shape[0] // n_chunks)
            value = da.from_array(value, chunks=(size,) + value.shape[1:])
        out[key] = value
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("name", DASK_CASES)
def test_offset_rounding_probe_on_dask(name, family):
    case = OFFSET_CASES[name]
    offset, n_samples = FAMILIES[family]
    estimator = case.make((offset, offset + WIDTH))
    first, second, _ = offset_neighbours(
        estimator,
        n_features=case.n_features,
        candidates=17,
        placements=case.placements,
        return_probe=True,
        n_samples=min(n_samples, 4000),
        rows_per_user=1,  # one row per user: the neighbours differ by one record
    )
    probe = rounding_probe(estimator, (_as_dask(first), _as_dask(second)))
    assert probe.n_releases[0] > 0, "the probe saw no release"
    assert probe.passed, str(probe)


def _naive_moments_chunk(lower, upper, X):
    """A plausible broken Dask reduction: per-chunk float sums Σc and Σc², centred after
    summing (Σc² − 2mΣc + m²n, the defect of issue 14), put on the exact grid."""
    from fractions import Fraction

    from dpsk._core._exact_sums import ExactMoments, exact_moments

    grid = exact_moments(X[:1], lower, upper)  # the public grid (centre, step) only
    c = np.clip(X.astype(np.float64), lower, upper)
    n, s1, s2 = c.shape[0], c.sum(axis=0), (c * c).sum(axis=0)
    m, step = grid.centre, grid.step
    centred1 = s1 - n * m
    centred2 = s2 - 2.0 * m * s1 + m * m * n
    as_int = np.vectorize(lambda v, h: int(round(Fraction(float(v)) / Fraction(float(h)))), otypes=[object])
    return ExactMoments(
        np.array([n], dtype=object),
        as_int(centred1, step)[None],
        as_int(centred2, step * step)[None],
        1,
        m,
        grid.half_width,
        step,
    )


def test_the_probe_rejects_a_naive_dask_reduction(monkeypatch):
    """Validity: the same probe on the same Dask neighbours rejects centring after summing."""
    import dpsk.dask._fit

    monkeypatch.setattr(dpsk.dask._fit, "_moments_chunk", _naive_moments_chunk)
    case = OFFSET_CASES["stats.var"]
    offset, _ = FAMILIES["offset 1e12"]
    estimator = case.make((offset, offset + WIDTH))
    first, second, _ = offset_neighbours(
        estimator,
        n_features=1,
        candidates=17,
        placements=case.placements,
        return_probe=True,
        n_samples=1000,
        rows_per_user=1,
    )
    probe = rounding_probe(estimator, (_as_dask(first), _as_dask(second)))
    assert probe.n_releases[0] > 0
    assert not probe.passed, str(probe)
