# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared docstring text, written once and injected with :class:`Substitution`.

Usage::

    @Substitution(epsilon=_shared_docs["epsilon"], random_state=_shared_docs["random_state"])
    class Foo:
        '''...

        Parameters
        ----------
        {epsilon}

        {random_state}
        '''
"""

import re

__all__ = ["Substitution", "_shared_docs"]


class Substitution:
    """Decorator filling ``{name}`` placeholders of a docstring with shared snippets."""

    def __init__(self, **snippets):
        self.snippets = {k: v.strip("\n") for k, v in snippets.items()}

    def __call__(self, obj):
        if obj.__doc__:
            obj.__doc__ = obj.__doc__.format(**{k: _indented(v, obj.__doc__, k) for k, v in self.snippets.items()})
        return obj


def _indented(snippet, doc, name):
    """``snippet`` with its continuation lines shifted to where ``{name}`` stands in ``doc``.

    Snippets are written for a class docstring (parameter at 4 spaces); a method's
    parameters stand at 8, so the description lines move 4 spaces right there.
    """
    match = re.search(r"^( *)\{" + re.escape(name) + r"\}", doc, re.M)
    extra = len(match.group(1)) - 4 if match else 0
    if extra <= 0:
        return snippet
    return snippet.replace("\n", "\n" + " " * extra)


_shared_docs = {
    "epsilon": """epsilon : float, default=1.0
        Privacy parameter ε > 0. Smaller is more private and noisier. ``float("inf")``
        gives the non-private model (no noise), recorded as an infinite spend.""",
    "delta": """delta : float, default=0.0
        Privacy parameter δ in [0, 1). ``0`` gives pure ε-DP; a value > 0 allows
        (ε, δ)-DP mechanisms (Gaussian noise), which are usually far more accurate in
        high dimension. Choose δ well below 1/n_samples.""",
    "accountant": """accountant : BudgetAccountant or None, default=None
        Accountant on which each ``fit`` records its spend, and which is checked *before*
        any data is read (:class:`~dpsk.exceptions.BudgetExceededError` if the fit would
        exceed the budget). ``None`` uses the accountant made active by
        ``with accountant:``, if any. Clones (``GridSearchCV``, ``cross_val_score``)
        share the same accountant: their spends are not lost.""",
    "random_state": """random_state : None, int or numpy.random.Generator, default=None
        Source of the privacy noise. ``None`` (recommended) draws fresh entropy from the
        operating system through a cryptographically secure generator, independent of
        numpy's global state. An int makes fits reproducible — for tests and research
        only: whoever knows the seed can remove the noise. No generator or seed derived
        from it is stored on the fitted estimator.""",
    "bounds": """bounds : tuple (lower, upper) or None, default=None
        Public bounds on each feature, as scalars or arrays of shape (n_features,).
        Values outside are clipped: the privacy guarantee holds whatever the data.
        ``None`` derives them from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in ``bounds_``), which
        breaks the guarantee.""",
    "bounds_private": """bounds : tuple (lower, upper), "private", "data" or None, default=None
        Public bounds on each feature, as scalars or arrays of shape (n_features,).
        Values outside are clipped: the privacy guarantee holds whatever the data.
        ``"private"``: estimated inside the fit from a noisy logarithmic histogram of
        each column (:func:`dpsk.stats.bounds`; powers of two), with
        ``bounds_epsilon_share`` of ε (:func:`dpsk.set_config`, 10 %), recorded in the
        fit's one privacy event and stored in ``bounds_`` (:ref:`bounds`). ``None``
        (left out, the default) means ``"private"``. ``"data"`` derives them from the
        data with a :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in
        ``bounds_``), which breaks the guarantee.""",
    "data_norm": """data_norm : float or None, default=None
        Public bound on the L2 norm of each row of X. Rows with a larger norm are
        scaled down to it. ``None`` derives it from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in ``data_norm_``), which
        breaks the guarantee.""",
    "classes": """classes : array-like of shape (n_classes,) or None, default=None
        The public list of class labels. Rows with a label outside it are rejected.
        ``None`` derives the classes from y with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (the set of labels present is
        itself information about the data). ``"private"`` raises a ``ValueError``: a
        private label set is not possible; pass the public label set.""",
    "groups": """groups : array-like of shape (n_samples,) or None, default=None
        The privacy unit of each row (a user id). When given, the guarantee protects
        every user as a whole: neighbouring datasets differ in all rows of one user.
        ``None`` protects each row (item-level privacy).""",
    "sample_weight": """sample_weight : float, array-like of shape (n_samples,) or None, default=None
        Weight of each row, **clipped to [0, 1]**: a weight scales the row's
        contribution, and a weight above 1 counts as 1, so a row never counts more than
        once (scikit-learn's ``BaggingClassifier(bootstrap=True)`` passes bootstrap
        counts as weights: a row drawn k times costs ε, not kε). This deliberately
        differs from scikit-learn, where a weight of 2 equals a duplicated row.
        **Privacy.** Clipped weights leave every sensitivity unchanged (one row
        contributes at most what it contributes unweighted). NaN, infinite or
        negative weights raise a ValueError before anything is released; such an
        error reveals only that the weights left their domain.""",
    "sample_weight_grid": """sample_weight : float, array-like of shape (n_samples,) or None, default=None
        Weight of each row, **clipped to [0, 1]** and rounded down to a multiple of
        1/1024 (the counts stay exact integers, in units of 1/1024, under exact
        integer noise): a weight scales the row's counts, and a weight above 1 counts
        as 1, so a row never counts more than once (scikit-learn's
        ``BaggingClassifier(bootstrap=True)`` passes bootstrap counts as weights: a row
        drawn k times costs ε, not kε). This deliberately differs from scikit-learn,
        where a weight of 2 equals a duplicated row.
        **Privacy.** Clipped weights leave every sensitivity unchanged (one row
        contributes at most what it contributes unweighted). NaN, infinite or
        negative weights raise a ValueError before anything is released; such an
        error reveals only that the weights left their domain.""",
    "privacy_spent_": """privacy_spent_ : PrivacyEvent
        The privacy cost of this fit, as an immutable event (compose it with
        :class:`~dpsk.BudgetAccountant`).""",
}
