# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The lint tools are pinned once: requirements-lint.txt, the ``lint`` extra and pre-commit agree.

.ci/run installs requirements-lint.txt (without building dpsk), ``pip install ".[lint]"``
reads pyproject.toml and ``pre-commit`` reads the ``rev`` of each hook repository; a bump
in one place only would lint differently in CI, in a developer's environment and on commit.
"""

import re
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
HOOK_REPOS = {"ruff": "astral-sh/ruff-pre-commit", "cython-lint": "MarcoGorelli/cython-lint"}
#: Pins run by a local pre-commit hook (its ``additional_dependencies``) rather than a hook repository.
LOCAL_HOOK_PINS = {"mypy", "numpy"}


def _pins(lines):
    return dict(line.split("==") for line in (s.strip() for s in lines) if line and not line.startswith("#"))


def test_lint_extra_matches_requirements_file():
    with open(REPO / "pyproject.toml", "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["lint"]
    requirements = _pins((REPO / "requirements-lint.txt").read_text().splitlines())
    assert _pins(extra) == requirements
    assert set(requirements) == set(HOOK_REPOS) | LOCAL_HOOK_PINS


def test_pre_commit_revs_match_requirements_file():
    config = (REPO / ".pre-commit-config.yaml").read_text()
    requirements = _pins((REPO / "requirements-lint.txt").read_text().splitlines())
    for tool, hook_repo in HOOK_REPOS.items():
        match = re.search(rf"repo: https://github\.com/{re.escape(hook_repo)}\s+rev: v?(\S+)", config)
        assert match, f"{hook_repo} missing from .pre-commit-config.yaml"
        assert match.group(1) == requirements[tool], tool


def test_local_mypy_hook_matches_requirements_file():
    config = (REPO / ".pre-commit-config.yaml").read_text()
    requirements = _pins((REPO / "requirements-lint.txt").read_text().splitlines())
    match = re.search(r"id: mypy\b.*?additional_dependencies: \[([^\]]*)\]", config, re.DOTALL)
    assert match, "the local mypy hook is missing from .pre-commit-config.yaml"
    pins = _pins(item.strip().strip("\"'") for item in match.group(1).split(","))
    assert pins == {tool: requirements[tool] for tool in LOCAL_HOOK_PINS}
