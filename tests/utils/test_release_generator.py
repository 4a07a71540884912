# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""One stream per release for an integer seed (issue 14, finding 5).

An integer ``random_state`` used to re-create the same stream in every fit: two releases
on neighbouring datasets shared their noise, and their difference was the noise-free
difference -- the record itself.
"""

import os
import signal
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import KFold, cross_validate

from dpsk import stats
from dpsk.mechanisms import ExponentialMechanism, Gaussian, Laplace, RandomizedResponse
from dpsk.model_selection import RandomizedSearchCV
from dpsk.naive_bayes import CategoricalNB
from dpsk.preprocessing import StandardScaler
from dpsk.tree import DecisionTreeRegressor
from dpsk.utils import _random
from dpsk.utils._random import release_digest, release_generator

SECRET = 0.734215


def _neighbours(n=1000, seed=1):
    D = np.random.default_rng(seed).uniform(0.0, 1.0, n)
    return D, np.append(D, SECRET)


def test_neighbouring_sums_with_the_same_int_seed_do_not_share_noise():
    """The issue's reproduction: sum(D') - sum(D) with random_state=0 returned the record."""
    D, D2 = _neighbours()
    a = stats.sum(D, epsilon=1.0, bounds=(0, 1), random_state=0)
    b = stats.sum(D2, epsilon=1.0, bounds=(0, 1), random_state=0)
    noise_a, noise_b = a - D.sum(), b - D2.sum()
    assert abs(noise_a - noise_b) > 1e-6  # before the fix: equal, b - a == SECRET to 1e-12
    assert abs((b - a) - SECRET) > 1e-6


def test_neighbouring_fits_with_the_same_int_seed_do_not_share_noise():
    """Same for an estimator: StandardScaler on D and D' (one more row).

    Before the fix the noisy counts differed by exactly 1 and the noisy sums by the record.
    """
    D, D2 = _neighbours()
    a = StandardScaler(epsilon=1.0, bounds=(0, 1), with_std=False, random_state=0).fit(D[:, None])
    b = StandardScaler(epsilon=1.0, bounds=(0, 1), with_std=False, random_state=0).fit(D2[:, None])
    count_noise_a, count_noise_b = a.n_samples_seen_ - D.size, b.n_samples_seen_ - D2.size
    assert abs(count_noise_a - count_noise_b) > 1e-6
    sum_a, sum_b = a.mean_[0] * a.n_samples_seen_, b.mean_[0] * b.n_samples_seen_
    assert abs((sum_b - sum_a) - SECRET) > 1e-6


def test_sklearn_cross_validation_folds_get_their_own_noise():
    """scikit-learn's clone copies random_state=0 into every fold; the folds' noise differs anyway."""
    X = np.random.default_rng(0).uniform(0, 1, (400, 1))
    est = StandardScaler(epsilon=1.0, bounds=(0, 1), with_std=False, random_state=0)
    folds = list(KFold(4).split(X))
    fitted = cross_validate(est, X, cv=folds, scoring=lambda e, X, y=None: 0.0, return_estimator=True)["estimator"]
    count_noise = [f.n_samples_seen_ - train.size for f, (train, _) in zip(fitted, folds)]
    assert len(set(np.round(count_noise, 9))) == len(folds)  # before the fix: one value


def test_same_data_and_seed_is_reproducible():
    D, _ = _neighbours()
    assert stats.mean(D, epsilon=1.0, bounds=(0, 1), random_state=3) == stats.mean(
        D, epsilon=1.0, bounds=(0, 1), random_state=3
    )
    X = D[:, None]
    first = StandardScaler(epsilon=1.0, bounds=(0, 1), random_state=3).fit(X)
    second = clone(first).fit(X)
    np.testing.assert_array_equal(first.mean_, second.mean_)
    np.testing.assert_array_equal(first.var_, second.var_)


def test_float32_and_float64_copies_digest_the_same():
    X = np.random.default_rng(0).uniform(0, 1, (50, 3)).astype(np.float32)
    assert release_digest("f", (X,)) == release_digest("f", (X.astype(np.float64),))
    assert release_digest("f", (X,)) == release_digest("f", (np.asfortranarray(X),))
    assert release_digest("f", (X,)) != release_digest("f", (X[:-1],))
    assert release_digest("f", (X,)) != release_digest("f", (X.reshape(25, 6),))
    dense = np.eye(4)
    assert release_digest("f", (sp.csr_matrix(dense),)) == release_digest("f", (sp.csc_matrix(dense),))
    a = stats.mean(X, epsilon=1.0, bounds=(0, 1), axis=0, random_state=0)
    b = stats.mean(X.astype(np.float64), epsilon=1.0, bounds=(0, 1), axis=0, random_state=0)
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_other_statistic_parameters_or_seed_give_another_stream():
    D, _ = _neighbours()

    def draw(random_state=0, context=("dpsk.stats.sum", 1.0), data=(D,)):
        return release_generator(random_state, context=context, data=data).random(4)

    reference = draw()
    np.testing.assert_array_equal(reference, draw())
    for other in (
        draw(context=("dpsk.stats.mean", 1.0)),
        draw(context=("dpsk.stats.sum", 2.0)),
        draw(random_state=1),
        draw(data=(D[1:],)),
        draw(random_state=np.random.SeedSequence(0, spawn_key=(1,))),
    ):
        assert not np.array_equal(reference, other)
    # the noise of stats.sum and stats.mean on the same data are drawn from different streams
    s = stats.sum(D, epsilon=1.0, bounds=(0, 1), random_state=0) - D.sum()
    m = stats.mean(D, epsilon=1.0, bounds=(0, 1), random_state=0)
    assert m != stats.mean(D, epsilon=2.0, bounds=(0, 1), random_state=0)
    assert s != stats.sum(D, epsilon=2.0, bounds=(0, 1), random_state=0) - D.sum()


def test_explicit_bit_generators_share_noise_on_purpose():
    """Two fresh PCG64(0) objects: the documented way to get identical noise on different data."""
    D, D2 = _neighbours()
    a = stats.sum(D, epsilon=1.0, bounds=(0, 1), random_state=np.random.PCG64(0))
    b = stats.sum(D2, epsilon=1.0, bounds=(0, 1), random_state=np.random.PCG64(0))
    assert (b - a) == pytest.approx(SECRET, abs=1e-9)


def test_estimator_parameters_other_than_the_seed_change_the_stream():
    D, _ = _neighbours()
    X = D[:, None]
    a = StandardScaler(epsilon=1.0, bounds=(0, 1), with_std=False, random_state=0).fit(X)
    b = StandardScaler(epsilon=1.0, bounds=(0, 1), with_std=False, random_state=0, accountant=None).fit(X)
    c = StandardScaler(epsilon=1.0, bounds=(0, 2), with_std=False, random_state=0).fit(X)
    assert a.mean_[0] == b.mean_[0]  # the accountant does not choose the noise
    assert a.mean_[0] != c.mean_[0]


@pytest.mark.parametrize(
    "make, values",
    [
        (lambda: Laplace(epsilon=1.0, random_state=0), (1.0, 2.0)),
        (lambda: Gaussian(epsilon=1.0, delta=1e-5, random_state=0), (np.array([1.0, 2.0]), np.array([1.0, 3.0]))),
        (lambda: ExponentialMechanism(epsilon=1.0, random_state=0), ([0.0] * 50, [0.0] * 49 + [1.0])),
        (lambda: RandomizedResponse(epsilon=1.0, random_state=0), (np.zeros(200, int), np.r_[np.zeros(199, int), 1])),
    ],
)
def test_mechanisms_with_an_int_seed_derive_per_release(make, values):
    v0, v1 = values
    # Same seed, same value, fresh objects: reproducible.
    assert np.array_equal(make().randomise(v0), make().randomise(v0))
    # Successive calls of one object: fresh noise.
    m = make()
    draws = [np.asarray(m.randomise(v0)) for _ in range(3)]
    assert not all(np.array_equal(draws[0], d) for d in draws[1:])
    if isinstance(v0, float) or (isinstance(v0, np.ndarray) and v0.dtype.kind == "f"):
        # Same seed on neighbouring values: the noise differs.
        noise0 = make().randomise(v0) - np.asarray(v0)
        noise1 = make().randomise(v1) - np.asarray(v1)
        assert not np.allclose(noise0, noise1)


# Digests of these estimators under the names they had before they moved to their own
# modules (main at ccb0ada: dpsk.naive_bayes._discrete.CategoricalNB, ...), which their
# ``_release_name`` pins; recomputed with the BLAKE3 digest ("release digest v2").
_DIGESTS_BEFORE_THE_MOVE = [
    (lambda: CategoricalNB(), "39807c8ea842f4b2afd150ebd0300575"),
    (lambda: DecisionTreeRegressor(), "00e27ba7b917031b70cec141ca57df9f"),
    (lambda: RandomizedSearchCV(CategoricalNB(), {"alpha": [1.0, 2.0]}), "d244d33a3c9673a02def078253480225"),
]


@pytest.mark.parametrize("make, digest", _DIGESTS_BEFORE_THE_MOVE)
def test_moving_a_class_to_another_module_keeps_its_seeded_noise(make, digest):
    assert release_digest(make()).hex()[:32] == digest


def test_a_pinned_release_name_is_not_inherited():
    class Sub(CategoricalNB):
        pass

    assert release_digest(Sub()) != release_digest(CategoricalNB())


# ---------------------------------------------------------------------------------------
# The data digest: canonical (copies of the same data agree) and injective (neighbours differ)
# ---------------------------------------------------------------------------------------


def _digest(X):
    return release_digest("f", (X,))


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 7 elements: small arrays then span many blocks, with a partial last one."""
    monkeypatch.setattr(_random, "_BLOCK", 7)


@pytest.mark.parametrize("block", [None, 7])
def test_copies_of_the_same_values_digest_the_same(monkeypatch, block):
    if block is not None:
        monkeypatch.setattr(_random, "_BLOCK", block)
    codes = np.random.default_rng(0).integers(-50, 50, size=(40, 6))
    reference = _digest(codes.astype(np.float64))
    copies = [
        codes,
        codes.astype(np.int8),
        codes.astype(np.int32),
        codes.astype(np.float32),
        codes.astype(">f8"),  # big-endian
        np.asfortranarray(codes.astype(np.float64)),
        np.asfortranarray(codes.astype(np.float32)),
        np.repeat(codes, 2, axis=1)[:, ::2],  # a non-contiguous view
        codes[::-1][::-1],
        codes.T.copy().T,
    ]
    for copy in copies:
        assert _digest(copy) == reference, (copy.dtype, copy.flags.c_contiguous)
    flags = np.random.default_rng(1).integers(0, 2, size=30)
    assert _digest(flags.astype(bool)) == _digest(flags) == _digest(flags.astype(np.uint8))
    values = np.random.default_rng(2).uniform(-1, 1, size=(25, 4)).astype(np.float32)
    assert _digest(values) == _digest(values.astype(np.float64)) == _digest(np.asfortranarray(values))


def test_the_block_size_does_not_change_the_digest(monkeypatch):
    X = np.random.default_rng(0).normal(size=(31, 5))
    arrays = (X, X.astype(np.float32), np.asfortranarray(X), X[:, ::-1], sp.csc_matrix(np.where(X > 1, X, 0)))
    reference = [_digest(a) for a in arrays]
    for block in (1, 4, 5, 6, 1000):
        monkeypatch.setattr(_random, "_BLOCK", block)
        assert [_digest(a) for a in arrays] == reference


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_number_of_threads_does_not_change_the_digest(monkeypatch, threads):
    """BLAKE3 hashes a large array on several threads; the tree, hence the digest, is fixed."""
    X = np.random.default_rng(0).normal(size=(1 << 17, 8))  # 8 MiB, above _THREADED_SIZE values
    arrays = (X, X.astype(np.float32), np.asfortranarray(X), np.round(X * 100))
    reference = [_digest(a) for a in arrays]
    monkeypatch.setattr(_random, "_threads", lambda: threads)
    assert [_digest(a) for a in arrays] == reference
    small = [_digest(a[:100]) for a in arrays]
    monkeypatch.setattr(_random, "_THREADED_SIZE", 1)  # small arrays on threads too
    assert [_digest(a[:100]) for a in arrays] == small


CHILD_TIMEOUT = 60  # seconds; the child takes well under one


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_digests_large_arrays():
    """blake3.AUTO's process-wide thread pool does not survive a fork: with it, a child
    forked after a large digest hung in its own (multiprocessing's default on Linux)."""
    X = np.random.default_rng(0).normal(size=(_random._THREADED_SIZE, 2))
    reference = _digest(X)  # the parent hashes on threads first
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its digest, then exit at once
        try:
            os.write(write, _digest(X))
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + CHILD_TIMEOUT
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            pytest.fail("the forked child hung in the digest")
        time.sleep(0.05)
    received = os.read(read, 64)
    os.close(read)
    assert received == reference


def test_sparse_matrices_digest_in_canonical_form():
    dense = np.random.default_rng(0).normal(size=(12, 9)) * (np.random.default_rng(1).uniform(size=(12, 9)) < 0.3)
    dense = dense.astype(np.float32).astype(np.float64)  # values that float32 holds exactly
    reference = _digest(sp.csr_matrix(dense))
    coo = sp.coo_matrix(dense)
    # duplicates that sum to the same matrix, entries in shuffled order
    rows, cols, vals = coo.row, coo.col, coo.data
    order = np.random.default_rng(2).permutation(rows.size)
    split = sp.coo_matrix(
        (np.r_[vals[order] / 2, vals[order] / 2], (np.r_[rows[order], rows[order]], np.r_[cols[order], cols[order]])),
        shape=dense.shape,
    )
    unsorted = sp.csr_matrix(dense)
    unsorted.indices = unsorted.indices.copy()
    unsorted.data = unsorted.data.copy()
    for i in range(unsorted.shape[0]):  # reverse the column order inside every row
        lo, hi = unsorted.indptr[i], unsorted.indptr[i + 1]
        unsorted.indices[lo:hi] = unsorted.indices[lo:hi][::-1]
        unsorted.data[lo:hi] = unsorted.data[lo:hi][::-1]
    unsorted.has_sorted_indices = False
    for copy in (sp.csc_matrix(dense), coo, split, unsorted, sp.csr_matrix(dense.astype(np.float32))):
        assert _digest(copy) == reference, copy.format
    assert _digest(sp.csr_matrix(dense)) != _digest(dense)  # a sparse and a dense input are other releases
    changed = dense.copy()
    changed[5, 5] += 1.0
    assert _digest(sp.csr_matrix(changed)) != reference


def _neighbour_digests_differ(X):
    """Whether every neighbour of X tried here digests differently from X and from the others.

    Neighbours: one value changed by one ulp, to -0.0, or (when it is not) to the nearest
    float32, in the first, a middle and the last value (first, middle and last block); a
    row removed (first, middle, last), added or duplicated.
    """
    n = X.shape[0]
    neighbours = []
    for index in (0, X.size // 2, X.size - 1):
        changed = X.copy()
        flat = changed.reshape(-1)
        flat[index] = np.nextafter(flat[index], np.inf)
        neighbours.append(changed)
        for value in (-0.0, np.float32(X.reshape(-1)[index])):
            if value != X.reshape(-1)[index]:
                other = X.copy()
                other.reshape(-1)[index] = value
                neighbours.append(other)
    for row in (0, n // 2, n - 1):
        neighbours.append(np.delete(X, row, axis=0))
        neighbours.append(np.insert(X, row, X[row], axis=0))  # a duplicated row
    neighbours.append(np.vstack([X, X[:1] + 0.5]))
    digests = [_digest(X)] + [_digest(a) for a in neighbours]
    return len(set(digests)) == len(digests)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_any_neighbour_changes_the_digest(small_blocks, dtype):
    X = np.random.default_rng(0).uniform(-1, 1, size=(13, 3)).astype(dtype)  # 39 elements: 6 blocks of 7
    assert _neighbour_digests_differ(X)
    assert _neighbour_digests_differ(np.asfortranarray(X))


@pytest.mark.parametrize(
    "broken",
    [
        lambda real: lambda h, arr: real(h, arr[:-1]),  # leaves the last row's values out
        lambda real: lambda h, arr: real(h, arr.astype(np.float32)),  # rounds to float32
    ],
)
def test_the_neighbour_check_rejects_a_broken_digest(small_blocks, monkeypatch, broken):
    """Validity of the check above: digests that lose values must fail it."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(13, 3))
    monkeypatch.setattr(_random, "_update_float64", broken(_random._update_float64))
    assert not _neighbour_digests_differ(X)
