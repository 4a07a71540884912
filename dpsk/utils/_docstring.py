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

__all__ = ["Substitution", "_shared_docs"]


class Substitution:
    """Decorator filling ``{name}`` placeholders of a docstring with shared snippets."""

    def __init__(self, **snippets):
        self.snippets = {k: v.strip("\n") for k, v in snippets.items()}

    def __call__(self, obj):
        if obj.__doc__:
            obj.__doc__ = obj.__doc__.format(**self.snippets)
        return obj


_shared_docs = {
    "epsilon": """epsilon : float, default=1.0
        Privacy parameter ε > 0 (finite). Smaller is more private and noisier.""",
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
    "data_norm": """data_norm : float or None, default=None
        Public bound on the L2 norm of each row of X. Rows with a larger norm are
        scaled down to it. ``None`` derives it from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in ``data_norm_``), which
        breaks the guarantee.""",
    "classes": """classes : array-like of shape (n_classes,) or None, default=None
        The public list of class labels. Rows with a label outside it are rejected.
        ``None`` derives the classes from y with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (the set of labels present is
        itself information about the data).""",
    "groups": """groups : array-like of shape (n_samples,) or None, default=None
        The privacy unit of each row (a user id). When given, the guarantee protects
        every user as a whole: neighbouring datasets differ in all rows of one user.
        ``None`` protects each row (item-level privacy).""",
    "privacy_spent_": """privacy_spent_ : PrivacyEvent
        The privacy cost of this fit, as an immutable event (compose it with
        :class:`~dpsk.BudgetAccountant`).""",
}
