# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""LogisticRegression and LinearSVC on Dask input: the in-memory release, solved by a distributed Newton.

The private linear classifiers minimise a perturbed objective
``F(v) = Σ_i w_i ℓ(y_i z_iᵀv) + (μ/2)‖v‖² + bᵀv`` (``dpsk.linear_model._erm``). Every data
term is a sum over rows, so on Dask each Newton iteration is one map-reduce:

* every chunk clips its rows (the estimator's own ``_clip_rows``, the in-memory kernels)
  and evaluates the in-memory objective on them with μ = 0 and b = 0: its loss, gradient
  and Hessian (``_Objective``), at the client's current iterate;
* the chunks' float64 results are converted to exact integers (multiples of 2⁻¹⁰⁷⁴, the
  finest float64 grid) and added exactly by the tree reduction of ``dpsk.dask._reduce``,
  then rounded once on the client: the merge adds no rounding and does not depend on the
  order or the grouping of the chunks;
* the client adds μv + b, solves the (d+1)×(d+1) Newton system and runs the line search
  and the stopping test of the in-memory solver (``_solver._minimize``, the same code).

The noise b (and the output noise of approximate minima perturbation) is drawn on the
client, by the in-memory ``fit_private_linear``, from the release's Generator, before
the solver reads any data for that problem; it never leaves the client except inside the
iterate.

The certificate
===============

The release is covered by the certified bound ``‖∇F(ṽ)‖ <= tol``. In memory the bound
(``_solver.certified_norm``) rests on: each block of at most ``_BLOCK`` rows' dot products
formed in float64 (a relative rounding of at most γ_(_BLOCK+3) of Σ|s_i|), the block sums
then added *exactly* and rounded once, and bounds on the margins' and ℓ′'s rounding per
row. On Dask every chunk splits its rows into its own blocks of at most ``_BLOCK`` rows
(so every block still has at most ``_BLOCK`` rows), converts its block sums to exact
integers, and the integers of all chunks are added exactly: the data part is the exact
sum of the blocks rounded once, as in memory. The intercept's Σ s_i, exact in memory
(``math.fsum``), is summed by the same blocks here: its rounding is covered by the block
term, whose γ_(_BLOCK+3)·Σ|s_i| bounds the error vector of all coordinates of the scaled
rows z_i = [x_i, κ]/S (‖z_i‖ <= 1; per coordinate the error is at most
γ_(_BLOCK)·Σ|s_i||z_ij|, and the L2 norm over the coordinates of these sums is at most
γ_(_BLOCK)·Σ|s_i|‖z_i‖). Σ|s_i| is a float64 sum per chunk, merged exactly and rounded
once: within γ_n of the exact sum, which the bound allows for. The per-row terms depend
on the row only. So the in-memory bound, evaluated with the total n, holds; the
in-memory formula is called (one home).

Validation before the spend
===========================

One first pass, before the budget is spent, checks every chunk: finite X, labels in the
public ``classes``, valid weights. With an integer ``random_state`` it also computes the
key of the noise stream: the exact count of rows and exact per-class moments of the
clipped, weighted rows (``exact_moments``). Neighbouring datasets (add/remove one row)
always differ in the row count, so they never share a stream; the key does not depend on
the chunking, so the Dask fit is reproducible.
"""

import functools

import numpy as np

from dpsk.dask._data import as_rows, as_vector, require_public, worker_view
from dpsk.dask._reduce import fingerprint, map_reduce

__all__ = ["exact_ints", "fit_linear_classifier", "rounded"]

#: Exact sums of float64 values are kept as integers in units of 2**-1074 (every float64
#: is an integer multiple of it).
_UNIT_EXPONENT = 1074
_ONE = 1 << _UNIT_EXPONENT
# int64 partial sums of at most this many 53-bit mantissas cannot overflow
_INT64_TERMS = 1024


def _int64_sums(mantissas):
    """Exact column sums of int64 values of magnitude below 2**53, as Python ints (object array)."""
    rows = mantissas.shape[0]
    if rows > _INT64_TERMS:  # partial sums of 1024 rows fit in int64; then Python ints
        padded = np.pad(mantissas, ((0, -rows % _INT64_TERMS), (0, 0)))
        parts = padded.reshape(-1, _INT64_TERMS, mantissas.shape[1]).sum(axis=1)
        return parts.astype(object).sum(axis=0)
    return mantissas.sum(axis=0).astype(object)


def exact_ints(values):
    """The exact sum over axis 0 of float64 ``values`` (finite), in units of 2**-1074.

    Returns an object array of Python ints of shape ``values.shape[1:]``: adding such
    arrays (``dpsk.dask._reduce.merge``) is exact in any order; :func:`rounded` gives the
    correctly rounded float64 of the total.
    """
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("Input X contains NaN or infinity.")
    fraction, exponent = np.frexp(values.reshape(values.shape[0], -1))
    mantissas = np.ldexp(fraction, 53).astype(np.int64)  # exact: 53 significant bits
    shifts = exponent.astype(np.int64) - 53 + _UNIT_EXPONENT
    low = shifts < 0  # subnormals: their mantissa has that many trailing zeros
    mantissas[low] >>= -shifts[low]
    shifts[low] = 0
    total = np.zeros(mantissas.shape[1], dtype=object)
    for shift in np.unique(shifts):  # a few dozen binades: vectorised over the columns
        total += _int64_sums(np.where(shifts == shift, mantissas, 0)) * (1 << int(shift))
    return total.reshape(values.shape[1:])


def rounded(ints):
    """float64 of exact sums from :func:`exact_ints` (correctly rounded: Python's int division)."""
    ints = np.asarray(ints, dtype=object)
    return np.array([value / _ONE for value in ints.ravel()], dtype=np.float64).reshape(ints.shape)


# -- per chunk ----------------------------------------------------------------------------


class _ChunkProblem:
    """Everything a chunk needs to build its part of one binary problem (public values and
    the estimator's worker view); picklable, shipped to the workers."""

    def __init__(self, view, loss, classes, class_weight, norm_bound, lower, upper, scale, kappa):
        self.view, self.loss, self.classes, self.class_weight = view, loss, classes, class_weight
        self.norm_bound, self.lower, self.upper, self.scale, self.kappa = norm_bound, lower, upper, scale, kappa

    def rows(self, X, y, sample_weight):
        """(clipped rows, label index, row weights) of a chunk, validated as in memory."""
        from dpsk.utils._class_weight import row_weights
        from dpsk.utils.validation import _check_sample_weight_dp, resolve_classes

        if not np.all(np.isfinite(X)):
            raise ValueError("Input X contains NaN or infinity.")
        _, y_index = resolve_classes(None, self.classes, y)
        weights = row_weights(self.class_weight, y_index, _check_sample_weight_dp(sample_weight, X))
        return self.view._clip_rows(X, self.norm_bound, self.lower, self.upper), y_index, weights

    def objective(self, positive, X, y, sample_weight):
        """The in-memory objective of the chunk's rows with μ = 0 and b = 0 (its data part)."""
        from dpsk.linear_model._solver import _Objective

        rows, y_index, weights = self.rows(X, y, sample_weight)
        labels = np.where(y_index == positive, 1.0, -1.0)
        n_params = rows.shape[1] + (self.kappa is not None)
        return _Objective(
            rows,
            labels,
            self.loss,
            norm_bound=self.norm_bound,
            scale=self.scale,
            kappa=self.kappa,
            mu=0.0,
            linear=np.zeros(n_params),
            weights=weights,
        )


def _validate_chunk(problem, keyed, X, y, sample_weight):
    from dpsk._core._exact_sums import exact_moments

    rows, y_index, weights = problem.rows(X, y, sample_weight)
    if not keyed:
        return X.shape[0]
    bound = np.full(rows.shape[1], problem.norm_bound)
    moments = exact_moments(rows, -bound, bound, y_index, problem.classes.size, weights, n_threads=1)
    return X.shape[0], moments


def _certificate_parts(objective, s):
    """The certificate's sums of a chunk: its blocks' Σ s_i x_i and Σ s_i (exact integers;
    the intercept's sum by the same blocks of at most _BLOCK rows) and Σ|s_i| (float64,
    rounded within γ_(chunk rows), exact integer for the merge)."""
    from dpsk.linear_model._solver import _BLOCK

    full = s.size - s.size % _BLOCK
    s_blocks = np.append(s[:full].reshape(-1, _BLOCK).sum(axis=1), s[full:].sum())
    parts = np.column_stack([objective.block_parts(s), s_blocks])
    return exact_ints(parts), exact_ints([[float(np.sum(np.abs(s)))]])


def _newton_chunk(problem, positive, v, X, y, sample_weight):
    """F's data part, its gradient and Hessian at v, and the certificate's sums at v (one read)."""
    objective = problem.objective(positive, X, y, sample_weight)
    value, first, second = objective.evaluate(v, objective.margins(v))
    s = objective.y * first  # s_i = w_i y_i ℓ′, as ``signed_first`` computes it
    s = objective._weighted(s)
    gradient = objective.gradient(v, first)
    return (
        exact_ints([[value]]),
        exact_ints(gradient[None]),
        exact_ints(objective.hessian(second)[None]),
        _certificate_parts(objective, s),
    )


def _certificate_chunk(problem, positive, v, X, y, sample_weight):
    objective = problem.objective(positive, X, y, sample_weight)
    return _certificate_parts(objective, objective.signed_first(v))


# -- on the client -------------------------------------------------------------------------


class DaskObjective:
    """The perturbed objective of one binary problem over Dask rows, with the interface of
    the in-memory ``_Objective`` that ``_solver._minimize`` uses.

    ``margins`` is lazy (the iterate itself); ``evaluate`` runs one map-reduce returning
    F(v) and the data parts of the gradient and Hessian, which ``gradient`` and
    ``hessian`` complete with μv + b and μI on the client.
    """

    def __init__(self, data, X, positive, loss, *, norm_bound, scale, kappa, mu, linear, weights=None):
        self.problem, self.y, self.sample_weight = data
        self.X, self.positive, self.loss = X, positive, loss
        self.norm_bound, self.scale, self.kappa, self.mu, self.linear = norm_bound, scale, kappa, mu, linear
        self.n_features = X.shape[1]
        self.row_terms = self.n_features  # dense chunks: a margin adds every feature
        # the bound's extra rounding of a weighted ℓ′ (weights of the chunks: sample or class weights)
        self.weights = True if self.sample_weight is not None or self.problem.class_weight is not None else None
        self._certificate = (None, None)  # (point, its certificate sums) of the last evaluation

    def _reduce(self, chunk, v):
        return map_reduce(functools.partial(chunk, self.problem, self.positive, v), self.X, self.y, self.sample_weight)

    def margins(self, v):
        return np.array(v, dtype=np.float64)

    def evaluate(self, v, point):
        value, gradient, hessian, certificate = self._reduce(_newton_chunk, point)
        self._certificate = (point, certificate)  # the stopping test at this point needs no new pass
        data = float(rounded(value)[0])
        return data + 0.5 * self.mu * float(v @ v) + float(self.linear @ v), rounded(gradient), rounded(hessian)

    def gradient(self, v, first):
        return first + self.mu * v + self.linear

    def hessian(self, second):
        hessian = second.copy()
        hessian.flat[:: hessian.shape[0] + 1] += self.mu
        return hessian

    def certified_gradient_norm(self, v):
        from dpsk.linear_model._solver import certified_norm

        point, certificate = self._certificate
        if point is None or not np.array_equal(point, v):
            certificate = self._reduce(_certificate_chunk, v)
        parts, abs_sum = certificate
        sums = rounded(parts)
        data = sums[: self.n_features] if self.kappa is None else np.append(sums[:-1], self.kappa * sums[-1])
        data /= self.scale
        return certified_norm(self, data, v, abs_s=float(rounded(abs_sum)[0]), n=self.X.shape[0])


def _refuse(estimator):
    """Parameters that do not run on Dask: refused before anything is computed or spent."""
    from dpsk.utils._private_bounds import is_private

    if isinstance(estimator.class_weight, str):
        raise ValueError(
            'class_weight="balanced" is not supported with Dask input (it needs noisy class counts): '
            "pass a dict of public weights, or fit in memory"
        )
    if estimator.bounds is None or is_private(estimator.data_norm):
        require_public(None if is_private(estimator.data_norm) else estimator.data_norm, "data_norm` or `bounds")
    if is_private(estimator.bounds):
        require_public(estimator.bounds, "bounds")


def fit_linear_classifier(estimator, X, y, sample_weight=None):
    """Fit a private linear classifier (its budget already checked) on Dask X, y, weights.

    The in-memory protocol (``BasePrivateLinearClassifier._fit_rows``) with the rows on
    the cluster: public ``classes`` and ``data_norm`` (or ``bounds``) are required, one
    validating pass runs before the spend, then every binary problem is solved by the
    distributed Newton of :class:`DaskObjective` inside the in-memory release.
    """
    from dpsk.accounting import ComposedEvent
    from dpsk.accounting._calibration import round_down, split_epsilon
    from dpsk.linear_model._erm import private_row_bounds
    from dpsk.linear_model._solver import check_certifiable
    from dpsk.utils._class_weight import class_weights
    from dpsk.utils._random import is_seed, release_generator

    _refuse(estimator)
    X = as_rows(estimator, X)
    y = as_vector(require_public(y, "y"), X, "y")
    w = as_vector(sample_weight, X, "sample_weight", dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got {y.ndim} dimensions")
    classes = np.unique(np.asarray(require_public(estimator.classes, "classes")))
    if classes.ndim != 1 or classes.size < 2:
        raise ValueError("classes must be a 1-d array-like of at least two labels")
    plan_bounds, (data_norm, lower, upper) = private_row_bounds(estimator, X)
    check_certifiable(X.shape[0], estimator.tol)
    n_problems = 1 if classes.size == 2 else classes.size
    kappa = float(estimator.intercept_scaling) if estimator.fit_intercept else None
    n_params = X.shape[1] + (kappa is not None)
    epsilon = split_epsilon(plan_bounds.fit_epsilon, n_problems)
    delta = round_down(estimator.delta / n_problems)
    loss = estimator._make_loss()
    scale, lam, plan = estimator._perturbation(data_norm, kappa, lower, upper, epsilon, delta, n_params, loss)
    cost = plan_bounds.cost(ComposedEvent(plan.events * n_problems))
    weights_of_classes = class_weights(estimator.class_weight, classes)
    problem = _ChunkProblem(
        worker_view(estimator), loss, classes, weights_of_classes, data_norm, lower, upper, scale, kappa
    )

    # The validating pass (and the key of an integer seed), before the spend.
    keyed = is_seed(estimator.random_state)
    checked = map_reduce(functools.partial(_validate_chunk, problem, keyed), X, y, w)
    key = fingerprint(checked[1]) + (np.array([checked[0]], dtype=object),) if keyed else ()
    rng = release_generator(estimator.random_state, context=estimator, data=key)
    plan_bounds.bind(rng)
    estimator._spend_privacy_budget(cost, note=plan_bounds.note)
    estimator.class_weight_ = weights_of_classes

    return estimator._fit_problems(
        n_problems,
        lambda positive: (X, positive),
        loss,
        plan,
        (data_norm, lam, scale, kappa),
        rng,
        (classes, X.dtype),
        objective_type=functools.partial(_objective, (problem, y, w)),
    )


def _objective(data, X, positive, loss, **kwargs):
    return DaskObjective(data, X, positive, loss, **kwargs)
