# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-layer perceptrons trained by DP-SGD / DP-GD: MLPClassifier and MLPRegressor.

The engine (Poisson batches, Gaussian noise, the one event, the row count, the clip
margin covering rounding) is :mod:`dpsk.utils._dpsgd`, shared with the linear SGD models.
What is specific here is the clipped gradient sum of a stack of dense layers.

Layer l maps its input activations a_l (one row per example) to z_l = a_l W_l + b_l and
a_{l+1} = f(z_l) (the output activation on the last layer). Back-propagation gives
δ_l = ∂ℓ_i/∂z_l for every example: at the output δ = p − y (softmax or logistic output
with the log-loss) or z − y (identity output with the squared error ½‖z − y‖²), and
δ_{l−1} = (δ_l W_lᵀ) ⊙ f'(z_{l−1}). The example's gradient of W_l is the outer product
a_{l,i} δ_{l,i}ᵀ and of b_l is δ_{l,i}, so its squared norm is ‖δ_{l,i}‖²(‖a_{l,i}‖² + 1)
(the ghost-norm identity). The norm of the whole per-example gradient, over all layers
jointly, is the square root of the sum over the layers; the clipping factor c_i comes
from it, and the clipped sum of layer l is a_lᵀ (c ⊙ δ_l) and Σ_i c_i δ_{l,i}: memory
O(batch × widest layer), never batch × parameters.

The update is post-processing of the noisy sums: gradient g = (noisy sum + α W) / b
(b the public expected batch, α on the weights only, as scikit-learn's
``alpha·W / batch``), then SGD with Nesterov momentum or Adam as scikit-learn's solvers.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from dpsk.base import DP_PARAMETER_CONSTRAINTS, DPEstimatorMixin
from dpsk.utils import _dpsgd
from dpsk.utils._docstring import Substitution, _shared_docs
from dpsk.utils._dpsgd import DPSGD_CONSTRAINTS, DPSGD_DOCS, DPSGDMixin, privacy_paragraph
from dpsk.utils._sklearn_compat import Interval, StrOptions, _fit_context, check_is_fitted, validate_data
from dpsk.utils.validation import _check_sample_weight_dp, release_generator

__all__ = ["MLPClassifier", "MLPRegressor"]

_ADAM_EPSILON = 1e-8
#: c of the ``learning_rate_init="auto"`` rule η = c/√T, per solver (see its docstring).
AUTO_RATE = {"adam": 0.3, "sgd": 3.0}


def auto_learning_rate(solver, steps):
    """The default fixed-horizon step size η = c/√T of T noisy steps (``learning_rate_init="auto"``)."""
    return AUTO_RATE[solver] / np.sqrt(float(steps))


def _relu(z):
    return np.maximum(z, 0.0)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


ACTIVATIONS = {"identity": lambda z: z, "logistic": expit, "tanh": np.tanh, "relu": _relu, "softmax": _softmax}

#: f'(z) written with the activation's output a = f(z).
DERIVATIVES = {
    "identity": lambda a: np.ones_like(a),
    "logistic": lambda a: a * (1.0 - a),
    "tanh": lambda a: 1.0 - a * a,
    "relu": lambda a: (a > 0.0).astype(a.dtype),
}


def forward(coefs, intercepts, X, activation, out_activation):
    """Activations [X, a_1, …, output] of the network on the rows of X."""
    activations = [X]
    last = len(coefs) - 1
    for layer, (W, b) in enumerate(zip(coefs, intercepts)):
        f = ACTIVATIONS[out_activation if layer == last else activation]
        activations.append(f(activations[-1] @ W + b))
    return activations


def backward(coefs, activations, targets, activation):
    """Per-example δ_l = ∂ℓ_i/∂z_l of every layer (output: prediction − target, see module docstring)."""
    deltas = [activations[-1] - targets]
    derivative = DERIVATIVES[activation]
    for layer in range(len(coefs) - 1, 0, -1):
        deltas.insert(0, (deltas[0] @ coefs[layer].T) * derivative(activations[layer]))
    return deltas


def per_example_gradients(coefs, intercepts, X, targets, activation, out_activation):
    """Explicit per-example gradients ([(n, fan_in, fan_out)], [(n, fan_out)]): for tests on small n."""
    activations = forward(coefs, intercepts, X, activation, out_activation)
    deltas = backward(coefs, activations, targets, activation)
    return [np.einsum("ij,ik->ijk", a, d) for a, d in zip(activations[:-1], deltas)], deltas


def clipped_gradient_sums(coefs, intercepts, X, targets, weights, target, activation, out_activation):
    """Σ_i w_i·min(1, t/‖g_i‖)·g_i for every layer's weights and biases, and the factors.

    ‖g_i‖² = Σ_l ‖δ_{l,i}‖²(‖a_{l,i}‖² + 1), all layers jointly (one clip per example).
    A row whose norm is not finite (overflow on huge inputs) contributes nothing.
    """
    activations = forward(coefs, intercepts, X, activation, out_activation)
    deltas = backward(coefs, activations, targets, activation)
    sq = np.zeros(X.shape[0])
    for a, d in zip(activations[:-1], deltas):
        sq += np.einsum("ij,ij->i", d, d) * (np.einsum("ij,ij->i", a, a) + 1.0)
    factor = _dpsgd.clip_factors(np.sqrt(sq), target, weights)
    finite = np.isfinite(sq)
    coef_sums, intercept_sums = [], []
    for a, d in zip(activations[:-1], deltas):
        scaled = d * factor[:, None]
        if not finite.all():
            scaled[~finite], a = 0.0, np.where(finite[:, None], a, 0.0)
        coef_sums.append(a.T @ scaled)
        intercept_sums.append(scaled.sum(axis=0))
    return coef_sums, intercept_sums, factor


def _init_parameters(layer_units, activation, rng):
    """Glorot-uniform weights and intercepts (scikit-learn's), from the release generator: data-independent."""
    coefs, intercepts = [], []
    gain = 2.0 if activation == "logistic" else 6.0
    for fan_in, fan_out in zip(layer_units[:-1], layer_units[1:]):
        bound = np.sqrt(gain / (fan_in + fan_out))
        coefs.append(rng.uniform(-bound, bound, (fan_in, fan_out)))
        intercepts.append(rng.uniform(-bound, bound, fan_out))
    return coefs, intercepts


class _Optimizer:
    """SGD with Nesterov momentum or Adam on the noisy gradients (post-processing), in place."""

    def __init__(self, params, solver, learning_rate, momentum, beta_1, beta_2):
        self.params, self.solver, self.lr = params, solver, learning_rate
        self.momentum, self.beta_1, self.beta_2 = momentum, beta_1, beta_2
        self.first = [np.zeros_like(p) for p in params]
        self.second = [np.zeros_like(p) for p in params] if solver == "adam" else None
        self.t = 0

    def rebind(self, params, learning_rate):
        """Continue on new parameter arrays (same shapes) with a new learning rate (``partial_fit``)."""
        self.params, self.lr = params, learning_rate

    def step(self, grads):
        self.t += 1
        if self.solver == "sgd":
            for p, v, g in zip(self.params, self.first, grads):
                v *= self.momentum
                v -= self.lr * g
                p += self.momentum * v - self.lr * g
            return
        lr = self.lr * np.sqrt(1.0 - self.beta_2**self.t) / (1.0 - self.beta_1**self.t)
        for p, m, s, g in zip(self.params, self.first, self.second, grads):
            m *= self.beta_1
            m += (1.0 - self.beta_1) * g
            s *= self.beta_2
            s += (1.0 - self.beta_2) * g * g
            p -= lr * m / (np.sqrt(s) + _ADAM_EPSILON)


_MLP_DOCS = {
    **{k: _shared_docs[k] for k in ("epsilon", "accountant", "random_state", "privacy_spent_", "classes")},
    **DPSGD_DOCS,
    "hidden_layer_sizes": """hidden_layer_sizes : array-like of shape (n_layers - 2,), default=(100,)
        Number of units of each hidden layer.""",
    "activation": """activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers.""",
    "solver": """solver : {"sgd", "adam"}, default="adam"
        How the noisy gradients update the weights: SGD with Nesterov momentum, or
        Adam (Kingma & Ba 2015) with scikit-learn's defaults. Either is post-processing
        of the noisy gradients: the privacy cost does not depend on it.""",
    "alpha": """alpha : float, default=1e-4
        L2 penalty on the weights (not the intercepts), as scikit-learn's: ``alpha·W``
        is added to the noisy gradient sum before the division by the expected batch
        size. Data-independent.""",
    "learning_rate_init": """learning_rate_init : float or "auto", default="auto"
        Constant learning rate of the solver (no schedule). ``"auto"`` is the
        fixed-horizon rule η = c/√T of (stochastic) gradient methods run for a known
        number T of steps, T the public number of noisy steps of the fit (of the call,
        for ``partial_fit``): c = 0.3 for Adam, whose steps move each weight by about η
        whatever the noise, and c = 3 for SGD with momentum 0.9 (a tenfold effective
        step). It depends only on public quantities (``batch_size``, ``max_iter``,
        ``n_samples``), so it costs no privacy; c was set once on public data (Adult's
        training split, cut into training and validation parts, on all its rows and on a
        2,000-row sample). With scikit-learn's fixed 0.001, a fit of a few hundred
        noisy steps barely leaves its initialisation (a 2,000-row sample of Adult stays
        at the majority class); the rule gives 0.027 there and 0.0068 on all of Adult
        (batch 256, 15 epochs). Tuning it on private data costs privacy.""",
    "momentum": """momentum : float, default=0.9
        Nesterov momentum of ``solver="sgd"``.""",
    "beta_1": """beta_1 : float, default=0.9
        Decay of Adam's first-moment estimate.""",
    "beta_2": """beta_2 : float, default=0.999
        Decay of Adam's second-moment estimate.""",
    "clip_norm": """clip_norm : float, default=1.0
        Bound C on the L2 norm of each row's gradient over all layers' weights and
        intercepts jointly; larger gradients are scaled down to it. The noise is
        proportional to it. No bound on the features is needed.""",
}

_PARAMS = (
    "hidden_layer_sizes",
    "activation",
    "solver",
    "alpha",
    "batch_size",
    "learning_rate_init",
    "max_iter",
    "momentum",
    "beta_1",
    "beta_2",
    "epsilon",
    "delta",
    "clip_norm",
    "noise_multiplier",
    "n_samples",
    "classes",
    "accountant",
    "random_state",
)


def _parameters(names):
    return "\n\n    ".join(_MLP_DOCS[n].strip("\n") for n in names)


_FITTED = """coefs_ : list of ndarray of shape (n_layers - 1,)
        ``coefs_[i]`` is the weight matrix (fan_in, fan_out) of layer i. Same dtype as X.
    intercepts_ : list of ndarray of shape (n_layers - 1,)
        ``intercepts_[i]`` is the bias vector of layer i.
    n_layers_ : int
        Number of layers (input and output included).
    n_outputs_ : int
        Number of outputs.
    n_iter_ : int
        Number of epochs (``max_iter``: there is no early stopping; one per
        ``partial_fit`` call, summed over the calls).
    n_steps_ : int
        Number of noisy steps T (summed over ``partial_fit`` calls).
    learning_rate_ : float
        The learning rate used (``learning_rate_init`` or the ``"auto"`` rule's value).
    n_samples_ : float
        The public row count used for q and T (``n_samples``, or the noisy count).
    noise_multiplier_ : float
        σ used (``noise_multiplier`` or the calibrated value).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names."""

_PRIVACY = privacy_paragraph("all layers' weights and intercepts jointly", "``coefs_`` and ``intercepts_``")

_DIFFERENCES = """Differences from scikit-learn: ``max_iter`` is a fixed number of epochs (default
    15, no ``tol``, no early stopping, no ``loss_curve_``: the training loss is a
    function of the data that the noise does not cover); ``batch_size`` is the expected
    size of Poisson batches, ``"full"`` for DP-GD; constant learning rate; Adam's
    ``epsilon`` is fixed at 1e-8 (``epsilon`` is the privacy parameter here); no
    ``warm_start``; ``partial_fit`` is one epoch over the call's rows, a release of its
    own; ``sample_weight`` is clipped to [0, 1]."""

_PARTIAL_FIT_CLASSIFIER_DOC, _PARTIAL_FIT_REGRESSOR_DOC = (
    _dpsgd.partial_fit_doc(
        "the fitted weights and the solver's state (from a fresh initialisation on the first call)",
        ' With ``learning_rate_init="auto"``, T is the call\'s number of steps.',
        y_doc=y_doc,
    )
    for y_doc in (None, "y : array-like of shape (n_samples,) or (n_samples, n_outputs)\n        Targets.")
)


def _regression_targets(y):
    return np.asarray(y, dtype=np.float64).reshape(len(y), -1), "identity"


class _BaseDPMLP(DPSGDMixin, DPEstimatorMixin, BaseEstimator):
    """Shared fit of the DP-SGD MLPs; subclasses give the targets and the output activation."""

    _parameter_constraints = {
        **DP_PARAMETER_CONSTRAINTS,
        **DPSGD_CONSTRAINTS,
        "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions({"identity", "logistic", "tanh", "relu"})],
        "solver": [StrOptions({"sgd", "adam"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "momentum": [Interval(Real, 0, 1, closed="both")],
        "beta_1": [Interval(Real, 0, 1, closed="left")],
        "beta_2": [Interval(Real, 0, 1, closed="left")],
    }

    def _hidden_sizes(self):
        sizes = np.atleast_1d(np.asarray(self.hidden_layer_sizes))
        if sizes.ndim != 1 or not np.issubdtype(sizes.dtype, np.integer) or np.any(sizes < 1):
            raise ValueError(f"hidden_layer_sizes must be positive integers, got {self.hidden_layer_sizes!r}.")
        return [int(s) for s in sizes]

    def _fit_mlp(self, X, y, sample_weight, prepare_targets, *, partial=False):
        """The fit protocol: parameters, budget check, validation, count, spend, steps.

        ``partial=True`` (``partial_fit``): one epoch over the given rows, planned from
        the public ``n_samples`` alone, continuing from the fitted weights and the
        solver's state if any.
        """
        hidden = self._hidden_sizes()
        warm = partial and hasattr(self, "coefs_")
        plan = self._check_partial_budget() if partial else self._check_dpsgd_budget()
        X, y = validate_data(
            self,
            X,
            y,
            dtype=[np.float64, np.float32],
            order="C",
            y_numeric=self._y_numeric,
            multi_output=self._y_numeric,
            reset=not warm,
        )
        sample_weight = _check_sample_weight_dp(sample_weight, X)
        targets, out_activation = prepare_targets(y)
        if warm and targets.shape[1] != self.n_outputs_:
            raise ValueError(f"y has {targets.shape[1]} outputs; the fitted network has {self.n_outputs_}.")
        rng = release_generator(self.random_state, context=self, data=(X, y, sample_weight))
        plan, n_public = self._spend_dpsgd(plan, X.shape[0], rng)
        units = [X.shape[1], *hidden, targets.shape[1]]
        learning_rate = (
            auto_learning_rate(self.solver, plan.steps)
            if self.learning_rate_init == "auto"
            else float(self.learning_rate_init)
        )
        if warm:
            coefs = [np.array(W, dtype=np.float64) for W in self.coefs_]
            intercepts = [np.array(b, dtype=np.float64) for b in self.intercepts_]
            optimizer = self._optimizer
            optimizer.rebind([*coefs, *intercepts], learning_rate)
        else:
            coefs, intercepts = _init_parameters(units, self.activation, rng)
            optimizer = _Optimizer(
                [*coefs, *intercepts],
                self.solver,
                learning_rate,
                float(self.momentum),
                float(self.beta_1),
                float(self.beta_2),
            )
        alpha, layers = float(self.alpha), len(coefs)

        def clipped_sum(idx, target):
            w = None if sample_weight is None else sample_weight[idx]
            coef_sums, intercept_sums, _ = clipped_gradient_sums(
                coefs,
                intercepts,
                np.asarray(X[idx], dtype=np.float64),  # one batch at a time: no copy of the whole data
                targets[idx],
                w,
                target,
                self.activation,
                out_activation,
            )
            return [*coef_sums, *intercept_sums]

        def update(grads):
            for layer in range(layers):
                grads[layer] = grads[layer] + alpha / plan.expected_batch * coefs[layer]
            optimizer.step(grads)

        width = sum(fan_in + fan_out + 1 for fan_in, fan_out in zip(units[:-1], units[1:]))
        _dpsgd.run_steps(X.shape[0], clipped_sum, update, plan=plan, clip_norm=self.clip_norm, width=width, rng=rng)
        self.coefs_ = [W.astype(X.dtype) for W in coefs]
        self.intercepts_ = [b.astype(X.dtype) for b in intercepts]
        self.n_layers_ = len(units)
        self.n_outputs_ = targets.shape[1]
        self.out_activation_ = out_activation
        self.n_iter_ = (self.n_iter_ + 1) if warm else (1 if partial else int(self.max_iter))
        self.n_steps_ = plan.steps + (self.n_steps_ if warm else 0)
        self.n_samples_ = n_public
        self.noise_multiplier_ = plan.sigma
        self.learning_rate_ = learning_rate
        self._optimizer = optimizer  # post-processing state of the noisy gradients, for partial_fit
        return self

    def _forward(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=False)
        return forward(self.coefs_, self.intercepts_, X, self.activation, self.out_activation_)[-1]


@Substitution(
    privacy=_PRIVACY,
    privacy_spent_=_MLP_DOCS["privacy_spent_"],
    fitted=_FITTED,
    differences=_DIFFERENCES,
    rest=_parameters(_PARAMS),
)
class MLPClassifier(ClassifierMixin, _BaseDPMLP):
    """Multi-layer perceptron classifier trained by DP-SGD (or DP-GD).

    scikit-learn's ``MLPClassifier`` with differential privacy: dense layers, the
    log-loss on a softmax output (a logistic output for two classes), minibatches drawn
    by Poisson sampling, each row's gradient over all layers clipped to ``clip_norm``,
    Gaussian noise on the sum, and the whole training accounted as one event.

    Parameters
    ----------
    {rest}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    out_activation_ : str
        ``"logistic"`` (two classes) or ``"softmax"``.
    {fitted}

    {privacy_spent_}

    See Also
    --------
    dpsk.linear_model.SGDClassifier : the linear model trained by the same engine.
    sklearn.neural_network.MLPClassifier : the non-private estimator.

    Notes
    -----
    {privacy}

    {differences}

    References
    ----------
    M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar and L. Zhang,
    "Deep learning with differential privacy", CCS 2016.

    I. Goodfellow, "Efficient per-example gradient computations", arXiv:1510.01799, 2015.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from dpsk.neural_network import MLPClassifier
    >>> X, y = make_classification(n_samples=2000, random_state=0)
    >>> clf = MLPClassifier(epsilon=2.0, n_samples=2000, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.7
    True
    """

    _y_numeric = False
    _parameter_constraints = {**_BaseDPMLP._parameter_constraints, "classes": ["array-like", None]}

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=1e-4,
        batch_size=256,
        learning_rate_init="auto",
        max_iter=15,
        momentum=0.9,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1.0,
        delta=1e-5,
        clip_norm=1.0,
        noise_multiplier=None,
        n_samples=None,
        classes=None,
        accountant=None,
        random_state=None,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.momentum = momentum
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.n_samples = n_samples
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, sample_weight=None):
        """Fit the network by DP-SGD: one private release of its weights.

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

        return self._fit_mlp(X, y, sample_weight, lambda y: self._targets(self.classes, y))

    def _targets(self, public, y):
        targets = _dpsgd.class_targets(self, public, y, 0.0)
        return targets, "logistic" if targets.shape[1] == 1 else "softmax"

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(partial_fit=_PARTIAL_FIT_CLASSIFIER_DOC)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """{partial_fit}"""
        public = _dpsgd.partial_classes(self, classes)
        return self._fit_mlp(X, y, sample_weight, lambda y: self._targets(public, y), partial=True)

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        p = self._forward(X)
        return np.hstack([1.0 - p, p]) if p.shape[1] == 1 else p

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

    def predict(self, X):
        """Predicted class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


@Substitution(
    privacy=_PRIVACY,
    privacy_spent_=_MLP_DOCS["privacy_spent_"],
    fitted=_FITTED,
    differences=_DIFFERENCES,
    rest=_parameters(tuple(p for p in _PARAMS if p != "classes")),
)
class MLPRegressor(RegressorMixin, _BaseDPMLP):
    """Multi-layer perceptron regressor trained by DP-SGD (or DP-GD).

    scikit-learn's ``MLPRegressor`` with differential privacy: dense layers, an
    identity output and the squared error ½‖z − y‖², minibatches drawn by Poisson
    sampling, each row's gradient over all layers clipped to ``clip_norm``, Gaussian
    noise on the sum, and the whole training accounted as one event. No bounds on X or
    y are needed: the squared error's gradient is unbounded before clipping, and the
    clip bounds every row's influence (rows with large residuals are down-weighted by
    it, so scale y to a unit range for a useful fit).

    Parameters
    ----------
    {rest}

    Attributes
    ----------
    out_activation_ : str
        ``"identity"``.
    {fitted}

    {privacy_spent_}

    See Also
    --------
    dpsk.linear_model.SGDRegressor : the linear model trained by the same engine.
    sklearn.neural_network.MLPRegressor : the non-private estimator.

    Notes
    -----
    {privacy}

    {differences}

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from dpsk.neural_network import MLPRegressor
    >>> X, y = make_regression(n_samples=2000, n_features=5, noise=1.0, random_state=0)
    >>> reg = MLPRegressor(epsilon=2.0, n_samples=2000, random_state=0).fit(X, y / y.std())
    >>> reg.score(X, y / y.std()) > 0.5
    True
    """

    _y_numeric = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=1e-4,
        batch_size=256,
        learning_rate_init="auto",
        max_iter=15,
        momentum=0.9,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1.0,
        delta=1e-5,
        clip_norm=1.0,
        noise_multiplier=None,
        n_samples=None,
        accountant=None,
        random_state=None,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.momentum = momentum
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.n_samples = n_samples
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(sample_weight=_shared_docs["sample_weight"])
    def fit(self, X, y, sample_weight=None):
        """Fit the network by DP-SGD: one private release of its weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (no bounds needed: gradients are clipped).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets (no bounds needed).
        {sample_weight}

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit_mlp(X, y, sample_weight, _regression_targets)

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(partial_fit=_PARTIAL_FIT_REGRESSOR_DOC)
    def partial_fit(self, X, y, sample_weight=None):
        """{partial_fit}"""
        return self._fit_mlp(X, y, sample_weight, _regression_targets, partial=True)

    def predict(self, X):
        """Predicted target of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        out = self._forward(X)
        return out.ravel() if out.shape[1] == 1 else out
