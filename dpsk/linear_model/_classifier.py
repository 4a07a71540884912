# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The estimator shell shared by the private linear classifiers (fit protocol, one-vs-rest, predict)."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from dpsk.accounting import ComposedEvent
from dpsk.accounting._calibration import round_down, round_up, split_epsilon
from dpsk.accounting._events import budget_event
from dpsk.base import BOUNDS_CONSTRAINT, DP_PARAMETER_CONSTRAINTS, DaskScoreMixin, DPEstimatorMixin
from dpsk.dask._data import dask_apply, is_dask
from dpsk.linear_model._erm import (
    box_half_widths,
    clip_rows,
    default_regularization,
    fit_private_linear,
    plan_perturbation,
    private_row_bounds,
    release_row_norm,
    store_linear_classifier,
)
from dpsk.linear_model._solver import check_certifiable
from dpsk.linear_model._user_level import USER_LEVEL_NOTES, fit_user_level_classifier
from dpsk.utils._class_weight import (
    BALANCED_SHARE,
    CLASS_WEIGHT_CONSTRAINT,
    class_weights,
    noisy_class_counts,
    row_weights,
)
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._private_bounds import PRIVATE_CONSTRAINT
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils._sparse import ACCEPT_SPARSE
from dpsk.utils.validation import _check_sample_weight_dp, release_generator, resolve_classes

__all__ = ["BasePrivateLinearClassifier", "CLASSIFIER_DOCS"]

#: Parameter, attribute and privacy text shared by LogisticRegression and LinearSVC.
CLASSIFIER_DOCS = {
    **{k: _shared_docs[k] for k in ("epsilon", "accountant", "random_state", "privacy_spent_")},
    "delta": """delta : float, default=0.0
        Privacy parameter δ in [0, 1). ``0``: pure ε-DP with gamma-norm noise. ``> 0``:
        (ε, δ)-DP with Gaussian noise (objective perturbation: Kifer, Smith & Thakurta
        2012; output perturbation: the Gaussian mechanism), far less noise in high
        dimension. Choose δ well below 1/n_samples.""",
    "data_norm": """data_norm : float, "private", "data" or None, default=None
        Public bound R on the L2 norm of each row of X (the features, without the
        intercept constant). Rows with a larger norm are scaled down to it, so the
        guarantee holds whatever the data. ``"private"``: estimated inside the fit as
        the 0.9-quantile of the row norms (:func:`dpsk.stats.bounds`), with
        ``bounds_epsilon_share`` of ε (:func:`dpsk.set_config`, 10 %), part of the fit's
        one privacy event (stored in ``data_norm_``; :ref:`bounds`). ``None`` (left out)
        is ``"private"``, unless ``bounds`` is given: then it is the norm of the bounds'
        corner (public, nothing spent; a larger ``data_norm`` is lowered to it).
        ``"data"`` derives it from the data with a
        :class:`~dpsk.exceptions.PrivacyLeakWarning` (stored in ``data_norm_``), which
        breaks the guarantee.""",
    "bounds": """bounds : tuple (lower, upper) or None, default=None
        Optional public bounds on each feature (scalars or arrays of shape
        (n_features,)), e.g. the documented ranges of min–max scaled features. Values
        outside are clipped to them. With ``method="objective"`` the noise of the
        objective is then drawn from the norm of the box that holds the rows
        (``max(|lower|, |upper|)`` per feature) when that noise is smaller than the
        Euclidean ball's (``delta=0``; about √3 times smaller for features centred in
        their range, for example ``X - 0.5`` for features in [0, 1]) or than the
        Gaussian noise (``delta > 0``; in low dimension), an ε-DP step. Otherwise the
        bounds only clip.""",
    "C": """C : float or None, default=None
        Inverse regularisation strength, as in scikit-learn: the objective is
        ``C Σ loss(y_i (w·x_i + b)) + ½(‖w‖² + (b/intercept_scaling)²)``. ``None`` (the
        default) uses a data-independent rule suited to DP (scikit-learn's C=1 is far too
        weak for private training): with p = n_features + fit_intercept and ε, δ the
        budget of one binary problem, Λ = 0.05·p/ε (ε-DP), 0.05·σ(ε, δ)·sqrt(p)
        ((ε, δ)-DP, σ the Gaussian noise multiplier) or 0.05·(p + 1)·‖k‖/(√3·ε) (the
        box-norm noise of ``bounds``, k the box's half-widths in the scaled
        coordinates) for ``method="objective"``, and
        Λ = sqrt(p/ε) for ``method="output"``, where Λ = 1/(C S²) is the regularisation
        of rows scaled to the unit ball (S = sqrt(data_norm² + intercept_scaling²)). The
        value used is stored in ``C_``.""",
    "fit_intercept": """fit_intercept : bool, default=True
        Fit an intercept, as the weight of a constant feature ``intercept_scaling``
        appended to every row (as scikit-learn's liblinear solver does). That weight is
        regularised like the others and the constant counts in the row norm bound:
        rows become [x, intercept_scaling] / sqrt(data_norm² + intercept_scaling²).""",
    "intercept_scaling": """intercept_scaling : float, default=1.0
        The constant κ appended to each row when ``fit_intercept=True``. Larger values
        regularise the intercept less but scale the features down (the norm bound is
        shared: sqrt(data_norm² + κ²)).""",
    "method": """method : {"objective", "output"}, default="objective"
        ``"objective"``: objective perturbation (a random linear term in the objective,
        Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2, adapted to add/remove
        neighbours), followed by the small output noise of approximate minima
        perturbation. ``"output"``: output perturbation (noise on the minimiser, CMS
        2011, Algorithm 1). Objective perturbation is usually more accurate.""",
    "tol": """tol : float, default=1e-6
        Certified bound γ on the norm of the gradient of the (perturbed, rows-in-the-
        unit-ball, summed-loss) objective at the returned solution, rounding errors
        included. The privacy guarantee covers the returned solution through it (the
        output noise of approximate minima perturbation is calibrated to γ). ``tol``
        also declares the domain's row limit (float64 rounding alone must stay below
        γ/4: about 3·10⁷ rows at 1e-6, 3·10⁹ at 1e-4); more rows are refused before any
        budget is spent, as data outside the domain (:ref:`limitations`).""",
    "max_iter": """max_iter : int, default=100
        Maximum number of Newton steps per binary problem. A fit that does not certify
        ``tol`` in time raises RuntimeError after the budget is spent (the guarantee
        needs the certified solution; not observed in practice: the objective is
        strongly convex and Newton converges quadratically).""",
    "classes": _shared_docs["classes"],
    "fitted": """coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients (of the positive class ``classes_[1]`` when binary). Same dtype as X.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts (zeros when ``fit_intercept=False``).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    data_norm_ : float
        The row norm bound used (``data_norm``, its private estimate, or the
        data-derived value).
    C_ : float
        The C of the objective that was solved (``C``, or the default rule's value).
    n_iter_ : ndarray of shape (1,) or (n_classes,)
        Newton steps per binary problem.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names.
    class_weight_ : ndarray of shape (n_classes,) or None
        The weight of each class's rows in the loss (in [0, 1]; ``None`` without
        ``class_weight``). With ``"balanced"`` it comes from noisy class counts.
    threshold_ : float
        Only after a fit with ``groups``: the threshold h (a user's rows weigh at most h
        rows), chosen privately.""",
    "privacy": """**Privacy.** ε-DP (``delta=0``) or (ε, δ)-DP under the add/remove-one-row
    relation, assuming the public ``data_norm`` or ``bounds`` (and ``classes``; rows are
    clipped, so no assumption is made on the data itself). With ``data_norm="private"``
    the bound is released first (an exponential-mechanism quantile of the row norms with
    ``bounds_epsilon_share`` of ε) and the model with the rest of ε for that bound:
    (ε, δ)-DP by adaptive composition, one recorded event. Released: ``coef_`` and ``intercept_``
    (everything else is public or derived from them, except ``n_iter_``: the solver's
    step count depends on the data and is not covered; do not publish it). Labels are
    mapped to ±1; with K > 2 classes, K one-vs-rest problems each get ε/K and δ/K
    (every row is in every problem: sequential composition). Each binary problem
    spends 99% of its ε (and all its δ) on the perturbed objective and 1% on the
    output noise that makes the guarantee cover the
    *returned*, approximate solution (approximate minima perturbation, Iyengar et al.
    2019); ``method="output"`` spends it all on the output noise. For the logistic loss
    (``LogisticRegression``, pure-ε noise) the objective's noise and the Hessian's change
    are bounded together (a row's curvature ℓ″ = s(1 − s) is small when its gradient s is
    large), which leaves more of ε for the noise than the separate bounds of Chaudhuri et
    al. (about 0.99 instead of 0.75 of ε₁ at the breast_cancer default). With ``bounds``, the
    objective's noise has density ∝ exp(−β‖b‖_K), ‖·‖_K the norm of the box that holds
    every row's gradient (the K-norm mechanism, Hardt & Talwar 2010), when that is
    smaller than the ball's (``delta=0``) or the Gaussian's (``delta > 0``; that step is
    then ε-DP and recorded as such). The analysis (no n in
    the calibration: the objective is a sum, so a neighbour adds or removes one term;
    one rank-one Hessian change; the box norm; the Gaussian variant's profile) is written
    out in ``dpsk/linear_model/_erm.py``. The Gaussian output noise of ``method="output"`` with
    δ > 0 is floating-point safe (:class:`~dpsk.mechanisms.Gaussian`); the gamma-norm
    and Gaussian noise of objective perturbation and the gamma-norm output noise are
    continuous samplers and are not.

    With ``sample_weight`` (clipped to [0, 1]) the objective is ``Σ_i w_i ℓ_i + (Λ/2)‖v‖²``:
    one row's gradient term has norm (and box norm) at most w_i <= 1 and its Hessian
    term is at most w_i·c <= c, so the conditions of Chaudhuri et al. and Kifer et al.
    (and the output perturbation bound) hold with the same constants and the same
    noise. With ``groups`` the sample weights multiply the user weights, which keeps
    each user's total weight at most h.

    """
    + USER_LEVEL_NOTES
    + """ The fit is then a weighted ERM (Epasto et al.'s Algorithm 2):
    ``bounds`` only clip there. ε-DP by objective perturbation with the linear-term
    noise (gamma-norm) scaled by h and the
    determinant term bounded by h·c/μ (a user changes the Hessian by a PSD matrix of
    trace <= h·c, not a rank-one one), default Λ times h; (ε, δ)-DP by output
    perturbation (the minimiser moves by at most (h + 2·tol)/Λ), Gaussian noise,
    default Λ = sqrt(p·h/ε). ``method`` is ignored with ``groups``; the argument is in
    ``dpsk/linear_model/_user_level.py``.
    Domain: finite X, labels in ``classes``, finite, non-negative ``sample_weight``;
    with ``groups``, a user id for every row; at most tol/(4 (γ₆₇ + 5u)) rows, a public
    function of ``tol`` (about 3·10⁷ at the default). Data outside it raise a
    ``ValueError`` before any noise is drawn, which reveals only that the data left the
    domain (:ref:`declared_domain`).""",
}
CLASSIFIER_DOCS["class_weight"] = """class_weight : dict, "balanced" or None, default=None
        Weights of the classes in the loss, as in scikit-learn: a public dict
        ``{label: weight}`` (missing labels weigh 1) or ``"balanced"`` (class c weighs
        n / (k · n_c)). No row may weigh more than 1 (the sensitivity analysis), so the
        weights are divided by their largest when it exceeds 1 — scikit-learn's weights
        with ``C`` divided by that largest weight — and multiplied with the clipped
        ``sample_weight``. ``"balanced"`` needs the class counts, which are data: this
        fit releases a Laplace histogram of the labels with 5% of ε (L1 sensitivity 1)
        inside its one privacy event, and the model gets the other 95% (the linear
        model releases no counts of its own to reuse). Not with ``groups``."""
CLASSIFIER_DOCS["parameters"] = "\n\n    ".join(
    CLASSIFIER_DOCS[name].strip("\n")
    for name in (
        "epsilon",
        "delta",
        "data_norm",
        "bounds",
        "C",
        "fit_intercept",
        "intercept_scaling",
        "method",
        "tol",
        "max_iter",
        "classes",
        "class_weight",
        "accountant",
        "random_state",
    )
)


class BasePrivateLinearClassifier(DaskScoreMixin, DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Linear classifier trained by private ERM (see ``dpsk.linear_model._erm``).

    Subclasses set ``_make_loss()`` and write the public docstring.
    """

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        "data_norm": [Interval(Real, 0, None, closed="neither"), PRIVATE_CONSTRAINT, None],
        "bounds": BOUNDS_CONSTRAINT,
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "method": [StrOptions({"objective", "output"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "classes": ["array-like", None],
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
    }
    # Either public bound suffices: ``bounds`` implies a row norm bound (its corner).
    _alternative_sensitivity_params = (("bounds", "data_norm"),)

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
        data_norm=None,
        bounds=None,
        C=None,
        fit_intercept=True,
        intercept_scaling=1.0,
        method="objective",
        tol=1e-6,
        max_iter=100,
        classes=None,
        class_weight=None,
        accountant=None,
        random_state=None,
    ):
        self.class_weight = class_weight
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.bounds = bounds
        self.C = C
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit the model with a private release of its coefficients.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data. Rows with an L2 norm above ``data_norm`` are scaled down to it.
        y : array-like of shape (n_samples,)
            Class labels (in ``classes`` when given).
        groups : array-like of shape (n_samples,) or None, default=None
            User id of each row. When given, the guarantee protects every user as a
            whole (all their rows): a weighted ERM solved by output perturbation, see
            the Notes. Routed by scikit-learn's metadata routing
            (``set_fit_request(groups=True)``) through pipelines and searches.
        {sample_weight}

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if groups is not None and is_dask(X, y, groups, sample_weight):
            raise ValueError("groups= is not supported with Dask input yet: fit the user-level model in memory")
        if groups is not None:
            if self.class_weight is not None:
                raise ValueError("class_weight is not supported with groups (user-level privacy)")
            return fit_user_level_classifier(self, X, y, groups, sample_weight)
        return self._fit_rows(X, y, sample_weight)

    def _fit_rows(self, X, y, sample_weight=None):
        """Item-level fit: every row is a privacy unit (the add/remove relation)."""
        self._check_privacy_budget(budget_event(self.epsilon, self.delta))
        if is_dask(X, y, sample_weight):  # the same release, solved by a distributed Newton (dpsk.dask)
            from dpsk.dask._newton import fit_linear_classifier

            return fit_linear_classifier(self, X, y, sample_weight)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C", accept_sparse=ACCEPT_SPARSE)
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        classes, y_index = resolve_classes(self, self.classes, y)
        plan_bounds, (data_norm, lower, upper) = private_row_bounds(self, X)
        check_certifiable(X.shape[0], self.tol)
        n_problems = 1 if classes.size == 2 else classes.size
        kappa = float(self.intercept_scaling) if self.fit_intercept else None
        n_params = X.shape[1] + (kappa is not None)
        # class_weight="balanced": a noisy label histogram inside this fit's one event.
        epsilon_model, epsilon_counts = self._class_weight_split(plan_bounds.fit_epsilon)
        epsilon = split_epsilon(epsilon_model, n_problems)
        delta = round_down(self.delta / n_problems)
        loss = self._make_loss()

        def perturbation(data_norm):
            return self._perturbation(data_norm, kappa, lower, upper, epsilon, delta, n_params, loss)

        # A private data_norm is released after the spend: the events of the plan do not
        # depend on it (only its noise scales do), so the cost is known now.
        scale, lam, plan = perturbation(data_norm)
        cost = plan_bounds.cost(ComposedEvent(plan.events * n_problems))
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight))
        counts = None
        if epsilon_counts:
            count_mechanism, counts = noisy_class_counts(y_index, classes.size, epsilon_counts, rng, sample_weight)
            cost = plan_bounds.cost(
                ComposedEvent((count_mechanism.privacy_event(classes.size), *plan.events * n_problems))
            )
        plan_bounds.bind(rng)
        self._spend_privacy_budget(cost, note=plan_bounds.note)
        self.class_weight_ = class_weights(self.class_weight, classes, None if counts is None else counts())
        sample_weight = row_weights(self.class_weight_, y_index, sample_weight)
        if "data_norm" in plan_bounds:
            data_norm = release_row_norm(plan_bounds, X, lower, upper)
            scale, lam, plan = perturbation(data_norm)
        rows = self._clip_rows(X, data_norm, lower, upper)
        return self._fit_problems(
            n_problems,
            lambda positive: (rows, np.where(y_index == positive, 1.0, -1.0)),
            loss,
            plan,
            (data_norm, lam, scale, kappa),
            rng,
            (classes, X.dtype),
            weights=sample_weight,
        )

    def _fit_problems(self, n_problems, problem, loss, plan, geometry, rng, output, **options):
        """Solve and release the binary problems (one-vs-rest), then set the fitted attributes.

        ``problem(positive)`` gives the rows and labels of the problem of class index
        ``positive`` (as ``fit_private_linear`` takes them); ``geometry`` is
        ``(data_norm, Λ, S, κ)``; ``output`` is ``(classes, dtype)``; ``options`` go to
        ``fit_private_linear``.
        """
        (data_norm, lam, scale, kappa), (classes, dtype) = geometry, output
        coefs, n_iters = [], []
        for k in range(n_problems):
            w, n_iter = fit_private_linear(
                *problem(1 if n_problems == 1 else k),
                loss,
                plan,
                norm_bound=data_norm,
                scale=scale,
                kappa=kappa,
                tol=self.tol,
                max_iter=self.max_iter,
                rng=rng,
                **options,
            )
            coefs.append(w)
            n_iters.append(n_iter)
        return store_linear_classifier(
            self,
            coefs,
            n_iters,
            classes=classes,
            data_norm=data_norm,
            lam=lam,
            scale=scale,
            kappa=kappa,
            n_features=self.n_features_in_,
            dtype=dtype,
        )

    def _perturbation(self, data_norm, kappa, lower, upper, epsilon, delta, n_params, loss):
        """(S, Λ, plan) of one binary problem with row norm bound ``data_norm`` (public inputs only)."""
        # S >= sqrt(R² + κ²) in exact arithmetic (rounded up), so scaled rows have norm <= 1.
        scale = round_up(math.hypot(data_norm, kappa)) if kappa is not None else data_norm
        box = None if lower is None else box_half_widths(lower, upper, kappa, scale)
        if self.C is None:
            lam = default_regularization(method=self.method, epsilon=epsilon, delta=delta, n_params=n_params, box=box)
        else:
            lam = 1.0 / (float(self.C) * scale * scale)
        plan = plan_perturbation(
            method=self.method,
            epsilon=epsilon,
            delta=delta,
            lam=lam,
            curvature=loss.curvature,
            n_params=n_params,
            tol=self.tol,
            box=box,
            curvature_tracks_slope=getattr(loss, "curvature_tracks_slope", False),
        )
        return scale, lam, plan

    def _class_weight_split(self, epsilon):
        """(ε of the model, ε of the noisy class counts) of the fit's ``epsilon``: the counts
        only for "balanced"."""
        if isinstance(self.class_weight, str):
            return split_epsilon(epsilon, (1.0 - BALANCED_SHARE, BALANCED_SHARE))
        return epsilon, 0.0

    def _clip_rows(self, X, data_norm, lower, upper):
        """The rows clipped to the bounds and to ``data_norm`` (a hook for the audits' broken variants)."""
        return clip_rows(X, data_norm, lower, upper)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def decision_function(self, X):
        """Signed distance to the hyperplane of each class (of the positive class if binary).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        if is_dask(X):  # lazily, chunk by chunk
            return dask_apply(self, "decision_function", X, n_outputs=None if len(self.coef_) == 1 else len(self.coef_))
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False, accept_sparse=ACCEPT_SPARSE)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if is_dask(X):  # lazily, chunk by chunk
            check_is_fitted(self)
            return dask_apply(self, "predict", X, dtype=self.classes_.dtype)
        scores = self.decision_function(X)
        index = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[index]
