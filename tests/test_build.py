# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The compiled kernels load, and a missing build gives a readable error."""

import importlib
import pkgutil
import subprocess
import sys
import textwrap

import numpy as np

import dpsk
import dpsk._core


def test_extension_modules_have_full_dotted_names():
    """Check that every kernel module is importable under its dotted name (needed for pickling)."""
    names = [m.name for m in pkgutil.iter_modules(dpsk._core.__path__)]
    assert "_random" in names
    for name in names:
        module = importlib.import_module(f"dpsk._core.{name}")
        assert module.__name__ == f"dpsk._core.{name}"


def test_bitgen_stream_matches_numpy():
    """Check that kernels read the same raw stream as the Generator's own methods."""
    from dpsk._core._random import _next_uint64_py

    ours = _next_uint64_py(np.random.default_rng(7), 1000)
    raw = np.random.default_rng(7).bit_generator.random_raw(1000)
    np.testing.assert_array_equal(ours, raw)


def test_friendly_import_error_when_core_is_missing(tmp_path):
    """Check that importing dpsk without compiled kernels explains how to build them."""
    pkg = tmp_path / "dpsk"
    (pkg / "_core").mkdir(parents=True)
    src = importlib.util.find_spec("dpsk").submodule_search_locations[0]
    for rel in ("__init__.py", "_core/__init__.py"):
        (pkg / rel).write_text(open(f"{src}/{rel}").read())
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        try:
            import dpsk
        except ImportError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "not built" in out.stdout
    assert "pip install ." in out.stdout


def test_version():
    assert isinstance(dpsk.__version__, str)
