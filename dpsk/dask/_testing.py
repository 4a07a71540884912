# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the Dask equality tests (tests/dask) share: the chunkings, the Generator, the chunked arrays."""

import numpy as np

N = 1536
#: 1, 7 and 64 chunks, and ragged chunks with a one-row and an empty chunk.
CHUNKINGS = [(N,), (220,) * 6 + (N - 6 * 220,), (24,) * 64, (1, 2, 0, 1000, 533)]


def _rng(seed=2024):
    """A fresh Generator: two fits given copies draw the same noise."""
    return np.random.Generator(np.random.PCG64(seed))


def _dask(values, chunks):
    """``values`` as a Dask array chunked along its rows as ``chunks`` says."""
    import dask.array as da

    values = np.asarray(values)
    assert sum(chunks) == values.shape[0]
    return da.from_array(values, chunks=(chunks,) + tuple((s,) for s in values.shape[1:]))
