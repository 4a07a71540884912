"""DP-SGD and DP-GD for linear models: SGDClassifier and SGDRegressor.

The engine (Poisson batches, Gaussian noise, the one event, the row count, the clip
margin covering rounding) is :mod:`dpsk.utils._dpsgd`, shared with the MLPs. For a linear
model the per-example gradient of the loss at the margin z_i = W x̃_i (x̃_i = [x_i, 1] with
an intercept) is G_i = r_i x̃_iᵀ with r_i = ∂ℓ/∂z_i (one entry per output), so
‖G_i‖_F = ‖r_i‖·‖x̃_i‖ (the "ghost norm" identity: no batch × parameters tensor), and the
clipped sum Σ_i c_i r_i x̃_iᵀ is one weighted matrix product. The update is
W ← W − η (noisy sum / b + α W), b = q·n the public expected batch size, α W the
(data-independent) L2 penalty's gradient.
"""

from numbers import Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if

from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.utils import _dpsgd
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._dpsgd import DPSGD_CONSTRAINTS, DPSGD_DOCS, DPSGDMixin, privacy_paragraph
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import _check_sample_weight_dp, release_generator

__all__ = ["SGDClassifier", "SGDRegressor"]

#: Clip margin of :func:`clipped_gradient_sum` used alone (the fit takes it from the batch bound).
_CLIP_MARGIN = 1.0 - _dpsgd.MIN_MARGIN


# ---------------------------------------------------------------------------- losses
# Each returns r = ∂ℓ/∂z for margins z (n, k) and targets t (n, k): ±1 for classifiers.


def _log_loss(z, t, _):
    return -t * expit(-t * z)


def _hinge(z, t, _):
    return np.where(t * z < 1.0, -t, 0.0)


def _modified_huber(z, t, _):
    m = t * z
    return np.where(m < -1.0, -4.0 * t, np.where(m < 1.0, -2.0 * t * (1.0 - m), 0.0))


def _squared_error(z, t, _):
    return z - t


def _huber(z, t, huber_epsilon):
    return np.clip(z - t, -huber_epsilon, huber_epsilon)


LOSSES = {
    "log_loss": _log_loss,
    "hinge": _hinge,
    "modified_huber": _modified_huber,
    "squared_error": _squared_error,
    "huber": _huber,
}


def clipped_gradient_sum(
    rows, targets, coef, loss_grad, clip_norm, weights, huber_epsilon=None, *, target=None, intercept=False
):
    """Σ_i w_i·min(1, t/‖G_i‖)·G_i with G_i = r_i x̃_iᵀ, and the per-row clipping factors.

    ``coef`` (k, p). Without ``intercept``, ``rows`` (b, p) are the x̃_i (holding an
    intercept column if any); with it, ``rows`` (b, p − 1) are the x_i and x̃_i = [x_i, 1]
    is never formed (no copy of the data: ‖x̃_i‖² = ‖x_i‖² + 1, the last column of the
    sum is Σ_i c_i r_i). ‖G_i‖ = ‖r_i‖‖x̃_i‖, so nothing of shape (b, k, p) is formed.
    The clip target t is ``target`` (the fit's, from :func:`dpsk.utils._dpsgd.clip_margin`),
    by default C·(1 − 2⁻³⁰).
    """
    if intercept:
        z = rows @ coef[:, :-1].T + coef[:, -1]
        row_sq = np.einsum("ij,ij->i", rows, rows) + 1.0
    else:
        z = rows @ coef.T
        row_sq = np.einsum("ij,ij->i", rows, rows)
    r = loss_grad(z, targets, huber_epsilon)
    norms = np.sqrt(np.einsum("ij,ij->i", r, r)) * np.sqrt(row_sq)
    factor = _dpsgd.clip_factors(norms, clip_norm * _CLIP_MARGIN if target is None else target, weights)
    scaled = r * factor[:, None]
    if not np.all(np.isfinite(norms)):
        scaled[~np.isfinite(norms)] = 0.0  # overflowing rows contribute nothing (not NaN)
    total = scaled.T @ rows
    if intercept:
        total = np.hstack([total, scaled.sum(axis=0)[:, None]])
    return total, factor


def average_start(average, steps):
    """Index of the first step whose iterate enters the average (``steps``: none averaged).

    ``"tail"``: the iterates after the first half of the steps (suffix averaging), True:
    every iterate (scikit-learn's ``average=True``), False: the last iterate only. A
    function of public parameters; averaging the noisy iterates is post-processing.
    """
    if average is False:
        return steps
    return steps // 2 if average == "tail" else 0


def run_dpsgd(X, targets, n_outputs, *, loss_grad, plan, rng, weights, params, init=None):
    """DP-SGD (Poisson batches) or DP-GD (q = 1) on X (n, d) from ``init`` (zeros); returns coef (k, p).

    p = d + 1 with an intercept (its coefficient last), d otherwise. X is read one batch
    at a time (float64 per batch): no copy of the whole data. With ``params["average"]``
    the returned coefficients are the mean of the iterates from :func:`average_start` on.
    """
    n, p = X.shape[0], X.shape[1] + bool(params["fit_intercept"])
    coef = np.zeros((n_outputs, p)) if init is None else np.array(init, dtype=np.float64).reshape(n_outputs, p)
    eta, alpha = float(params["eta0"]), float(params["alpha"])
    penalised = np.ones(p)
    if params["fit_intercept"]:
        penalised[-1] = 0.0  # the intercept is not penalised (as scikit-learn's SGD)

    def clipped_sum(idx, target):
        w = None if weights is None else weights[idx]
        rows = np.asarray(X[idx], dtype=np.float64)
        total, _ = clipped_gradient_sum(
            rows,
            targets[idx],
            coef,
            loss_grad,
            None,
            w,
            params.get("huber_epsilon"),
            target=target,
            intercept=params["fit_intercept"],
        )
        return [total]

    start = average_start(params.get("average", False), plan.steps)
    averaged = np.zeros_like(coef)
    step = [0]

    def update(grads):
        coef[...] -= eta * (grads[0] + alpha * coef * penalised)
        step[0] += 1
        if step[0] > start:  # running mean of the iterates after step ``start``
            averaged[...] += (coef - averaged) / (step[0] - start)

    _dpsgd.run_steps(n, clipped_sum, update, plan=plan, clip_norm=params["clip_norm"], width=n_outputs + p, rng=rng)
    return averaged if plan.steps > start else coef


_SGD_DOCS = {
    **{k: _shared_docs[k] for k in ("epsilon", "accountant", "random_state", "privacy_spent_", "classes")},
    **DPSGD_DOCS,
    "clip_norm": """clip_norm : float, default=1.0
        Bound C on the L2 norm of each row's gradient (all coefficients and the
        intercept together); larger gradients are scaled down to it. The noise is
        proportional to it. No bound on the features is needed.""",
    "eta0": """eta0 : float, default=2.0 (SGDClassifier) or 1.0 (SGDRegressor)
        Constant learning rate of the steps (on the averaged gradient). A fixed,
        data-independent default for ``clip_norm=1`` (the classifier's was chosen on the
        public Adult data among 0.5, 2 and 8); tuning it on private data costs privacy.""",
    "average": """average : "tail" or bool, default="tail"
        Which iterates the coefficients are: ``"tail"`` the mean of those of the second
        half of the steps (suffix averaging), True the mean of all of them (as
        scikit-learn's ``average=True``), False the last one. Averaging damps the
        noise of the last steps and is post-processing of the noisy iterates: it costs
        no privacy. The default was chosen on a validation split of Adult's training
        rows (+0.0025 accuracy at ε = 0.5, +0.0006 at ε = 1 and 4, against the last
        iterate; averaging all iterates was worse, dragged by the first steps).
        With ``partial_fit``, the steps of the call.""",
    "alpha": """alpha : float, default=1e-4
        L2 penalty (the intercept is not penalised); its gradient is data-independent.""",
    "fit_intercept": """fit_intercept : bool, default=True
        Fit an intercept (its gradient is clipped together with the coefficients').""",
    "privacy": privacy_paragraph("all coefficients and the intercept together", "``coef_`` and ``intercept_``"),
}


_PARTIAL_FIT_CLASSIFIER_DOC, _PARTIAL_FIT_REGRESSOR_DOC = (
    _dpsgd.partial_fit_doc("the fitted coefficients (from zeros on the first call)", y_doc=y_doc)
    for y_doc in (None, "y : array-like of shape (n_samples,)\n        Targets.")
)


def _parameters(names):
    return "\n\n    ".join(_SGD_DOCS[n].strip("\n") for n in names)


class _BaseDPSGD(DPSGDMixin, DPEstimatorMixin, BaseEstimator):
    """Shared fit of the DP-SGD linear models; subclasses give targets and the output count."""

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        **DPSGD_CONSTRAINTS,
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "average": ["boolean", StrOptions({"tail"})],
    }

    def _fit_linear(self, X, y, sample_weight, prepare_targets, *, partial=False):
        """The fit protocol: budget check, validation, count, spend, steps.

        ``partial=True`` (``partial_fit``): one epoch over the given rows, planned from
        the public ``n_samples`` alone, continuing from the fitted coefficients if any.
        """
        warm = partial and hasattr(self, "coef_")
        plan = self._check_partial_budget() if partial else self._check_dpsgd_budget()
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], order="C", y_numeric=self._y_numeric, reset=not warm
        )
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        targets = prepare_targets(y)
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight))
        plan, n_public = self._spend_dpsgd(plan, X.shape[0], rng)
        init = None
        if warm:
            init = np.hstack([np.reshape(self.coef_, (targets.shape[1], -1)), np.reshape(self.intercept_, (-1, 1))])
            init = init if self.fit_intercept else init[:, :-1]
        coef = run_dpsgd(
            X,
            targets,
            targets.shape[1],
            loss_grad=LOSSES[self.loss],
            plan=plan,
            rng=rng,
            weights=sample_weight,
            params=self.get_params(),
            init=init,
        )
        d = X.shape[1]
        self.coef_ = coef[:, :d].astype(X.dtype)
        self.intercept_ = (coef[:, d] if self.fit_intercept else np.zeros(coef.shape[0])).astype(X.dtype)
        self.n_samples_ = n_public
        self.noise_multiplier_ = plan.sigma
        self.n_iter_ = plan.steps + (self.n_iter_ if warm else 0)
        return self

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        return X @ self.coef_.T + self.intercept_


def _has_log_loss(estimator):
    if estimator.loss != "log_loss":
        raise AttributeError("probability estimates are only available for loss='log_loss'")
    return True


_CLASSIFIER_PARAMS = (
    "epsilon",
    "delta",
    "clip_norm",
    "noise_multiplier",
    "batch_size",
    "n_samples",
    "max_iter",
    "eta0",
    "average",
    "alpha",
    "fit_intercept",
    "classes",
    "accountant",
    "random_state",
)

_FITTED = """n_samples_ : float
        The public row count used for q and T (``n_samples``, or the noisy count).
    noise_multiplier_ : float
        σ used (``noise_multiplier`` or the calibrated value).
    n_iter_ : int
        Number of steps T.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names."""


@Substitution(
    privacy=_SGD_DOCS["privacy"],
    privacy_spent_=_SGD_DOCS["privacy_spent_"],
    fitted=_FITTED,
    rest=_parameters(_CLASSIFIER_PARAMS),
)
class SGDClassifier(ClassifierMixin, _BaseDPSGD):
    """Linear classifier trained by DP-SGD (or DP-GD): per-example clipping, Gaussian noise.

    scikit-learn's ``SGDClassifier`` with differential privacy: minibatches drawn by
    Poisson sampling, each row's gradient clipped to ``clip_norm``, Gaussian noise on
    the sum, and the whole training accounted as one event. Binary, or one-vs-rest
    heads trained jointly (one gradient per row covering every class, clipped once: no
    split of the budget across classes).

    Parameters
    ----------
    loss : {{"log_loss", "hinge", "modified_huber"}}, default="log_loss"
        The loss; all have a bounded gradient once clipped. ``"log_loss"`` gives
        ``predict_proba``.

    {rest}

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients (of ``classes_[1]`` when binary). Same dtype as X.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    {fitted}

    {privacy_spent_}

    See Also
    --------
    dpsk.linear_model.LogisticRegression : objective perturbation, often better for
        convex problems at small ε when the features are bounded.
    sklearn.linear_model.SGDClassifier : the non-private estimator.

    Notes
    -----
    {privacy}

    Differences from scikit-learn: ``max_iter`` is a fixed number of epochs (no
    ``tol``, no early stopping: each step costs privacy); constant learning rate
    ``eta0``; minibatches of expected size ``batch_size``; ``sample_weight`` is clipped
    to [0, 1]; the penalty is L2 only; the coefficients are by default the mean of the
    second half of the iterates (``average="tail"``).

    References
    ----------
    M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar and L. Zhang,
    "Deep learning with differential privacy", CCS 2016.

    I. Mironov, K. Talwar and L. Zhang, "Rényi differential privacy of the sampled
    Gaussian mechanism", 2019.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from dpsk.linear_model import SGDClassifier
    >>> X, y = make_classification(n_samples=2000, random_state=0)
    >>> clf = SGDClassifier(epsilon=1.0, n_samples=2000, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.7
    True
    """

    _y_numeric = False
    _parameter_constraints = {
        **_BaseDPSGD._parameter_constraints,
        "loss": [StrOptions({"log_loss", "hinge", "modified_huber"})],
        "classes": ["array-like", None],
    }

    def __init__(
        self,
        loss="log_loss",
        *,
        epsilon=1.0,
        delta=1e-5,
        clip_norm=1.0,
        noise_multiplier=None,
        batch_size=256,
        n_samples=None,
        max_iter=15,
        eta0=2.0,
        average="tail",
        alpha=1e-4,
        fit_intercept=True,
        classes=None,
        accountant=None,
        random_state=None,
    ):
        self.loss = loss
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.batch_size = batch_size
        self.n_samples = n_samples
        self.max_iter = max_iter
        self.eta0 = eta0
        self.average = average
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, sample_weight=None):
        """Fit the model by DP-SGD: one private release of its coefficients.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (no bounds needed: gradients are clipped).
        y : array-like of shape (n_samples,)
            Class labels (in ``classes`` when given).
        {sample_weight}

        Returns
        -------
        self : object
            The fitted estimator.
        """

        return self._fit_linear(X, y, sample_weight, lambda y: _dpsgd.class_targets(self, self.classes, y, -1.0))

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(partial_fit=_PARTIAL_FIT_CLASSIFIER_DOC)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """{partial_fit}"""
        public = _dpsgd.partial_classes(self, classes)
        return self._fit_linear(
            X, y, sample_weight, lambda y: _dpsgd.class_targets(self, public, y, -1.0), partial=True
        )

    def decision_function(self, X):
        """Signed score of each class (of ``classes_[1]`` when binary).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        scores = self._decision(X)
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
        scores = self.decision_function(X)
        index = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[index]

    @available_if(_has_log_loss)
    def predict_proba(self, X):
        """Class probabilities (``loss="log_loss"`` only; one-vs-rest heads normalised).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self._decision(X)
        p = expit(scores)
        if p.shape[1] == 1:
            return np.hstack([1.0 - p, p])
        return p / p.sum(axis=1, keepdims=True)

    @available_if(_has_log_loss)
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))


@Substitution(
    privacy=_SGD_DOCS["privacy"],
    privacy_spent_=_SGD_DOCS["privacy_spent_"],
    fitted=_FITTED,
    rest=_parameters(tuple(p for p in _CLASSIFIER_PARAMS if p != "classes")),
)
class SGDRegressor(RegressorMixin, _BaseDPSGD):
    """Linear regression trained by DP-SGD (or DP-GD): per-example clipping, Gaussian noise.

    scikit-learn's ``SGDRegressor`` with differential privacy: minibatches drawn by
    Poisson sampling, each row's gradient clipped to ``clip_norm``, Gaussian noise on
    the sum, and the whole training accounted as one event. No bounds on X or y are
    needed: the clipped gradient bounds every row's influence.

    Parameters
    ----------
    loss : {{"squared_error", "huber"}}, default="squared_error"
        The loss. The squared error's gradient is unbounded before clipping: rows with
        large residuals are down-weighted by the clip (``"huber"`` does it explicitly).
    huber_epsilon : float, default=0.1
        Threshold of the Huber loss (scikit-learn's ``epsilon``, renamed: ``epsilon``
        is the privacy parameter here).

    {rest}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients. Same dtype as X.
    intercept_ : ndarray of shape (1,)
        Intercept.
    {fitted}

    {privacy_spent_}

    See Also
    --------
    dpsk.linear_model.LinearRegression : sufficient statistics with bounded X and y.
    sklearn.linear_model.SGDRegressor : the non-private estimator.

    Notes
    -----
    {privacy}

    Differences from scikit-learn: ``max_iter`` is a fixed number of epochs (no early
    stopping); constant learning rate ``eta0``; minibatches of expected size
    ``batch_size``; ``sample_weight`` is clipped to [0, 1]; the penalty is L2 only; the
    coefficients are by default the mean of the second half of the iterates
    (``average="tail"``).

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from dpsk.linear_model import SGDRegressor
    >>> X, y = make_regression(n_samples=2000, n_features=5, noise=1.0, random_state=0)
    >>> reg = SGDRegressor(epsilon=1.0, n_samples=2000, random_state=0).fit(X, y / y.std())
    >>> reg.score(X, y / y.std()) > 0.5
    True
    """

    _y_numeric = True
    _parameter_constraints = {
        **_BaseDPSGD._parameter_constraints,
        "loss": [StrOptions({"squared_error", "huber"})],
        "huber_epsilon": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        loss="squared_error",
        *,
        huber_epsilon=0.1,
        epsilon=1.0,
        delta=1e-5,
        clip_norm=1.0,
        noise_multiplier=None,
        batch_size=256,
        n_samples=None,
        max_iter=15,
        eta0=1.0,
        average="tail",
        alpha=1e-4,
        fit_intercept=True,
        accountant=None,
        random_state=None,
    ):
        self.loss = loss
        self.huber_epsilon = huber_epsilon
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.batch_size = batch_size
        self.n_samples = n_samples
        self.max_iter = max_iter
        self.eta0 = eta0
        self.average = average
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, sample_weight=None):
        """Fit the model by DP-SGD: one private release of its coefficients.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (no bounds needed: gradients are clipped).
        y : array-like of shape (n_samples,)
            Targets.
        {sample_weight}

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._fit_linear(X, y, sample_weight, lambda y: np.asarray(y, dtype=np.float64).reshape(-1, 1))
        self.coef_ = self.coef_.ravel()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(partial_fit=_PARTIAL_FIT_REGRESSOR_DOC)
    def partial_fit(self, X, y, sample_weight=None):
        """{partial_fit}"""
        self._fit_linear(X, y, sample_weight, lambda y: np.asarray(y, dtype=np.float64).reshape(-1, 1), partial=True)
        self.coef_ = self.coef_.ravel()
        return self

    def predict(self, X):
        """Predicted target of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        return X @ self.coef_ + self.intercept_[0]
