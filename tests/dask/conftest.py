# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
import importlib.util

import pytest

if importlib.util.find_spec("dask") is None:  # the optional extra dpsk[dask] is missing
    collect_ignore_glob = ["test_*.py"]
    dask = None
else:
    import dask
    import dask.callbacks


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    """Every test computes on the synchronous scheduler (fast, deterministic), unless it
    starts its own cluster."""
    with dask.config.set(scheduler="synchronous"):
        yield


class ComputeCounter(dask.callbacks.Callback if dask is not None else object):
    """Counts the graphs the local schedulers start (``_start``)."""

    def __init__(self):
        super().__init__()
        self.computes = 0

    def _start(self, dsk):
        self.computes += 1


@pytest.fixture
def computes():
    with ComputeCounter() as counter:
        yield counter


@pytest.fixture(autouse=True)
def no_collection_on_the_client(monkeypatch):
    """A Dask fit never turns a whole collection into one in-memory array on the client:
    only the merged statistics come back (``np.asarray(dask_array)`` fails in these tests)."""
    import dask.array as da

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask collection was materialised on the client")

    monkeypatch.setattr(da.Array, "__array__", refuse)
