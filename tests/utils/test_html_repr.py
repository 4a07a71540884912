# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's HTML diagram of dpsk estimators: links to dpsk's API pages, ε per step."""

import re

from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import estimator_html_repr

from dpsk.linear_model import LogisticRegression
from dpsk.model_selection import GridSearchCV
from dpsk.preprocessing import StandardScaler

DOCS = "https://dpsk.readthedocs.io/en/latest/modules/generated/"


def test_each_dpsk_step_links_to_its_api_page_and_shows_its_budget():
    pipe = make_pipeline(
        FunctionTransformer(), StandardScaler(epsilon=0.5, bounds=(0, 1)), LogisticRegression(epsilon=2.0, delta=1e-6)
    )
    html = estimator_html_repr(pipe)
    links = set(re.findall(r'href="([^"#]*)"', html))
    assert DOCS + "dpsk.preprocessing.StandardScaler.html" in links
    assert DOCS + "dpsk.linear_model.LogisticRegression.html" in links
    assert not any("dpsk" in link and "FunctionTransformer" in link for link in links)  # scikit-learn's own
    assert "StandardScaler (ε=0.5)" in html
    assert "LogisticRegression (ε=2, δ=1e-06)" in html
    assert StandardScaler()._get_doc_link() == DOCS + "dpsk.preprocessing.StandardScaler.html"


def test_a_search_shows_its_inner_estimator_with_its_budget():
    html = estimator_html_repr(GridSearchCV(LogisticRegression(epsilon=1.0), {"C": [1.0, 2.0]}, epsilon=0.5))
    assert DOCS + "dpsk.model_selection.GridSearchCV.html" in html
    assert "LogisticRegression (ε=1)" in html
