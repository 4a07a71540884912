# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation of a pipeline's steps and input before any step reads the data.

:class:`dpsk.pipeline.Pipeline` checks the budget of every step first
(``dpsk.accounting._preflight``) and then, with the functions here, everything that can
be checked on public metadata or by running each step's own input validation up to its
first spend, so that a fit that would fail does so before anything is spent.
"""

from sklearn import get_config
from sklearn.base import BaseEstimator, clone

from dpsk.accounting._preflight import is_dp_estimator, named_dp_steps

__all__ = ["validate_classes", "validate_input", "validate_sparsity", "validate_steps"]


class _Validated(Exception):
    """Raised by the validation probe when a step reaches its spend: its input was accepted."""


class _ValidationProbe:
    """Accountant of a step fitted only to validate its input: accepts the check, stops at the spend.

    The fit protocol validates the data after the budget check and before the spend,
    and releases nothing before the spend: a fit stopped there has read the data but
    released nothing.
    """

    def check_event(self, event):
        return True

    def record(self, event):
        raise _Validated()

    def __deepcopy__(self, memo):
        return self


def _estimators_in(obj):
    """``obj`` and every estimator among its parameters, at any depth."""
    found = [obj]
    if isinstance(obj, BaseEstimator):
        found.extend(v for v in obj.get_params(deep=True).values() if isinstance(v, BaseEstimator))
    return found


def validate_steps(estimator):
    """Validate the parameters of ``estimator`` and of every estimator inside it (no data read)."""
    if get_config().get("skip_parameter_validation", False):
        return
    for obj in _estimators_in(estimator):
        validate = getattr(obj, "_validate_params", None)
        if validate is not None:
            validate()


def _branches(step, X):
    """``(estimator, its input)`` for each branch of a column transformer or feature union, else ``step``.

    Branches are fitted independently of each other, so each can be validated on its
    own part of ``X``.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion

    from dpsk.utils._sklearn_compat import _safe_indexing

    if isinstance(step, ColumnTransformer):
        for _, transformer, columns in step.transformers:
            if isinstance(transformer, str):  # "drop", "passthrough"
                continue
            yield transformer, _safe_indexing(X, columns(X) if callable(columns) else columns, axis=1)
    elif isinstance(step, FeatureUnion):
        for _, transformer in step.transformer_list:
            if not isinstance(transformer, str):
                yield transformer, X
    else:
        yield step, X


def validate_input(step, X, y):
    """Run ``step``'s input validation on (X, y) up to its first spend, releasing nothing.

    Each branch of the step (each transformer of a column transformer or feature union,
    on its columns; else the step itself) is fitted as a clone whose DP estimators spend
    on a :class:`_ValidationProbe`: a DP estimator validates its data and stops at its
    spend (an exception caught here), releasing nothing; non-DP estimators before it
    fit as usual on the clone, which is discarded. Any other exception (a wrong dtype,
    a sparse matrix a step cannot take, a number of features that does not match
    ``bounds``, an unknown column) is what the real fit would raise, and is raised now,
    before anything was spent. Inside one branch, what comes after its first DP
    estimator is not validated (it would need that estimator's release). Warnings of
    the probe are silenced (the real fit gives them).
    """
    import warnings

    if step is None or (isinstance(step, str) and step == "passthrough"):
        return
    probe_accountant = _ValidationProbe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for branch, X_part in _branches(step, X):
            probe = clone(branch)
            for name, dp_step in named_dp_steps(probe):
                if dp_step is probe:
                    probe.set_params(accountant=probe_accountant)
                else:
                    probe.set_params(**{f"{name}__accountant": probe_accountant})
            try:
                if y is None:
                    probe.fit(X_part)
                else:
                    probe.fit(X_part, y)
            except _Validated:
                pass


def validate_classes(final_step, y):
    """Check ``y`` against the public ``classes`` of a final DP classifier (as its fit would)."""
    from dpsk.utils.validation import resolve_classes

    if y is None or not is_dp_estimator(final_step):
        return
    classes = final_step.get_params(deep=False).get("classes")
    if classes is not None:
        resolve_classes(final_step, classes, y)


def _output_is_sparse(step, sparse_in):
    """Whether ``step``'s output is sparse: True/False when its public parameters tell, else None."""
    if step is None or step == "passthrough":
        return sparse_in
    if is_dp_estimator(step):
        return False  # dpsk's transformers release dense arrays
    params = step.get_params(deep=False)
    if isinstance(params.get("sparse_output"), bool):
        return params["sparse_output"]
    return None


def validate_sparsity(named_steps, X):
    """Refuse, before any step spends, a step that cannot take the sparse matrix it would get.

    Follows the pipeline's steps while their output's sparsity is known from public
    parameters (``sparse_output`` of an encoder, dpsk's dense outputs) and checks each
    step's ``input_tags.sparse``. The first step is checked by its own validation.
    """
    import scipy.sparse
    from sklearn.utils import get_tags

    sparse = scipy.sparse.issparse(X)
    producer = "the input X"
    for position, (name, step) in enumerate(named_steps):
        if step is None or step == "passthrough":
            continue
        if sparse and position > 0 and not get_tags(step).input_tags.sparse:
            raise TypeError(
                f"Step {name!r} ({type(step).__name__}) does not accept sparse input, and {producer} is "
                "sparse. Make the earlier step's output dense (for example sparse_output=False), or "
                "choose a step that takes sparse matrices. No step was fitted and nothing was spent."
            )
        sparse = _output_is_sparse(step, sparse)
        if sparse is None:
            return
        producer = f"the output of step {name!r} ({type(step).__name__})"
