# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The common tests pass with the oldest supported scikit-learn (declared in pyproject.toml).

The newest scikit-learn is what the suite runs with. For the oldest, this slow test
installs the oldest supported release's wheel (``pip install --no-deps --target``, from
``$DPSK_WHEEL_DIR`` or /opt/wheels if a wheel is there, else from PyPI through pip's
cache) into a throwaway folder that shadows the installed scikit-learn on
``PYTHONPATH``, and runs tests/test_common.py in a subprocess: the same Python, numpy,
scipy and dpsk build, only scikit-learn differs. Bounded: about a minute, 15 minutes at
most. To run by hand::

    pip install --no-deps --target /tmp/sk16 "scikit-learn==1.6.*"
    PYTHONPATH=/tmp/sk16 python -m pytest tests/test_common.py
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[1]
WHEEL_DIRS = [os.environ.get("DPSK_WHEEL_DIR", ""), "/opt/wheels"]


def oldest_supported_sklearn():
    with open(REPO / "pyproject.toml", "rb") as f:
        dependencies = tomllib.load(f)["project"]["dependencies"]
    (spec,) = [d for d in dependencies if re.match(r"scikit-learn\b", d)]
    return re.search(r">=\s*([\d.]+)", spec).group(1)


def _run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


@pytest.mark.slow
def test_common_tests_pass_with_oldest_supported_sklearn(tmp_path):
    version = oldest_supported_sklearn()
    assert version == "1.6", "update this test's documentation if the minimum changes"
    requirement = f"scikit-learn=={version}.*"
    target = tmp_path / "site"
    local = [d for d in WHEEL_DIRS if d and list(Path(d).glob(f"scikit_learn-{version}.*.whl"))]
    source = ["--no-index", "--find-links", local[0]] if local else []
    install = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--only-binary=:all:",
            "--target",
            str(target),
            *source,
            requirement,
        ],
        timeout=300,
    )
    if install.returncode != 0:
        pytest.skip(f"could not obtain {requirement} (no local wheel, no index): {install.stderr[-500:]}")

    import dpsk

    # The subprocess runs outside the source tree (which may hold an uncompiled dpsk) and
    # finds dpsk where this process found it: site-packages, or an in-place build.
    dpsk_root = str(Path(dpsk.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), dpsk_root, os.environ.get("PYTHONPATH", "")])}
    probe = _run(
        [sys.executable, "-c", "import sklearn, dpsk; print(sklearn.__version__); print(dpsk.__file__)"],
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    shadow_version, dpsk_file = probe.stdout.split()
    assert shadow_version.startswith(version + "."), shadow_version
    assert Path(dpsk_file).resolve() == Path(dpsk.__file__).resolve(), "the subprocess must test the same dpsk build"

    run = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(REPO / "tests" / "test_common.py"),
            "--rootdir",
            str(REPO),
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
        ],
        env=env,
        cwd=tmp_path,
        timeout=900,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, f"scikit-learn {shadow_version}:\n{run.stdout[-4000:]}\n{run.stderr[-2000:]}"
    assert " passed" in summary, summary
