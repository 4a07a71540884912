# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""SecureBitGenerator: ChaCha20 correctness, numpy integration, independence, fork/thread safety."""

import copy
import os
import pickle
import struct
import threading

import numpy as np
import pytest
from scipy import stats

from dpsk._core._random import (
    SecureBitGenerator,
    _chacha20_blocks_py,
    _next_uint64_py,
    _set_chacha_portable_only_py,
    check_out_buffer,
)
from dpsk.utils import check_random_state
from dpsk.utils._testing import ALPHA, assert_fit_with_power, chisquare_pvalue, ks_pvalue

# RFC 8439, section 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
RFC_2_3_2 = (
    "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
)
# RFC 8439, appendix A.1, test vector 1: all-zero key and nonce, counter 0.
RFC_A_1_1 = (
    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
)


def _reference_chacha20_block(key, counter, nonce):
    """Plain-Python ChaCha20 block function written from RFC 8439 section 2.3 (test oracle)."""
    mask = 0xFFFFFFFF

    def rotl(v, c):
        return ((v << c) & mask) | (v >> (32 - c))

    def quarter(s, a, b, c, d):
        s[a] = (s[a] + s[b]) & mask
        s[d] = rotl(s[d] ^ s[a], 16)
        s[c] = (s[c] + s[d]) & mask
        s[b] = rotl(s[b] ^ s[c], 12)
        s[a] = (s[a] + s[b]) & mask
        s[d] = rotl(s[d] ^ s[a], 8)
        s[c] = (s[c] + s[d]) & mask
        s[b] = rotl(s[b] ^ s[c], 7)

    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state += list(struct.unpack("<8I", key)) + [counter & mask] + list(struct.unpack("<3I", nonce))
    work = list(state)
    for _ in range(10):
        for a, b, c, d in (
            (0, 4, 8, 12),
            (1, 5, 9, 13),
            (2, 6, 10, 14),
            (3, 7, 11, 15),
            (0, 5, 10, 15),
            (1, 6, 11, 12),
            (2, 7, 8, 13),
            (3, 4, 9, 14),
        ):
            quarter(work, a, b, c, d)
    return struct.pack("<16I", *[(w + s) & mask for w, s in zip(work, state)])


@pytest.fixture(params=[False, True], ids=["runtime-dispatch", "portable"])
def chacha_path(request):
    """Run a test on the run-time selected ChaCha20 code and on the portable 4-lane code."""
    _set_chacha_portable_only_py(request.param)
    yield request.param
    _set_chacha_portable_only_py(False)


def test_chacha20_block_matches_rfc8439_vectors(chacha_path):
    key = bytes(range(32))
    nonce = bytes.fromhex("000000090000004a00000000")
    assert _chacha20_blocks_py(key, 1, nonce, 1).hex() == RFC_2_3_2
    assert _chacha20_blocks_py(bytes(32), 0, bytes(12), 1).hex() == RFC_A_1_1


def test_chacha20_blocks_match_reference(chacha_path):
    """Check the lane-parallel code against the plain reference, including a counter wrap."""
    rng = np.random.default_rng(0)
    for counter in (0, 7, 2**32 - 5):
        key, nonce = rng.bytes(32), rng.bytes(12)
        ours = _chacha20_blocks_py(key, counter, nonce, 13)
        expected = b"".join(_reference_chacha20_block(key, counter + i, nonce) for i in range(13))
        assert ours == expected


def test_runs_every_numpy_sampler():
    rng = np.random.Generator(SecureBitGenerator())
    assert rng.standard_normal(10).shape == (10,)
    assert rng.standard_normal(10, dtype=np.float32).dtype == np.float32
    assert rng.integers(0, 3, 100, dtype=np.int32).max() <= 2
    assert 0.0 <= rng.random() < 1.0
    assert rng.choice(5, 3, replace=False).size == 3
    assert rng.laplace(0, 1, 4).shape == (4,)


def test_kernels_draw_through_bitgen():
    """Check that kernels see the same raw stream as the generator's own random_raw."""
    bit_generator = SecureBitGenerator()
    rng = np.random.Generator(bit_generator)
    first = _next_uint64_py(rng, 5)
    second = bit_generator.random_raw(5)
    assert len(set(first.tolist()) | set(second.tolist())) == 10


def test_instances_give_different_streams():
    streams = {tuple(SecureBitGenerator().random_raw(4).tolist()) for _ in range(20)}
    assert len(streams) == 20


def test_uniform_doubles_fit(global_random_seed):
    # The secure stream cannot be seeded: global_random_seed only names the run.
    sample = np.random.Generator(SecureBitGenerator()).random(50_000)
    assert_fit_with_power(lambda s: ks_pvalue(sample, stats.uniform(0, s).cdf), 1.0)


def test_bytes_and_32_bit_words_are_uniform():
    rng = np.random.Generator(SecureBitGenerator())
    raw = rng.bit_generator.random_raw(40_000).view(np.uint8)
    support = np.arange(256)
    assert chisquare_pvalue(raw, support, np.ones(256)) > ALPHA
    # Power check: dropping the low bit of every byte is detected.
    assert chisquare_pvalue(raw & 0xFE, support, np.ones(256)) < ALPHA
    small = rng.integers(0, 7, 70_000, dtype=np.int32)  # the next_uint32 path
    assert chisquare_pvalue(small, np.arange(7), np.ones(7)) > ALPHA


def test_check_random_state_none_is_secure_and_ignores_global_seed():
    rng = check_random_state(None)
    assert isinstance(rng, np.random.Generator)
    assert isinstance(rng.bit_generator, SecureBitGenerator)
    np.random.seed(0)
    first = check_random_state(None).random(4)
    np.random.seed(0)
    second = check_random_state(None).random(4)
    assert not np.array_equal(first, second)


def test_state_is_not_exposed_nor_settable():
    bit_generator = SecureBitGenerator()
    assert bit_generator.state == {"bit_generator": "SecureBitGenerator"}
    with pytest.raises(TypeError, match="cannot be seeded"):
        bit_generator.state = {"bit_generator": "SecureBitGenerator"}
    with pytest.raises(TypeError):
        SecureBitGenerator(0)


def test_pickle_and_copies_carry_no_key_and_give_fresh_streams():
    bit_generator = SecureBitGenerator()
    bit_generator.random_raw(3)
    # Two different generators pickle to identical bytes: no state is in the pickle.
    assert pickle.dumps(bit_generator) == pickle.dumps(SecureBitGenerator())
    clone = pickle.loads(pickle.dumps(bit_generator))
    assert isinstance(clone, SecureBitGenerator)
    assert not np.array_equal(clone.random_raw(4), bit_generator.random_raw(4))
    rng = np.random.Generator(SecureBitGenerator())
    for other in (copy.deepcopy(rng), pickle.loads(pickle.dumps(rng))):
        assert isinstance(other.bit_generator, SecureBitGenerator)
        assert not np.array_equal(other.random(4), rng.random(4))


def test_spawn_gives_independent_generators():
    rng = np.random.Generator(SecureBitGenerator())
    children = rng.spawn(3)
    draws = [tuple(child.bit_generator.random_raw(2).tolist()) for child in children]
    assert all(isinstance(c.bit_generator, SecureBitGenerator) for c in children)
    assert len(set(draws)) == 3
    with pytest.raises(ValueError):
        rng.bit_generator.spawn(-1)


def test_threads_share_one_generator_safely():
    """Check that concurrent draws never hand out the same buffered word twice."""
    rng = np.random.Generator(SecureBitGenerator())
    results = [None] * 4

    def work(i):
        results[i] = np.concatenate([rng.bit_generator.random_raw(997) for _ in range(20)])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    words = np.concatenate(results)
    assert words.size == 4 * 20 * 997
    assert np.unique(words).size == words.size


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_children_do_not_replay_the_parent_stream():
    bit_generator = SecureBitGenerator()
    bit_generator.random_raw(5)  # a partly consumed buffer is inherited by the children
    children = []
    for _ in range(2):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: send 8 words and leave without running pytest's teardown
            try:
                os.write(write_fd, bit_generator.random_raw(8).tobytes())
            finally:
                os._exit(0)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            children.append(np.frombuffer(pipe.read(), dtype=np.uint64))
        os.waitpid(pid, 0)
    parent = bit_generator.random_raw(8)
    assert all(child.size == 8 for child in children)
    words = np.concatenate([parent, *children])
    assert np.unique(words).size == 24


def test_check_out_buffer_messages():
    check_out_buffer(np.zeros(3), "x", (np.dtype(np.float64),))
    with pytest.raises(TypeError, match="x must be a numpy.ndarray"):
        check_out_buffer([0.0], "x", (np.dtype(np.float64),))
    with pytest.raises(TypeError, match="dtype float64"):
        check_out_buffer(np.zeros(3, dtype=np.int64), "x", (np.dtype(np.float64),))
    with pytest.raises(ValueError, match="1-dimensional"):
        check_out_buffer(np.zeros((2, 2)), "x", (np.dtype(np.float64),))
    with pytest.raises(ValueError, match="C-contiguous"):
        check_out_buffer(np.zeros(6)[::2], "x", (np.dtype(np.float64),))
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        check_out_buffer(readonly, "x", (np.dtype(np.float64),))
