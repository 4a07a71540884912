# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The sparse vector technique: AboveThreshold and SparseVector (Lyu, Su & Li 2017, Alg. 1).

A run answers a stream of queries q_1, q_2, ... (each of sensitivity Δ) with ⊤ ("above
the threshold T") or ⊥, and halts after ``c = max_answers`` answers ⊤. Its privacy cost
depends on ε and c only, never on how many ⊥ it gave, so it is charged once, in full,
before the first answer.

Algorithm (Lyu, Su & Li 2017, "Understanding the Sparse Vector Technique for
Differential Privacy", PVLDB 10(6), Algorithm 1 and Theorem 2): ε = ε₁ + ε₂;
ρ ~ Lap(Δ/ε₁) once per run; for each query ν_i ~ Lap(2cΔ/ε₂) (Lap(cΔ/ε₂) for monotonic
queries) and the answer is ⊤ iff q_i + ν_i >= T + ρ. The threshold noise is *not*
redrawn after a ⊤: their proof charges ε₁ once for ρ and ε₂/c for each ⊤, so a refresh
(Dwork & Roth 2014, Alg. 2) only adds noise. The split ε₁ : ε₂ = 1 : (2c)^(2/3)
(1 : c^(2/3) for monotonic queries) is theirs (§4.2), and minimises the variance of the
noisy comparison.

Floating-point safety: the queries and the threshold are rounded onto a power-of-two
lattice g·ℤ and the noise is exact discrete Laplace on that lattice
(``dpsk._core._noise.add_laplace_lattice``), so every comparison is between exact
integers. The rounded queries have sensitivity ``lattice_sensitivity(Δ, g)`` (at most
Δ + g), and the noise is calibrated to it. The proof of Alg. 1 only uses that shifting a
noise variable by s changes its probability by at most exp(s/b) and maps events onto
events, which holds for the discrete Laplace on the lattice with shifts in g·ℤ.
"""

import math
import numbers
from fractions import Fraction

import numpy as np

from dpsk._core._noise import add_laplace_lattice, lattice_granularity, lattice_sensitivity
from dpsk.accounting import PureDPEvent, SelfComposedEvent, note_release, split_epsilon
from dpsk.accounting._calibration import discrete_laplace_scale
from dpsk.accounting._context import accountant_in_play
from dpsk.mechanisms._base import MECHANISM_DOCS, ImmutableMechanism, _NoiseSource, check_sensitivity
from dpsk.utils._docstring import Substitution
from dpsk.utils.validation import check_privacy_params

__all__ = ["AboveThreshold", "SparseVector", "SparseVectorRun"]

#: Answer codes of :meth:`SparseVector.randomise`.
ABOVE, BELOW, UNANSWERED = 1, 0, -1


def threshold_share(max_answers, monotonic):
    """Lyu, Su & Li's (2017, §4.2) weights (ε₁, ε₂) of the threshold and the queries."""
    return (1.0, float((max_answers if monotonic else 2 * max_answers) ** (2.0 / 3.0)))


@Substitution(**MECHANISM_DOCS)
class SparseVector(ImmutableMechanism):
    """The sparse vector technique: answer queries ⊤/⊥ against a noisy threshold, c times ⊤ at most.

    Lyu, Su & Li's (2017) Algorithm 1: one noisy threshold per run, fresh Laplace noise
    on each query, and the run halts after ``max_answers`` answers ⊤. The mechanism is
    immutable; each run is a :class:`SparseVectorRun` (:meth:`start`), or one call of
    :meth:`randomise` on a whole list of query values.

    Parameters
    ----------
    {epsilon}
    sensitivity : float, default=1.0
        Sensitivity Δ of every query (``|q(D) - q(D')|`` for neighbouring D, D'), > 0.
    threshold : float
        The public threshold T.
    max_answers : int, default=1
        c: the run halts after this many ⊤.
    monotonic : bool, default=False
        Whether the queries are monotonic: for any two neighbouring datasets, either
        every query is at least as large on the first or every query is at least as
        large on the second (counts of one stream of records added or removed). Then
        the query noise is halved (Lyu et al. 2017, Thm 3). **Wrong for general
        queries** (an audit shows the leak: tests/privacy/test_mechanism_privacy.py).
    {random_state}

    Attributes
    ----------
    epsilon, sensitivity, threshold : float
    max_answers : int
    monotonic : bool
    threshold_epsilon, query_epsilon : float
        The split ε₁ + ε₂ <= ε (rounded down).

    See Also
    --------
    AboveThreshold : the case ``max_answers=1``.

    Notes
    -----
    **Privacy.** ε-DP for a run on any adaptively chosen stream of queries of
    sensitivity Δ (Lyu, Su & Li 2017, Theorem 2), under the relation the sensitivity was
    computed for. Released: the answers (⊤/⊥, and where the run halted), nothing
    else — in particular not the noisy query values (their release would not be private:
    Lyu et al.'s Alg. 3). The cost does not depend on the number of ⊥ answers; a run
    is recorded as one :class:`~dpsk.accounting.PureDPEvent` of ε, charged to the
    accountant when the run starts. Noise: threshold Lap(Δ'/ε₁), queries Lap(2cΔ'/ε₂)
    (Lap(cΔ'/ε₂) if ``monotonic``), Δ' = Δ after rounding onto the lattice, exact
    discrete Laplace on the lattice: floating-point safe.

    Examples
    --------
    >>> from dpsk.mechanisms import SparseVector
    >>> svt = SparseVector(epsilon=1.0, sensitivity=1.0, threshold=100.0, max_answers=2, random_state=0)
    >>> svt.randomise([3.0, 250.0, 10.0, 400.0, 500.0]).tolist()  # 1 = above, -1 = not answered
    [0, 1, 0, 1, -1]
    """

    def __init__(self, *, epsilon, sensitivity=1.0, threshold, max_answers=1, monotonic=False, random_state=None):
        self.epsilon, _ = check_privacy_params(epsilon, 0.0)
        self.sensitivity = check_sensitivity(sensitivity, positive=True)
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not math.isfinite(threshold):
            raise ValueError(f"threshold must be a finite real number, got {threshold!r}")
        self.threshold = float(threshold)
        if isinstance(max_answers, bool) or not isinstance(max_answers, numbers.Integral) or max_answers < 1:
            raise ValueError(f"max_answers must be an integer >= 1, got {max_answers!r}")
        self.max_answers = int(max_answers)
        if not isinstance(monotonic, (bool, np.bool_)):
            raise TypeError(f"monotonic must be a bool, got {type(monotonic).__name__}")
        self.monotonic = bool(monotonic)
        self.random_state = random_state
        self.threshold_epsilon, self.query_epsilon = split_epsilon(
            self.epsilon, threshold_share(self.max_answers, self.monotonic)
        )
        self._noise = _NoiseSource(random_state)
        self._params = self._calibrate()

    def __repr__(self):
        return (
            f"{type(self).__name__}(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
            f"threshold={self.threshold!r}, max_answers={self.max_answers!r}, monotonic={self.monotonic!r})"
        )

    # -- calibration ----------------------------------------------------------------------

    def _query_shift(self):
        """How far, in sensitivities, each ⊤ must move its query noise (2c, or c if monotonic)."""
        return self.max_answers if self.monotonic else 2 * self.max_answers

    def _calibrate(self):
        """(threshold scale, query scale, granularity g), in value units (multiples of g)."""
        threshold_scale = self.sensitivity / self.threshold_epsilon
        g = lattice_granularity(threshold_scale)
        steps = Fraction(lattice_sensitivity(self.sensitivity, g, 1, "l1")) / Fraction(g)
        assert steps.denominator == 1
        steps = int(steps)
        t_threshold = discrete_laplace_scale(self.threshold_epsilon, steps)
        t_query = discrete_laplace_scale(self.query_epsilon, self._query_shift() * steps)
        return t_threshold * g, t_query * g, g

    def privacy_event(self):
        """The privacy event of one run (whatever its answers)."""
        return PureDPEvent(self.epsilon)

    # -- runs ---------------------------------------------------------------------------

    def _noisy_threshold(self):
        threshold_scale, _, g = self._params
        value = np.array([self.threshold], dtype=np.float64)
        add_laplace_lattice(value, threshold_scale, g, self._rng)
        return float(value[0])

    def _noisy_queries(self, values):
        _, query_scale, g = self._params
        add_laplace_lattice(values, query_scale, g, self._rng)
        return values

    def _answers(self, noisy, noisy_thresholds):
        """Answer codes of runs (rows), from the noisy queries and thresholds (halting after c ⊤)."""
        above = noisy >= noisy_thresholds[:, None]
        before = np.cumsum(above, axis=1) - above  # ⊤ answers strictly before each query
        answers = np.where(above, ABOVE, BELOW).astype(np.int8)
        answers[before >= self.max_answers] = UNANSWERED
        return answers

    def _check_values(self, values):
        arr = np.array(values, dtype=np.float64, copy=True)
        if arr.ndim not in (1, 2):
            raise ValueError(f"values must be a 1-d array of query values (or 2-d: runs x queries), got {arr.ndim}-d")
        if not np.all(np.isfinite(arr)):
            raise ValueError("query values must be finite")
        return np.ascontiguousarray(arr)

    def randomise(self, values, *, accountant=None):
        """Answer a whole stream of query values in one run (or one run per row).

        Parameters
        ----------
        values : array-like of shape (n_queries,) or (n_runs, n_queries)
            The exact query values q_i(D), in order. A 2-d array is ``n_runs``
            independent runs (each one release, each charged).
        accountant : BudgetAccountant, optional
            Charged ``privacy_event()`` per run before any answer is computed; default:
            the active accountant (``with accountant:``), if any.

        Returns
        -------
        answers : ndarray of int8, the shape of ``values``
            1 (⊤, above), 0 (⊥, below) or -1 (not answered: the run halted before).
        """
        arr = self._check_values(values)
        runs = arr if arr.ndim == 2 else arr[None, :]
        _charge(self.privacy_event(), runs.shape[0], accountant)
        self._noise.begin(self, (arr,))
        # Draw order: every threshold, then every query (a run of size 1 draws as randomise).
        thresholds = np.full(runs.shape[0], self.threshold, dtype=np.float64)
        add_laplace_lattice(thresholds, self._params[0], self._params[2], self._rng)
        noisy = self._noisy_queries(runs.reshape(-1)).reshape(runs.shape)
        out = self._answers(noisy, thresholds)
        event = self.privacy_event()
        for _ in range(runs.shape[0]):
            note_release(event)
        return out if arr.ndim == 2 else out[0]

    def start(self, *, accountant=None):
        """Start a run: charge its cost, draw the noisy threshold, return the run.

        Parameters
        ----------
        accountant : BudgetAccountant, optional
            Charged ``privacy_event()`` now, before any query is answered; default: the
            active accountant (``with accountant:``), if any. ``BudgetExceededError``
            if it does not fit.

        Returns
        -------
        run : SparseVectorRun
        """
        _charge(self.privacy_event(), 1, accountant)
        self._noise.begin(self, ())
        run = SparseVectorRun(self, self._noisy_threshold(), self._rng if not self._noise.seeded else None)
        note_release(self.privacy_event())
        return run


def _charge(event, runs, accountant):
    """Record ``runs`` releases of ``event`` on the accountant in play (explicit or active)."""

    if accountant is not None and not (hasattr(accountant, "check_event") and hasattr(accountant, "record")):
        raise TypeError(f"accountant must be a BudgetAccountant or None, got {type(accountant).__name__}")
    accountant = accountant_in_play(accountant)
    if accountant is None:
        return
    total = event if runs == 1 else SelfComposedEvent(event, runs)
    accountant.check_event(total)  # all runs fit, or none is recorded
    for _ in range(runs):
        accountant.record(event)


class SparseVectorRun:
    """One run of a :class:`SparseVector`: answers queries until ``max_answers`` ⊤.

    Made by :meth:`SparseVector.start`, which has already charged the whole run.

    Attributes
    ----------
    answers_ : list of bool
        The answers given so far (True = ⊤).
    halted : bool
        Whether the run has given its ``max_answers`` ⊤ (then :meth:`query` raises).

    Notes
    -----
    **Privacy.** Part of the run charged by :meth:`SparseVector.start`: answering more
    queries costs nothing more, and the run refuses to answer after ``max_answers`` ⊤.
    Keep the run to yourself: the noisy threshold it holds is not released.
    """

    def __init__(self, mechanism, noisy_threshold, rng):
        self._mechanism = mechanism
        self._noisy_threshold = noisy_threshold
        self._rng = rng  # None: a seeded mechanism, each query rekeyed on its value
        self._positives = 0
        self.answers_ = []

    @property
    def halted(self):
        return self._positives >= self._mechanism.max_answers

    def query(self, value):
        """Answer one query: True (⊤) if its noisy value reaches the noisy threshold.

        Parameters
        ----------
        value : float or callable
            The exact query value q_i(D) (sensitivity ``sensitivity``), or a callable
            with no arguments returning it (called only if the run has not halted).

        Returns
        -------
        bool

        Raises
        ------
        RuntimeError
            If the run has halted.
        """
        if self.halted:
            raise RuntimeError(f"this run has halted after {self._mechanism.max_answers} answers above the threshold")
        if callable(value):
            value = value()
        arr = self._mechanism._check_values(np.atleast_1d(np.asarray(value, dtype=np.float64)))
        if arr.shape != (1,):
            raise ValueError("query takes one value")
        mechanism = self._mechanism
        if self._rng is None:
            mechanism._noise.begin(mechanism, (arr,))
            rng = mechanism._rng
        else:
            rng = self._rng
        _, query_scale, g = mechanism._params
        add_laplace_lattice(arr, query_scale, g, rng)
        above = bool(arr[0] >= self._noisy_threshold)
        self._positives += above
        self.answers_.append(above)
        return above


@Substitution(**MECHANISM_DOCS)
class AboveThreshold(SparseVector):
    """AboveThreshold: the first query above a noisy threshold (SparseVector with c = 1).

    Parameters
    ----------
    {epsilon}
    sensitivity : float, default=1.0
        Sensitivity Δ of every query, > 0.
    threshold : float
        The public threshold T.
    monotonic : bool, default=False
        See :class:`SparseVector`.
    {random_state}

    Notes
    -----
    **Privacy.** ε-DP per run, as :class:`SparseVector` with ``max_answers=1`` (Dwork &
    Roth 2014, Thm 3.23; Lyu, Su & Li 2017, Alg. 1): threshold noise Lap(Δ'/ε₁), query
    noise Lap(2Δ'/ε₂), ε₁ : ε₂ = 1 : 2^(2/3). Released: the answers.

    Examples
    --------
    >>> from dpsk.mechanisms import AboveThreshold
    >>> run = AboveThreshold(epsilon=1.0, threshold=50.0, random_state=0).start()
    >>> [run.query(v) for v in (3.0, 10.0, 90.0)]
    [False, False, True]
    >>> run.halted
    True
    """

    def __init__(self, *, epsilon, sensitivity=1.0, threshold, monotonic=False, random_state=None):
        super().__init__(
            epsilon=epsilon,
            sensitivity=sensitivity,
            threshold=threshold,
            max_answers=1,
            monotonic=monotonic,
            random_state=random_state,
        )
