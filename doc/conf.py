# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of dpsk's documentation.

Build (from the repository root)::

    sphinx-build -W --keep-going -b html doc doc/_build/html                    # runs the examples
    sphinx-build -W --keep-going -b html -D plot_gallery=0 doc doc/_build/html  # does not

The build needs no network: no intersphinx, and the theme's assets ship with it.
``tests/test_docs.py`` runs the second command and fails on any warning.
"""

import inspect

import dpsk

# -- Project ---------------------------------------------------------------------------

project = "dpsk"
author = "The dpsk developers"
copyright = "The dpsk developers, BSD-3-Clause"
version = dpsk.__version__
release = dpsk.__version__

# -- General ---------------------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "Thumbs.db", ".DS_Store", "user_guide/_*.rst"]  # _*.rst: included parts
root_doc = "index"
language = "en"
default_role = "literal"

# -- autodoc / autosummary / numpydoc --------------------------------------------------

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"
autodoc_member_order = "groupwise"

# numpydoc renders the Parameters / Attributes / Notes sections; the class pages list
# their methods through the autosummary template instead of numpydoc's member tables.
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# Docstring problems that make a page wrong or unreadable fail the build (the docs
# test runs with -W): unknown or misspelt parameters, and a missing docstring. The full
# numpydoc rule set (See Also and Examples everywhere, ...) is not enforced.
numpydoc_validation_checks = {"GL08", "PR02", "PR10"}
# Members inherited from scikit-learn (get_params, set_output, ...) are not documented
# here (see ``skip_foreign_members``), so they are not validated either.
numpydoc_validation_exclude = {r"\.__\w+__$"}


def skip_foreign_members(app, what, name, obj, skip, options):
    """Document only members defined by dpsk, never those inherited from scikit-learn.

    scikit-learn's own method docstrings refer to its glossary and examples, which do
    not exist here; they are documented in scikit-learn's reference.
    """
    if skip or what != "class":
        return skip
    target = obj.fget if isinstance(obj, property) else obj
    module = (
        getattr(inspect.unwrap(target), "__module__", None) if callable(target) or isinstance(obj, property) else None
    )
    if module is not None and not module.startswith("dpsk"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", skip_foreign_members)


# -- sphinx-gallery --------------------------------------------------------------------


sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Only ``plot_*.py`` scripts are gallery items (``quickstart.py`` and helper modules
    # are not), and all of them run when the gallery is executed.
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"^(?!plot_)",
    # Examples run by default; ``-D plot_gallery=0`` builds their pages without running
    # them (the docs test does, since tests/test_examples.py runs every example). A
    # string, so that the command-line override has the same type (no config warning).
    "plot_gallery": "True",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    # A failing example fails the build (when the examples are run).
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "show_signature": False,
    # "Examples using X" lists on the API pages (included by doc/_templates/autosummary).
    "doc_module": ("dpsk",),
    "backreferences_dir": "modules/generated",
    "reference_url": {"dpsk": None},
}

# -- HTML ------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"dpsk {release}"
html_static_path = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": True,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
