"""The Examples sections of the public docstrings run and print what they show.

Seeded examples print released values, so a change of the noise stream, a default or a
kernel shows up here first (three examples had gone stale unnoticed before this test).
"""

import doctest
import importlib
import pkgutil

import pytest

import dpsk

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(dpsk.__path__, prefix="dpsk.")
    if not info.name.startswith(("dpsk._core", "dpsk.dask"))  # kernels have no examples; Dask is optional
)


@pytest.mark.docs
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {name}"
