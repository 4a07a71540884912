# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's Pipeline, with the whole budget checked before the first step reads the data."""

from sklearn import get_config
from sklearn import pipeline as sk_pipeline
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import has_fit_parameter

from dpsk.accounting._context import labelled_fit
from dpsk.accounting._display import budget_text
from dpsk.accounting._preflight import budget_check, named_dp_steps
from dpsk.pipeline._validation import validate_classes, validate_input, validate_sparsity, validate_steps

__all__ = ["Pipeline", "make_pipeline"]


def _checked_first(method, summary, returns):
    """scikit-learn's Pipeline ``method``, preceded by the budget check of every DP step."""

    def checked(self, X, y=None, sample_weight=None, **params):
        budget_check(self, skip_unaccounted=True)
        if sample_weight is not None:
            params = {**params, **self._weight_params(sample_weight)}
        _preflight(self, X, y)
        snapshot = _snapshot(self)
        with labelled_fit([(step, name) for name, step in named_dp_steps(self)], call=method) as scope:
            before = len(scope.spent)
            try:
                return getattr(super(Pipeline, self), method)(X, y, **params)
            except Exception as error:
                _restore(snapshot)
                _report_spends(error, f"{type(self).__name__}.{method}", scope.spent[before:])
                raise

    checked.__name__ = method
    checked.__qualname__ = f"Pipeline.{method}"
    checked.__doc__ = f"""{summary}

        Parameters
        ----------
        X : iterable
            Training data, as the first step takes it.

        y : iterable, default=None
            Training targets, for the steps that use them.

        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, passed to every step whose ``fit`` takes ``sample_weight``
            (dpsk steps clip them to [0, 1]); with metadata routing enabled, routed to
            the steps that request them. A DP step that takes no weights is refused
            (TypeError, before any step reads the data).

        **params : dict of str -> object
            Parameters of the steps' ``fit`` methods (``step__param``), or, with
            metadata routing enabled, metadata routed to the steps that request it
            (for example ``groups``), as in scikit-learn.

        Returns
        -------
        {returns}

        Raises
        ------
        BudgetExceededError
            Before any step reads the data, if the DP steps that spend on one
            accountant cannot afford their composed cost.
        ValueError
            Before any step spends, for invalid parameters of any step, labels of ``y``
            outside the final classifier's ``classes``, or data the first step rejects.
            An error raised later leaves the pipeline as it was before the call and
            says (in a note) what the DP steps had spent.
        TypeError
            Before any step reads the data, if a meta-estimator around a DP step fits
            it a number of times its parameters do not tell (see
            :func:`dpsk.accounting.check_budget`).
        """
    return checked


def _preflight(pipeline, X, y):
    """Everything that can fail on public metadata, checked before any step spends.

    The parameters of every step; ``y`` against the final step's ``classes``; sparse
    matrices reaching a step that cannot take them (as far as public parameters tell);
    the input validation of the first step (dtype, sparsity, number of features against
    its ``bounds``), run up to its spend on a clone (see
    ``dpsk.pipeline._validation.validate_input``).
    """
    validate_steps(pipeline)
    steps = [step for _, step in pipeline.steps if step is not None and step != "passthrough"]
    if not steps:
        return
    validate_classes(steps[-1], y)
    validate_sparsity(pipeline.steps, X)
    validate_input(steps[0], X, y)


def _snapshot(pipeline):
    """The state of the pipeline and of every estimator in it, to restore after a failed fit."""
    objects = [pipeline, *(v for v in pipeline.get_params(deep=True).values() if isinstance(v, BaseEstimator))]
    unique = {id(obj): obj for obj in objects}
    return list(pipeline.steps), [(obj, dict(vars(obj))) for obj in unique.values()]


def _restore(snapshot):
    steps, states = snapshot
    for obj, state in states:
        vars(obj).clear()
        vars(obj).update(state)
    states[0][0].steps[:] = steps  # scikit-learn replaces fitted steps in this list


def _report_spends(error, call, spent):
    """Add to ``error`` what the DP steps spent before it (the ledger keeps those spends)."""
    if spent:
        lines = [
            f"  {label.model}: {budget_text(_figures(accountant, event))} on {accountant!r}"
            for label, event, accountant in spent
        ]
        note = (
            f"dpsk: {call} failed after {len(spent)} DP step(s) had spent; the pipeline was left as it was "
            "before the call (unfitted), and these spends stay on the ledger:\n" + "\n".join(lines)
        )
    else:
        note = f"dpsk: {call} failed before any DP step spent: nothing was spent."
    error.privacy_spent = [(label, event) for label, event, _ in spent]
    if hasattr(error, "add_note"):
        error.add_note(note)
    elif error.args and isinstance(error.args[0], str):  # Python 3.10
        error.args = (f"{error.args[0]}\n{note}", *error.args[1:])


def _figures(accountant, event):
    """(ε, δ) of one spend as ``accountant`` reports it (a search's ticket: as a default accountant)."""
    from dpsk.accounting import BudgetAccountant

    reporter = accountant if isinstance(accountant, BudgetAccountant) else BudgetAccountant()
    return reporter._figures(event)


def _offered_by_sklearn(method):
    """``available_if`` check: ``method`` exists exactly when scikit-learn's Pipeline offers it.

    (Its own ``available_if`` raises AttributeError when, for example, the final step
    has no ``fit_predict``; the override must not make the method appear.)
    """

    def check(self):
        getattr(super(Pipeline, self), method)
        return True

    return check


class Pipeline(sk_pipeline.Pipeline):
    """scikit-learn's pipeline, with the privacy budget of all its steps checked before it fits.

    A scikit-learn :class:`~sklearn.pipeline.Pipeline` fits its steps one after the
    other, and each DP step checks only its own cost when its turn comes: if the final
    step does not fit the budget, the earlier steps have already read the data and spent
    their part. This pipeline first checks the costs of *all* its DP steps (at any
    depth: column transformers and nested pipelines included), composed on each
    accountant they spend on, with :func:`dpsk.accounting.check_budget`, and only then
    fits them as scikit-learn does. A fit that the budget cannot afford raises
    :class:`~dpsk.exceptions.BudgetExceededError` before any step has read the data.

    It is a subclass of scikit-learn's ``Pipeline`` and takes the same parameters:
    replace ``from sklearn.pipeline import Pipeline`` with ``from dpsk.pipeline import
    Pipeline``. Everything else (``named_steps``, ``set_params``, ``set_output``,
    metadata routing, caching, ``clone``, use inside searches) behaves as in
    scikit-learn.

    Parameters
    ----------
    steps : list of tuples
        ``(name, estimator)`` pairs, fitted in order. Every step but the last must be a
        transformer; a step may be ``"passthrough"`` or None (skipped).

    transform_input : list of str, default=None
        Names of metadata parameters of ``fit`` that the steps transform before they
        reach the step that requests them (metadata routing only), as in scikit-learn.

    memory : str or object with the joblib.Memory interface, default=None
        Cache of fitted transformers, as in scikit-learn. A transformer found in the
        cache is not refitted and spends nothing; the budget check counts it anyway.

    verbose : bool, default=False
        Print the time each step takes to fit.

    Attributes
    ----------
    named_steps : :class:`~sklearn.utils.Bunch`
        The steps by name. Like scikit-learn's pipeline, a fitted pipeline also has
        ``classes_`` (if the final step is a classifier), ``n_features_in_`` and
        ``feature_names_in_`` (if its first step has them).

    See Also
    --------
    make_pipeline : Build a pipeline from estimators, naming the steps automatically.
    dpsk.accounting.check_budget : The check run at the start of every fit.

    Notes
    -----
    **Privacy.** The pipeline adds no release of its own: its guarantee is the
    sequential composition of its DP steps' guarantees (each step's Privacy paragraph
    states its relation and sensitivity assumptions), and steps that are not dpsk
    estimators learn without privacy. Before ``fit``, ``fit_transform`` and
    ``fit_predict``, the cost of one fit of every DP step is found from its
    hyper-parameters (no data is read) and checked, composed, on the accountant each
    step spends on: its ``accountant``, else the one of the enclosing ``with
    accountant:`` block, else the one bound at clone time. Steps with no accountant are
    not checked. Each step then records its own spend as it is fitted, so the ledger
    holds the same events as with scikit-learn's pipeline, each labelled with its step
    path (``"columntransformer__num__standardscaler"``, see
    :meth:`~dpsk.BudgetAccountant.to_frame`). ``fit(sample_weight=...)``
    passes the weights to the steps that take them, so scikit-learn's
    ``BaggingClassifier(bootstrap=True)`` hands its bootstrap counts to the DP steps as
    weights (capped at 1: a row drawn k times counts once) instead of repeated rows.

    **All or nothing.** Before any step spends, the pipeline also validates what public
    metadata allows: the parameters of every step, the labels of ``y`` against the
    final classifier's ``classes``, sparse matrices reaching a step that cannot take
    them (as far as the steps' parameters tell, such as an encoder's
    ``sparse_output``), and the input validation of the first step (of each branch of a
    first column transformer or feature union, on its columns), run on a clone up to its
    spend: its DP estimators read the data there but release nothing and spend nothing.
    A failure that only the data can reveal later (after an earlier step's release)
    leaves the pipeline and its steps as they were before the call (unfitted), and the
    exception carries a note listing what was spent, step by step (ε, δ, accountant),
    and an attribute ``privacy_spent`` with the (label, event) pairs. Those spends stay
    on the ledger: their releases happened.

    Inside :class:`dpsk.model_selection.GridSearchCV`, whose inner fits are prepaid,
    the check has nothing to do. Inside scikit-learn's searches, each fit of the
    pipeline is checked on its own. A step wrapped in a meta-estimator counts as many
    fits as the wrapper makes (bagging: ``n_estimators``); a wrapper whose number of
    fits is not known from its parameters (``OneVsRestClassifier``), or that learns
    from the data outside dpsk (``CalibratedClassifierCV``), is refused with a
    ``TypeError`` before any step reads the data, unless its DP steps spend on no
    accountant (then there is nothing to check).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk import BudgetAccountant, BudgetExceededError
    >>> from dpsk.linear_model import LogisticRegression
    >>> from dpsk.pipeline import make_pipeline
    >>> from dpsk.preprocessing import StandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (200, 3))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> acc = BudgetAccountant(epsilon=1.2)
    >>> pipe = make_pipeline(StandardScaler(epsilon=0.5, bounds=(0, 1), accountant=acc),
    ...                      LogisticRegression(epsilon=1.0, data_norm=4.0, classes=[0, 1], accountant=acc))
    >>> try:
    ...     pipe.fit(X, y)
    ... except BudgetExceededError:
    ...     print("refused; spends recorded:", len(acc))
    refused; spends recorded: 0
    """

    def _weight_params(self, sample_weight):
        """``sample_weight`` as ``step__sample_weight`` for every step whose ``fit`` takes it.

        Raises TypeError (before any step reads the data) if a step holding a DP
        estimator does not take it: its rows would count without their weights.
        """
        if get_config().get("enable_metadata_routing", False):
            return {"sample_weight": sample_weight}
        params = {}
        for name, step in self.steps:
            if step is None or isinstance(step, str):
                continue
            if has_fit_parameter(step, "sample_weight"):
                params[f"{name}__sample_weight"] = sample_weight
            elif named_dp_steps(step):
                raise TypeError(
                    f"step {name!r} holds a DP estimator but its fit takes no sample_weight, so the "
                    "weights (e.g. the bootstrap counts of BaggingClassifier) cannot reach it. Nothing "
                    "was read or spent."
                )
        return params

    def _weights_reach_dp_steps(self):
        """Whether ``fit(sample_weight=...)`` hands the weights to every DP step (no routing)."""
        if get_config().get("enable_metadata_routing", False):
            return False
        steps = [step for _, step in self.steps if step is not None and not isinstance(step, str)]
        return all(has_fit_parameter(step, "sample_weight") for step in steps if named_dp_steps(step))

    fit = _checked_first(
        "fit",
        """Check the budget of every DP step, then fit the steps in order.""",
        """self : object
            The fitted pipeline.""",
    )
    fit_transform = available_if(_offered_by_sklearn("fit_transform"))(
        _checked_first(
            "fit_transform",
            """Check the budget of every DP step, fit them, and transform with the final one.""",
            """Xt : ndarray of shape (n_samples, n_transformed_features)
            The training data, transformed by every step.""",
        )
    )
    fit_predict = available_if(_offered_by_sklearn("fit_predict"))(
        _checked_first(
            "fit_predict",
            """Check the budget of every DP step, then fit them and ``fit_predict`` the final one.""",
            """y_pred : ndarray
            What the final step's ``fit_predict`` returns.""",
        )
    )


def make_pipeline(*steps, memory=None, transform_input=None, verbose=False):
    """Build a :class:`Pipeline` from estimators, naming each step after its class.

    dpsk's counterpart of :func:`sklearn.pipeline.make_pipeline` (same arguments, same
    step names): the pipeline it returns checks the budget of all its DP steps before
    it fits any of them.

    Parameters
    ----------
    *steps : estimator objects
        The steps, in order.

    memory : str or object with the joblib.Memory interface, default=None
        Cache of fitted transformers (see :class:`Pipeline`).

    transform_input : list of str, default=None
        Metadata transformed by the steps before it reaches the step requesting it
        (metadata routing only).

    verbose : bool, default=False
        Print the time each step takes to fit.

    Returns
    -------
    pipeline : Pipeline
        A :class:`dpsk.pipeline.Pipeline` (a scikit-learn ``Pipeline``).

    See Also
    --------
    Pipeline : The pipeline class, with named steps.

    Notes
    -----
    **Privacy.** Building the pipeline reads no data and spends nothing; its fits are
    checked and charged as described in :class:`Pipeline`.

    Examples
    --------
    >>> from dpsk.naive_bayes import GaussianNB
    >>> from dpsk.pipeline import make_pipeline
    >>> from dpsk.preprocessing import MinMaxScaler
    >>> make_pipeline(MinMaxScaler(bounds=(0, 10)), GaussianNB(bounds=(0, 1), classes=[0, 1]))
    Pipeline(steps=[('minmaxscaler', MinMaxScaler(bounds=(0, 10))),
                    ('gaussiannb', GaussianNB(bounds=(0, 1), classes=[0, 1]))])
    """
    named = sk_pipeline.make_pipeline(*steps).steps
    return Pipeline(named, memory=memory, transform_input=transform_input, verbose=verbose)
