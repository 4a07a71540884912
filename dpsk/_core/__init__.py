# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Compiled kernels (Cython). Loops only: no validation policy, no calibration.

Importing this package checks that the extensions were built and turns a missing build
into a readable :class:`ImportError` instead of a cryptic one deep inside an estimator.
"""

import os as _os


def _raise_build_error(exc):
    here = _os.path.dirname(__file__)
    try:
        contents = sorted(f for f in _os.listdir(here) if not f.startswith("__"))
    except OSError:  # pragma: no cover - directory vanished
        contents = []
    raise ImportError(
        f"{exc}\n\n"
        "dpsk's compiled kernels (dpsk/_core) are not built, so dpsk cannot be imported "
        f"from {_os.path.dirname(here)}.\n"
        "Install dpsk with `pip install .` from the source checkout (this compiles the "
        "Cython extensions), or, for development, build them in place with\n"
        "    python setup.py build_ext --inplace\n"
        "If you installed dpsk and still see this, check that you are not importing it "
        "from the source folder (run Python from another directory).\n"
        f"Contents of {here}: {', '.join(contents) or '(empty)'}"
    ) from exc


try:
    from dpsk._core import _random  # noqa: F401
except ImportError as _exc:  # pragma: no cover - exercised by tests/test_build.py in a subprocess
    _raise_build_error(_exc)
