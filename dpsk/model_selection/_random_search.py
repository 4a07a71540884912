# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private random search: RandomizedSearchCV, by default with random stopping.

The search engine (plans, fixed-candidate searches, budget reports) is ``_search.py``;
this module adds what random stopping needs (Papernot & Steinke 2022): candidates drawn
with replacement, a secret random number of trials, and the best noisy-scored trial.
"""

import contextvars
from numbers import Integral, Real

import numpy as np
from joblib import Parallel
from sklearn.model_selection import ParameterGrid, ParameterSampler

from dpsk.accounting import ParallelEvent, RepeatAndSelectEvent, note_release
from dpsk.accounting._repeat_and_select import stopping_gamma
from dpsk.mechanisms import Laplace
from dpsk.model_selection._estimators import candidate_cost, inner_seed
from dpsk.model_selection._search import _SEARCH_DOCS, _BaseSearch, _Plan
from dpsk.model_selection._splits import check_training_parts, random_parts
from dpsk.utils._docstring import Substitution
from dpsk.utils._sklearn_compat import Interval, StrOptions

__all__ = ["RandomizedSearchCV"]


#: Largest grid of list-valued parameters whose costs random stopping probes one by one.
_MAX_COST_GRID = 1000
#: Candidates probed when some parameter is drawn from a distribution (random stopping).
_COST_SAMPLES = 20


def _sample_candidate(distributions, rng):
    """One candidate drawn *with replacement*: lists uniformly, distributions by ``rvs``.

    (scikit-learn's ``ParameterSampler`` samples all-list spaces without replacement; the
    trials of random stopping must be independent and identically distributed.)
    """
    spaces = distributions if isinstance(distributions, list) else [distributions]
    space = spaces[int(rng.integers(len(spaces)))]
    params = {}
    for name in sorted(space):
        values = space[name]
        if hasattr(values, "rvs"):
            params[name] = values.rvs(random_state=rng)
        else:
            params[name] = values[int(rng.integers(len(values)))]
    return params


def _all_lists(distributions):
    spaces = distributions if isinstance(distributions, list) else [distributions]
    return all(not hasattr(values, "rvs") for space in spaces for values in space.values())


def _draw_trials(rng, gamma, shape):
    """K ~ D(shape, γ) on {1, 2, ...} (see ``dpsk.accounting._repeat_and_select``).

    numpy's samplers work in floating point, so K's law is D(shape, γ) up to rounding
    (relative errors of order 1e-16): the guarantee holds up to a δ of that order.
    """
    if shape == 0.0:
        return int(rng.logseries(1.0 - gamma))  # P(k) = (1 - γ)^k / (k log(1/γ))
    if shape == 1.0:
        return int(rng.geometric(gamma))  # P(k) = γ (1 - γ)^(k - 1)
    while True:  # a negative binomial conditioned on K >= 1
        k = int(rng.negative_binomial(shape, gamma))
        if k >= 1:
            return k


@Substitution(**_SEARCH_DOCS)
class RandomizedSearchCV(_BaseSearch):
    """Private random search; by default a random number of trials (Papernot & Steinke 2022).

    With ``stopping="logarithmic"`` (default) or ``"geometric"`` the search runs K trials,
    K random with mean ``n_iter`` and kept secret. Each trial draws a candidate from
    ``param_distributions``, fits it on a random training part, and releases its number of
    correct predictions on the validation part plus Laplace noise of scale 1/ε; the trial
    with the best noisy score is selected. Releasing only the best of a *random* number
    of trials costs a small multiple of one trial, whatever ``n_iter``: far less than
    composing ``n_iter`` fits. With ``stopping="fixed"`` exactly ``n_iter`` candidates are
    drawn and searched like :class:`GridSearchCV` does.

    Parameters
    ----------
    {estimator}
    param_distributions : dict or list of dicts
        Lists (sampled uniformly, with replacement) or objects with an ``rvs`` method
        (scipy distributions), as for :class:`sklearn.model_selection.RandomizedSearchCV`.
        With random stopping, a parameter that changes the privacy cost (such as the
        estimator's ``epsilon``) must be given as a list.
    n_iter : int, default=10
        Mean number of trials (>= 2) with random stopping; number of candidates with
        ``stopping="fixed"``.
    stopping : {{"logarithmic", "geometric", "fixed"}} or float, default="logarithmic"
        Law of the number of trials: truncated negative binomial of shape 0
        (logarithmic), 1 (geometric) or the given float >= 0. A smaller shape is cheaper
        but more often stops after few trials (logarithmic with mean 10: one trial with
        probability 0.27). ``"fixed"``: exactly ``n_iter`` candidates.
    {scoring}
    cv : "disjoint", int or None, default=None
        Random stopping: an int k >= 2, each trial trains on k - 1 random folds and
        validates on the last one (default 5). ``stopping="fixed"``: as in
        :class:`GridSearchCV` (default ``"disjoint"``).
    epsilon : float, default=1.0
        Privacy budget ε > 0 of the selection: of the Laplace noise on each trial's
        score (random stopping) or of the exponential mechanism (``stopping="fixed"``).
    {refit}
    {n_jobs}
    {verbose}
    {pre_dispatch}
    {random_state}
    {accountant}

    Attributes
    ----------
    best_index_ : int
        With ``stopping="fixed"`` only: index of the selected candidate in ``cv_results_``.
    cv_results_ : dict
        With ``stopping="fixed"`` only: the candidates, without scores.
    {attributes}

    See Also
    --------
    GridSearchCV : every candidate of a grid.

    Notes
    -----
    **Privacy.** Neighbouring datasets differ in one unit (a row, or a user with
    ``groups=``). Random stopping: one trial is a mechanism Q whose fit (on the training
    part) and noisy score (on the validation part: a count of sensitivity 1, Laplace
    noise on a lattice, floating-point safe) see disjoint units, so Q costs the larger
    of the two (a :class:`~dpsk.accounting.ParallelEvent`; with list-valued candidates
    of different costs, the largest). Running Q K ~ D(η, γ) times and releasing only the
    best (the truncated negative binomial of Papernot & Steinke 2022, Theorem 2) is
    recorded as a :class:`~dpsk.accounting.RepeatAndSelectEvent`, accounted in Rényi DP;
    when Q is ε₀-DP it is also (2 + η)·ε₀-DP at most (3ε₀ for the geometric law, Liu &
    Talwar 2019). Ties between noisy scores are broken uniformly at random. Released:
    ``best_params_`` and the model; not K, not the other trials, not the noisy score.
    ``verbose`` therefore reports no per-trial progress; the running time still grows
    with K (a timing side channel the guarantee does not cover). ``stopping="fixed"``:
    as :class:`GridSearchCV`. The refit (``refit=True``) is charged on top.
    Domain: that of the searched estimator; with ``groups``, a user id for every row.
    Data outside it raise a ``ValueError`` before any noise is drawn, which reveals only
    that the data left the domain (:ref:`declared_domain`).

    {not_released}

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.model_selection import RandomizedSearchCV
    >>> from dpsk.utils._testing import ToyDPMeanClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (600, 2)); y = (X[:, 0] > 0).astype(int)
    >>> est = ToyDPMeanClassifier(epsilon=1.0, bounds=(-1.0, 1.0), classes=[0, 1])
    >>> search = RandomizedSearchCV(est, {{"bounds": [(-1.0, 1.0), (-0.5, 0.5)]}}, n_iter=10,
    ...                             epsilon=1.0, refit="selected", random_state=0).fit(X, y)
    >>> round(search.budget_report_["epsilon"][-1], 6)  # 2 x one trial (epsilon = 1), any n_iter
    2.0
    """

    #: Where the class was defined before a refactor: seeded noise stays the same (``dpsk.utils._random``).
    _release_name = "dpsk.model_selection._search.RandomizedSearchCV"

    _parameter_constraints = {
        **_BaseSearch._parameter_constraints,
        "param_distributions": [dict, list],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "stopping": [StrOptions({"logarithmic", "geometric", "fixed"}), Interval(Real, 0, None, closed="left")],
        "cv": [None, StrOptions({"disjoint"}), Interval(Integral, 2, None, closed="left")],
    }

    def __init__(
        self,
        estimator,
        param_distributions,
        *,
        n_iter=10,
        stopping="logarithmic",
        scoring="accuracy",
        cv=None,
        epsilon=1.0,
        refit=True,
        n_jobs=None,
        verbose=0,
        pre_dispatch="2*n_jobs",
        random_state=None,
        accountant=None,
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.stopping = stopping
        self.scoring = scoring
        self.cv = cv
        self.epsilon = epsilon
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.random_state = random_state
        self.accountant = accountant

    def _random_stopping(self):
        return self.stopping != "fixed"

    def _shape(self):
        return {"logarithmic": 0.0, "geometric": 1.0}.get(self.stopping, self.stopping)

    def _cv(self):
        if not self._random_stopping():
            return "disjoint" if self.cv is None else self.cv
        if self.cv == "disjoint":
            raise ValueError('cv="disjoint" needs a fixed set of candidates: use stopping="fixed" or an int cv')
        return 5 if self.cv is None else self.cv

    def _plan(self, rng):
        if not self._random_stopping():
            seed = int(rng.integers(2**32))
            return self._fixed_plan(
                list(ParameterSampler(self.param_distributions, self.n_iter, random_state=seed)), rng
            )
        self._cv()
        if self.n_iter < 2:
            raise ValueError(
                f"n_iter is the mean number of trials with random stopping and must be >= 2, got {self.n_iter}"
            )
        shape = float(self._shape())
        # The declared cost must not depend on K or on the candidates drawn: it is that of
        # a trial with any candidate of a pool fixed in advance (the whole grid of a
        # list-valued space, else a sample whose costs every drawn candidate must match).
        grid = ParameterGrid(self.param_distributions) if _all_lists(self.param_distributions) else None
        exhaustive = grid is not None and len(grid) <= _MAX_COST_GRID
        pool = (
            list(grid)
            if exhaustive
            else [_sample_candidate(self.param_distributions, rng) for _ in range(_COST_SAMPLES)]
        )
        costs = [candidate_cost(self.estimator, params) for params in pool]
        noisy_score = Laplace(epsilon=self.epsilon, sensitivity=1.0, random_state=rng)
        trial = ParallelEvent((*dict.fromkeys(costs), noisy_score.privacy_event()))
        search = RepeatAndSelectEvent(trial, float(self.n_iter), shape)
        n_trials = _draw_trials(rng, stopping_gamma(self.n_iter, shape), shape)
        candidates = [_sample_candidate(self.param_distributions, rng) for _ in range(n_trials)]
        if not exhaustive:
            allowed = set(costs)
            for params in candidates:
                if candidate_cost(self.estimator, params) not in allowed:
                    raise ValueError(
                        "with random stopping the privacy cost of a trial must be known in advance, "
                        "but it depends on a parameter drawn from a distribution (or a grid of more "
                        f"than {_MAX_COST_GRID} combinations); give such parameters as short lists"
                    )
        stages = [(f"random-stopping trials (mean {self.n_iter}, shape {shape:g})", search)]
        plan = _Plan(candidates, stages, search, noisy_score)
        return self._with_refit(plan, costs)

    def _describe(self, plan):
        if not self._random_stopping():
            return super()._describe(plan)
        return (
            f"random stopping with {self.n_iter} trials on average (the number drawn is kept secret), "
            f"each validated on 1/{self._cv()} of the units"
        )

    def _draw_splits(self, plan, data, rng):
        if not self._random_stopping():
            return super()._draw_splits(plan, data, rng)
        validation_part = random_parts(rng, self._cv(), data.n_units, data.units) == 0
        split = (np.flatnonzero(~validation_part), np.flatnonzero(validation_part))
        check_training_parts([split], data.n_units, self.estimator, data.units is not None)
        return split

    def _run(self, plan, data, splits, rng):
        if not self._random_stopping():
            return self._run_fixed(plan, data, splits, rng)
        train, validation = splits
        keep = self.refit == "selected"

        def trials():
            results = Parallel(n_jobs=self.n_jobs, pre_dispatch=self.pre_dispatch)(
                data.task(
                    data.prepare(self.estimator, params, inner_seed(self.random_state, rng)), train, validation, keep
                )
                for params in plan.candidates
            )
            return results, [plan.selection.randomise(score) for score, _ in results]

        # The trials form one mechanism (their releases are accounted together by the
        # RepeatAndSelectEvent), run in an empty context so that they are not recorded
        # one by one; the search notes the whole instead.
        results, noisy = contextvars.Context().run(trials)
        note_release(plan.stages[0][1])
        ties = rng.random(len(noisy))
        best = max(range(len(noisy)), key=lambda t: (noisy[t], ties[t]))
        self.n_splits_ = 1
        return plan.candidates[best], results[best][1]
