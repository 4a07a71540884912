# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Randomness of every release: how ``random_state`` becomes a Generator, and one stream per release.

* :func:`check_random_state` — how ``random_state`` becomes a :class:`numpy.random.Generator`
  (``None`` means fresh OS entropy, never numpy's global state);
* :func:`release_generator` / :func:`rekey_generator` — the Generator of one release,
  which for an integer seed also depends on what is released and on which data
  (:func:`release_digest` is that digest).

The public names are re-exported by :mod:`dpsk.utils.validation` and :mod:`dpsk.utils`.
"""

import numbers

import blake3
import numpy as np

from dpsk._core._common import _effective_n_threads

__all__ = ["check_random_state", "is_seed", "rekey_generator", "release_digest", "release_generator"]


def _secure_generator():
    """A fresh Generator on dpsk's cryptographically secure bit generator (ChaCha20, OS-keyed).

    No fallback: if the secure generator cannot be imported, neither can dpsk's kernels,
    and silently degrading to a non-cryptographic generator would hide it.
    """
    from dpsk._core._random import SecureBitGenerator

    return np.random.Generator(SecureBitGenerator())


def check_random_state(random_state):
    """Turn ``random_state`` into a :class:`numpy.random.Generator` for privacy noise.

    Estimators, statistics and mechanisms do not call this for their noise: they call
    :func:`release_generator`, which gives an integer seed a stream of its own for every
    release. This function is the validation and the ``None``/Generator policy they share.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or \
            numpy.random.Generator
        - ``None`` (the default everywhere in dpsk, and the only choice for production):
          a Generator on dpsk's cryptographically secure bit generator, seeded by the
          operating system. Never numpy's global state: ``np.random.seed`` has no effect.
        - an int or a SeedSequence: a reproducible PCG64 Generator. **For tests and
          research only**: anyone who knows the seed can regenerate, and so subtract, the
          noise. (Through :func:`release_generator`, each release derives its own stream
          from the seed and what it releases.)
        - a BitGenerator or a Generator: used as is (it is advanced, not copied).

    Returns
    -------
    rng : numpy.random.Generator

    Raises
    ------
    TypeError
        For a legacy :class:`numpy.random.RandomState` (including numpy's global one), or
        any other type.

    Notes
    -----
    **Privacy.** ``None`` is the only choice for releases: the Generator runs dpsk's
    ChaCha20 bit generator, keyed from the operating system, independent of numpy's
    global state. An int, a SeedSequence or a Generator makes the noise
    reproducible, and whoever knows the seed can remove it. Estimators call
    :func:`release_generator` inside ``fit`` and never store the result.
    """
    if random_state is None:
        return _secure_generator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.BitGenerator):
        return np.random.Generator(random_state)
    seed = _seed_sequence(random_state)
    if seed is not None:
        return np.random.Generator(np.random.PCG64(seed))
    if isinstance(random_state, np.random.RandomState):
        raise TypeError(
            "random_state must not be a legacy numpy.random.RandomState: it may be numpy's "
            "global state, which any np.random.seed() call makes predictable. Pass None "
            "(secure, recommended), an int (tests only) or a numpy.random.Generator."
        )
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence, BitGenerator or "
        f"Generator; got {type(random_state).__name__}"
    )


def _seed_sequence(random_state):
    """The SeedSequence of an int or SeedSequence ``random_state``; None for any other kind."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError("random_state must be a non-negative integer")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    return None


def is_seed(random_state):
    """Whether ``random_state`` is a seed (int or SeedSequence) that :func:`release_generator` derives from."""
    return _seed_sequence(random_state) is not None


# ---------------------------------------------------------------------------------------
# One stream per release
# ---------------------------------------------------------------------------------------
#
# scikit-learn's clone copies an integer seed into every fold of a search, and a user
# re-runs a script on updated data with the same seed: if the seed alone chose the noise,
# fits on neighbouring datasets would share it, and their difference would be the
# noise-free difference of the statistics -- the record itself (issue 14, finding 5). So
# an integer seed is combined with a digest of the release: who releases (class or
# function), with which parameters, on which data. The same call on the same data is
# reproducible (and idempotent); any change of data, parameters or statistic gives an
# independent stream. A Generator or BitGenerator object is the caller's explicit choice
# and is used as is: two fresh ``np.random.PCG64(0)`` give identical noise on different
# data, which is how tests and the audit expose noise-free changes.
#
# The digest reads every value of the data, so its speed matters: it must stay a small
# part of a one-pass fit. It is BLAKE3 (the ``blake3`` package: the BLAKE3 team's SIMD
# implementation, on several threads for large arrays), a cryptographic hash, so no one can
# construct two datasets that share a stream short of breaking it; a keyed universal hash
# would be faster but its key would be public. BLAKE3's tree mode makes the digest
# independent of the number of threads and of how the input is cut into updates.

#: Domain separation of the derived streams from any SeedSequence a user spawns.
_RELEASE_TAG = 0x6470736B  # "dpsk"
#: Parameters that choose the randomness, the ledger or the execution, not the release: the
#: same fit with another ``n_jobs`` gives the same result (sharing noise between two
#: releases of the same data and statistic reveals nothing).
_NOT_RELEASE_PARAMS = ("random_state", "accountant", "n_jobs", "verbose", "pre_dispatch")
#: BLAKE3 key-derivation context of the digest: its domain separation. A new string for
#: every change of the encoding below, which changes every seeded result.
_DIGEST_CONTEXT = "dpsk 2026-11-27 release digest v2"
#: Values per block when an array is converted before hashing (float32, integers, other
#: layouts): bounded temporary memory. The digest does not depend on it.
_BLOCK = 1 << 16
#: Values of an array from which it is hashed on several threads (starting them costs
#: about 0.1 ms); the digest does not depend on it either.
_THREADED_SIZE = 1 << 20


def _hasher(max_threads=1):
    """A BLAKE3 hasher in key-derivation mode (the digest's domain).

    BLAKE3 is a tree hash: the digest depends neither on how the input is cut into
    updates nor on the number of threads. Several threads run in a pool of the hasher's
    own, never ``blake3.AUTO``'s process-wide pool, whose threads do not survive a fork: a
    forked child (multiprocessing, joblib's fork backends) that hashed with it would hang.
    """
    return blake3.blake3(derive_key_context=_DIGEST_CONTEXT, max_threads=max_threads)


def _threads():
    """Threads for hashing one large array: the kernels' own count (the CPUs this process
    may run on, capped by ``OMP_NUM_THREADS`` as in joblib's workers), at most 8."""
    return min(8, _effective_n_threads(None))


def _update_text(h, tag, text):
    data = text.encode("utf-8")
    h.update(tag + len(data).to_bytes(8, "little") + data)


def _blocks(arr):
    """``arr`` cut into runs of leading-axis slices of at most ``_BLOCK`` values (views;
    a slice larger than that is cut the same way along its own axes)."""
    if arr.size == 0:
        return
    row = arr.size // arr.shape[0]
    if row > _BLOCK:
        for part in arr:
            yield from _blocks(part)
        return
    step = _BLOCK // row
    for start in range(0, arr.shape[0], step):
        yield arr[start : start + step]


def _update_float64(h, arr):
    """Hash the values of a numeric array as little-endian float64 in C order, whatever its
    dtype and layout.

    They are hashed by a hasher of their own (on several threads for a large array),
    whose digest ``h`` hashes. A C-contiguous float64 array is hashed in place, in one
    update; any other is converted block by block.
    """
    if arr.ndim == 0:
        arr = arr.reshape(1)
    values = _hasher(_threads() if arr.size >= _THREADED_SIZE else 1)
    if arr.dtype == np.dtype("<f8") and arr.flags.c_contiguous:
        values.update(arr.reshape(-1).view(np.uint8))
    else:
        for block in _blocks(arr):
            values.update(np.ascontiguousarray(block, dtype="<f8").reshape(-1).view(np.uint8))
    h.update(values.digest())


def _update_array(h, value):
    """Hash an array's shape and values, canonically: float32, float64 and integer copies of
    the same values, in any memory layout, digest the same (:func:`_update_float64`);
    integers beyond float64's exact range are hashed as integers."""
    import scipy.sparse as sp

    if sp.issparse(value):
        # Canonical CSR; a canonical CSR input is hashed in place (no copy of the data).
        # Integer index arrays hash as float64 whatever their width (below).
        csr = value if value.format == "csr" and value.has_canonical_format else None
        if csr is None:
            csr = sp.csr_matrix(value, copy=True)
            csr.sum_duplicates()
            csr.sort_indices()
        _update_text(h, b"P", repr(tuple(int(d) for d in csr.shape)))
        _update_array(h, csr.indptr)
        _update_array(h, csr.indices)
        _update_array(h, csr.data)
        return
    arr = np.asarray(value)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]  # a column vector is the same data as a 1-D array (y passed as (n, 1))
    _update_text(h, b"A", repr(tuple(int(d) for d in arr.shape)))
    kind = arr.dtype.kind
    if kind in "iu" and arr.dtype.itemsize >= 8 and arr.size and (int(arr.max()) > 2**53 or int(arr.min()) < -(2**53)):
        kind = "int64"  # not exactly representable as float64: hash the integers themselves
    if kind in "fbiu":
        h.update(b"f")
        _update_float64(h, arr)
    elif kind == "int64":
        h.update(b"i" + np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes())
    elif kind in "USc":
        flat = np.ascontiguousarray(arr).reshape(-1)
        _update_text(h, b"T", flat.dtype.str)
        h.update(flat.tobytes())
    else:  # objects (labels of mixed types, Fractions, ...): element by element
        for item in arr.reshape(-1).tolist():
            _update_value(h, item)


def _qualified_name(obj):
    """``module.qualname`` of a class or function, as the digest names it.

    A class moved to another private module pins the name it had before in its own
    ``_release_name`` (not inherited): the digest, hence the noise an integer seed gives,
    must not change with a refactor.
    """
    pinned = vars(obj).get("_release_name") if isinstance(obj, type) else None
    return pinned or f"{getattr(obj, '__module__', '')}.{obj.__qualname__}"


def _update_value(h, value):
    """Hash a parameter value canonically (no memory addresses: reproducible across runs)."""
    # The common exact types first (the same bytes as their branches below): the
    # parameters of an estimator are hashed on every fit with an integer seed, and the
    # abstract-class checks of ``numbers`` cost more than the hashing.
    kind = type(value)
    if kind is str:
        _update_text(h, b"S", value)
    elif kind is float:
        _update_text(h, b"R", value.hex())
    elif kind is int and abs(value) <= 2**53:
        _update_text(h, b"R", float(value).hex())
    elif value is None:
        h.update(b"N")
    elif isinstance(value, (bool, np.bool_)):
        h.update(b"B1" if value else b"B0")
    elif isinstance(value, numbers.Integral) and abs(int(value)) > 2**53:
        _update_text(h, b"I", str(int(value)))
    elif isinstance(value, numbers.Real):
        _update_text(h, b"R", float(value).hex())  # 1, 1.0 and np.float32(1) alike
    elif isinstance(value, str):
        _update_text(h, b"S", value)
    elif isinstance(value, bytes):
        h.update(b"Y" + len(value).to_bytes(8, "little") + value)
    elif isinstance(value, dict):
        h.update(b"D" + len(value).to_bytes(8, "little"))
        for key in sorted(value, key=str):
            _update_value(h, str(key))
            _update_value(h, value[key])
    elif isinstance(value, (list, tuple)):
        h.update(b"L" + len(value).to_bytes(8, "little"))
        for item in value:
            _update_value(h, item)
    elif isinstance(value, np.ndarray) or hasattr(value, "tocsr"):
        _update_array(h, value)
    elif (
        isinstance(value, type)
        or callable(value)
        and hasattr(value, "__qualname__")
        and not hasattr(value, "get_params")
    ):
        _update_text(h, b"F", _qualified_name(value))
    elif hasattr(value, "get_params"):
        _update_text(h, b"E", _qualified_name(type(value)))
        params = value.get_params(deep=False)
        _update_value(h, {k: v for k, v in params.items() if k not in _NOT_RELEASE_PARAMS})
    else:
        text = repr(value)
        if " at 0x" in text:  # the default repr: only the type is stable across runs
            text = f"{type(value).__module__}.{type(value).__qualname__}"
        _update_text(h, b"O", text)


def release_digest(context, data=()):
    """A 32-byte digest of one release: who releases, with which parameters, on which data.

    Parameters
    ----------
    context : object
        An estimator (its class and ``get_params()`` except ``random_state``,
        ``accountant`` and the execution parameters ``n_jobs``, ``verbose``,
        ``pre_dispatch``), or any combination of strings, numbers, tuples, dicts and
        arrays naming the release (e.g. ``("dpsk.stats.mean", {...parameters...})``).
    data : tuple of array-like, default=()
        The data read by the release (``X, y, groups, ...``; None entries allowed).

    Returns
    -------
    bytes
    """
    h = _hasher()
    _update_value(h, context)
    h.update(b"|data")
    for item in data:
        if item is None:
            h.update(b"N")
        else:
            _update_array(h, item)
    return h.digest()


def release_generator(random_state, *, context, data=()):
    """The Generator of one release's noise, from ``random_state`` and the release.

    Parameters
    ----------
    random_state : None, int, SeedSequence, BitGenerator or Generator
        As for :func:`check_random_state`.
    context, data
        What is released, see :func:`release_digest`. Call after the data is
        validated (the digest reads it), and after the budget check.

    Returns
    -------
    rng : numpy.random.Generator
        - ``None``: fresh secure entropy, as :func:`check_random_state`.
        - a Generator or a BitGenerator: that one, used as is (the caller's explicit
          control: two fresh ``np.random.PCG64(0)`` objects give identical noise on any
          data -- the way tests and :mod:`dpsk.audit` expose noise-free changes).
        - an int or a SeedSequence: a PCG64 Generator on ``SeedSequence(seed entropy,
          spawn_key = seed's spawn key + (tag, digest words))``. The same release on the
          same data gets the same noise (reproducible, idempotent fits); a release on
          other data, with other parameters, or of another statistic gets an
          independent stream.

    Notes
    -----
    **Privacy.** With an integer seed, two releases on neighbouring datasets do not share
    their noise, so their difference does not reveal the noise-free difference. The seed
    is still known to whoever chose it: anyone who knows it and the rest of the data can
    recompute the noise (a seed is for tests and research, never for releases).
    """
    seed = _seed_sequence(random_state)
    if seed is None:
        return check_random_state(random_state)
    digest = release_digest(context, data)
    words = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, len(digest), 4))
    derived = np.random.SeedSequence(
        seed.entropy, spawn_key=(*seed.spawn_key, _RELEASE_TAG, *words), pool_size=seed.pool_size
    )
    return np.random.Generator(np.random.PCG64(derived))


def rekey_generator(rng, random_state, *, context, data=()):
    """Move ``rng`` (from :func:`release_generator` with ``data=()``) to the stream of the
    release on ``data``, in place; a no-op unless ``random_state`` is a seed.

    For releases whose mechanisms must exist before the data is read (their cost is
    checked first) and hold the Generator: the draws made before (public choices: a
    search's candidates) depend on the seed and the context only; every draw after the
    call also depends on the data.

    Parameters
    ----------
    rng : numpy.random.Generator
        From ``release_generator(random_state, context=context)``.
    random_state, context, data
        As for :func:`release_generator`.

    Returns
    -------
    rng : numpy.random.Generator
        The same object.

    Notes
    -----
    **Privacy.** As :func:`release_generator`: after the call, an integer seed's draws
    depend on the data's digest, so releases on neighbouring datasets do not share noise.
    Draws made before the call must not depend on the data.
    """
    if is_seed(random_state):
        rng.bit_generator.state = release_generator(random_state, context=context, data=data).bit_generator.state
    return rng
