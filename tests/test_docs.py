# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The documentation: it builds without a warning, and documents every public object.

* The Sphinx build (``doc/``) runs with ``-W --keep-going``: a broken reference, a
  malformed docstring or an unlisted page fails the test. The gallery pages are built
  without running the examples (``-D plot_gallery=0``); ``tests/test_examples.py`` runs
  them.
* ``doc/api.rst`` lists every public class and function of every public module.
* The code snippets of the guide pages (``>>>`` blocks) run and print what they show.
* Every public class and function has a numpydoc docstring whose *Notes* hold a
  **Privacy.** paragraph (guarantee, neighbouring relation, sensitivity assumptions,
  what is released), except the objects of :data:`NO_PRIVACY_SECTION`, which release
  nothing, each with its reason.
"""

import doctest
import importlib
import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpsk.utils.discovery import _all_public_modules

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "doc"

#: Public objects that need no Privacy paragraph, and why. Everything else does.
NO_PRIVACY_SECTION = {
    "dpsk.exceptions.BudgetExceededError": "an exception: raised before anything is released",
    "dpsk.exceptions.DetachedAccountantError": "an exception: raised instead of a spend",
    "dpsk.exceptions.AccountantRequiredError": "an exception: raised before anything is read",
    "dpsk.exceptions.PrivacyLeakWarning": "a warning class; the estimators that emit it say when",
    "dpsk.accounting.Budget": "a plain (epsilon, delta) pair returned by the accountant",
    "dpsk.utils.all_estimators": "introspection of the package: no data involved",
    "dpsk.audit.canary_row": "builds a synthetic input row from public parameters",
    "dpsk.audit.canary_neighbours": "builds the two synthetic neighbouring inputs of an audit",
    "dpsk.audit.project_attribute": "builds a projection function for an audit",
    "dpsk.audit.project_output": "builds a projection function for an audit",
    # The contract checks are test helpers for estimator authors (what each one checks
    # is in its summary and in doc/developers/privacy_testing.rst).
    **{
        f"dpsk.utils.estimator_checks.{name}": "a test helper for estimator developers"
        for name in importlib.import_module("dpsk.utils.estimator_checks").__all__
    },
}


def public_objects():
    """``{qualified public name: object}`` for the classes and functions of every public module.

    An object exported by several modules (``dpsk.utils.check_bounds`` and
    ``dpsk.utils.validation.check_bounds``) is listed once, under the shortest name.
    """
    found = {}
    for module_name in _all_public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if not getattr(obj, "__module__", "").startswith("dpsk"):
                continue
            found.setdefault(id(obj), []).append((f"{module_name}.{name}", obj))
    return dict(min(names, key=lambda item: len(item[0])) for names in found.values())


PUBLIC = public_objects()


# ----------------------------------------------------------------- Privacy sections


def notes_section(obj):
    """The Notes section of ``obj``'s numpydoc docstring, as one string."""
    docscrape = pytest.importorskip("numpydoc.docscrape")
    doc = docscrape.ClassDoc(obj) if inspect.isclass(obj) else docscrape.FunctionDoc(obj)
    return "\n".join(doc["Notes"])


def test_public_objects_are_found():
    """Check that the walk finds objects of every kind (the tests below are not vacuous)."""
    for name in (
        "dpsk.linear_model.LogisticRegression",
        "dpsk.stats.mean",
        "dpsk.mechanisms.Laplace",
        "dpsk.accounting.BudgetAccountant",
        "dpsk.audit.audit",
    ):
        assert name in PUBLIC
    assert len(PUBLIC) > 100


def test_exemptions_name_public_objects():
    """Check that every exemption names a public object and gives a reason."""
    assert set(NO_PRIVACY_SECTION) <= set(PUBLIC)
    assert all(len(reason) > 10 for reason in NO_PRIVACY_SECTION.values())


@pytest.mark.parametrize("name", sorted(set(PUBLIC) - set(NO_PRIVACY_SECTION)))
def test_docstring_has_privacy_section(name):
    """Check that the docstring's Notes section holds a **Privacy.** paragraph."""
    obj = PUBLIC[name]
    assert inspect.getdoc(obj), f"{name} has no docstring"
    notes = notes_section(obj)
    assert "**Privacy.**" in notes, f"{name}: no '**Privacy.**' paragraph in the Notes section"


def test_privacy_check_fails_without_a_privacy_paragraph():
    """Check that the check can fail: a Privacy paragraph outside Notes does not count."""

    def undocumented(x):
        """Do something.

        **Privacy.** In the extended summary, not in Notes.

        Parameters
        ----------
        x : float
        """

    assert "**Privacy.**" not in notes_section(undocumented)


def releases_on_data():
    """``{name: object}`` of every public estimator and :mod:`dpsk.stats` function: the
    releases whose Privacy paragraph must state their declared domain."""
    import dpsk.stats
    from dpsk.utils.discovery import all_estimators

    found = {f"{cls.__module__.split('._')[0]}.{name}": cls for name, cls in all_estimators()}
    found.update(
        {
            f"dpsk.stats.{name}": getattr(dpsk.stats, name)
            for name in dpsk.stats.__all__
            if inspect.isfunction(getattr(dpsk.stats, name))
        }
    )
    return found


RELEASES = releases_on_data()


def privacy_states_domain(obj):
    """Whether the Privacy paragraph (Notes, after **Privacy.**) has a ``Domain:`` sentence
    linking the one explanation (doc/limitations.rst, ``declared_domain``)."""
    notes = notes_section(obj)
    privacy = notes[notes.find("**Privacy.**") :] if "**Privacy.**" in notes else ""
    start = privacy.find("Domain: ")
    return start >= 0 and ":ref:`declared_domain`" in privacy[start:]


def test_releases_are_found():
    """Check that the list of releases derives from the public API (estimators and statistics)."""
    assert {"dpsk.naive_bayes.GaussianNB", "dpsk.model_selection.GridSearchCV", "dpsk.stats.mean"} <= set(RELEASES)
    assert len(RELEASES) >= 25
    assert "dpsk.stats.DPResult" not in RELEASES


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_privacy_paragraph_states_the_domain(name):
    """Check that each estimator's and statistic's Privacy paragraph states its declared domain
    (issue 14, finding 4): what data it assumes, and that an error outside reveals only that."""
    assert privacy_states_domain(RELEASES[name]), (
        f"{name}: the Privacy paragraph must end with 'Domain: ... (:ref:`declared_domain`).'"
    )


def test_domain_check_fails_without_a_domain_sentence():
    """Check that the check can fail: a Domain sentence outside the Privacy paragraph does not count."""

    def undocumented(x):
        """Do something.

        Domain: finite values (:ref:`declared_domain`).

        Parameters
        ----------
        x : float

        Notes
        -----
        **Privacy.** ε-DP.
        """

    assert not privacy_states_domain(undocumented)


# ----------------------------------------------------------------- API reference


def documented_in_api_rst():
    """``{module: names}`` listed in the autosummary tables of doc/api.rst."""
    listed = {}
    module = None
    in_table = False
    for line in (DOC / "api.rst").read_text().splitlines():
        match = re.match(r"\.\. currentmodule:: (\S+)", line)
        if match:
            module = match.group(1)
            continue
        if line.startswith(".. autosummary::"):
            in_table = True
            continue
        if in_table:
            if line.startswith("   :") or not line.strip():
                continue
            if line.startswith("   "):
                listed.setdefault(module, set()).add(line.strip())
                continue
            in_table = False
    return listed


def test_api_reference_lists_every_public_object():
    """Check that doc/api.rst lists each public class and function (under one of its names)."""
    listed = documented_in_api_rst()
    documented = {id(getattr(importlib.import_module(m), n)) for m, names in listed.items() for n in names}
    missing = sorted(name for name, obj in PUBLIC.items() if id(obj) not in documented)
    assert not missing, f"public objects missing from doc/api.rst: {missing}"


def test_api_reference_lists_nothing_stale():
    """Check that every name in doc/api.rst exists in its module's ``__all__``."""
    for module_name, names in documented_in_api_rst().items():
        module = importlib.import_module(module_name)
        assert names <= set(module.__all__), f"{module_name}: {sorted(names - set(module.__all__))}"


# ----------------------------------------------------------------- guide snippets

GUIDE_PAGES = sorted(
    path.relative_to(DOC).as_posix()
    for path in DOC.rglob("*.rst")
    if ">>>" in path.read_text() and not path.is_relative_to(DOC / "modules")
)


def test_guide_pages_have_snippets():
    """Check that the snippet test below runs on the user guide (it is not vacuous)."""
    assert "getting_started.rst" in GUIDE_PAGES
    assert "user_guide/accounting.rst" in GUIDE_PAGES


@pytest.mark.filterwarnings("ignore::dpsk.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("page", GUIDE_PAGES)
def test_guide_snippets_run(page):
    """Check that every ``>>>`` example of a documentation page gives the output it shows."""
    result = doctest.testfile(
        str(DOC / page),
        module_relative=False,
        verbose=False,
        report=True,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples of doc/{page} failed (see the output above)"
    )


def test_readme_python_blocks_run():
    """Check that the README's Python example runs (the first page users read)."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert blocks, "README.md has no ```python block"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})


# ----------------------------------------------------------------- the build


def _missing_build_requirements():
    return [
        name
        for name in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "matplotlib")
        if importlib.util.find_spec(name) is None
    ]


@pytest.mark.docs
def test_docs_build_without_warnings(tmp_path):
    """Check that the HTML documentation builds with no warning (examples not run)."""
    missing = _missing_build_requirements()
    if missing:
        pytest.skip(f"the docs build needs {missing}: pip install '.[doc]'")
    # Build from a copy: the build writes generated pages next to its sources.
    ignore = shutil.ignore_patterns("_build", "auto_examples", "generated", "sg_execution_times.rst")
    shutil.copytree(DOC, tmp_path / "doc", ignore=ignore)
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-q",
        "-b",
        "html",
        "-D",
        "plot_gallery=0",
        str(tmp_path / "doc"),
        str(tmp_path / "html"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stderr[-20000:]}"
    assert (tmp_path / "html" / "index.html").exists()
    assert (tmp_path / "html" / "api.html").exists()
