# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Black-box test of a privacy claim on one pair of neighbouring inputs.

Method (event-based hypothesis test with sample splitting, after StatDP, DP-Sniper and
Google's approximate-DP test; see doc/developers/privacy_testing.rst):

1. Run the randomized function ``n`` times on each neighbour.
2. On the *selection* part of the outputs, reduce the outputs to scalar statistics (each
   coordinate, plus a linear discriminant for vectors), bin each statistic, and build
   candidate events: half-lines, single values of discrete outputs, and the unions of bins
   where one neighbour is more than e^ε' times as likely as the other (the maximiser of
   Google's Σ(p̂ − e^ε' q̂)₊). Bins and unions come from one half of the selection runs;
   every candidate is scored on the other half, and the event whose violation looks
   largest is kept.
3. On the disjoint *test* part, bound the probability of that one event under each
   neighbour with exact Clopper–Pearson intervals (α/2 each) and compare with the claim's
   whole privacy profile: the claim is rejected iff for some ε' on the profile's grid
   ``P_low − e^ε' Q_up > δ(ε')``.

Because the event is chosen on data the test never sees, the test half's counts are plain
binomials, and a mechanism that satisfies the claim is rejected with probability at most
``alpha``, whatever the selection did (no double dipping, no calibrated constant).
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

from dpsk.accounting import PrivacyEvent
from dpsk.audit._profiles import privacy_profile

__all__ = ["AuditResult", "audit"]

# Largest number of distinct values for which a statistic is treated as discrete.
_MAX_DISCRETE = 64
# Quantile levels of the continuous thresholds: a dense body plus the tails, where the
# likelihood ratio of shifted noise is largest.
_TAILS = np.array([1e-4, 3e-4, 1e-3, 3e-3])
_LEVELS = np.unique(np.concatenate([_TAILS, np.linspace(0.005, 0.995, 199), 1.0 - _TAILS]))
# Ratio thresholds (fractions of the top of the profile grid) for the union-of-bins events.
_UNION_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
# Largest output dimension audited directly; project larger outputs first.
_MAX_DIMENSION = 64


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    passed : bool
        False iff the claim was rejected: some event's probabilities, bounded with
        confidence ``confidence``, violate a point of the claimed privacy profile.
    verdict : str
        ``"pass"`` or ``"fail"``.
    epsilon_lower_bound : float
        A lower bound, holding with probability ``confidence``, on the ε the function
        satisfies at δ = ``delta`` on these neighbours (0 when nothing was found). Valid
        whatever the claim.
    confidence : float
        ``1 − alpha``.
    statistic : float
        The test statistic ``p̂ − e^ε' q̂`` of the tested event on the test half, at the ε'
        where the violation is largest (the hockey-stick estimate; for a union-of-bins
        event it is Google's Σ(p̂ − e^ε' q̂)₊ with the bins fixed out of sample).
    threshold : float
        ``delta_claimed`` plus the tolerance implied by the Clopper–Pearson intervals.
        The claim fails iff ``statistic > threshold``.
    epsilon_tested, delta_claimed : float
        The point (ε', δ(ε')) of the claimed profile where the violation is largest.
    event, epsilon_event : str
        The event tested for the verdict, and the one behind ``epsilon_lower_bound``.
    counts : tuple of int
        ``(k_p, k_q)``: how often the verdict event occurred on the test half under the
        neighbour it favours and under the other one, each out of ``n_test``.
    n_samples, n_test : int
        Runs per neighbour, and how many of them formed the test half.
    delta : float
        The δ at which ``epsilon_lower_bound`` is stated.
    claim : PrivacyEvent or tuple
        What was tested.

    Notes
    -----
    **Privacy.** Statistics of the outputs of the audited function on the audit's
    own inputs: nothing about them is private. Audit synthetic neighbours, not
    personal data.
    """

    passed: bool
    epsilon_lower_bound: float
    confidence: float
    statistic: float
    threshold: float
    epsilon_tested: float
    delta_claimed: float
    event: str
    epsilon_event: str
    counts: tuple
    n_samples: int
    n_test: int
    delta: float
    claim: object

    @property
    def verdict(self):
        return "pass" if self.passed else "fail"

    def __str__(self):
        k_p, k_q = self.counts
        return (
            f"audit {self.verdict}: claim {self.claim!r}\n"
            f"  epsilon >= {self.epsilon_lower_bound:.4g} at delta={self.delta:g} "
            f"(confidence {self.confidence:g}; event {self.epsilon_event})\n"
            f"  statistic p - e^eps q = {self.statistic:.4g} vs threshold {self.threshold:.4g} "
            f"at eps={self.epsilon_tested:.4g}, claimed delta={self.delta_claimed:.3g}\n"
            f"  event {self.event}: {k_p} vs {k_q} of {self.n_test} test runs "
            f"({self.n_samples} runs per neighbour)"
        )


def _clopper_pearson(counts, n, alpha):
    """One-sided exact bounds (lower, upper), each holding with probability ≥ 1 − alpha."""
    counts = np.asarray(counts, dtype=np.float64)
    lower = np.where(counts > 0, beta.ppf(alpha, np.maximum(counts, 1), n - counts + 1), 0.0)
    upper = np.where(counts < n, beta.ppf(1 - alpha, counts + 1, np.maximum(n - counts, 1)), 1.0)
    return lower, upper


def _violation(k_p, k_q, n, alpha, grid, deltas):
    """max over ε' of P_low − e^ε' Q_up − δ(ε'), and the argmax index, per candidate."""
    p_low, _ = _clopper_pearson(k_p, n, alpha / 2)
    _, q_up = _clopper_pearson(k_q, n, alpha / 2)
    margins = p_low[:, None] - np.exp(grid)[None, :] * q_up[:, None] - deltas[None, :]
    where = np.argmax(margins, axis=1)
    return margins[np.arange(margins.shape[0]), where], where


def _epsilon_bound(k_p, k_q, n, alpha, delta):
    """ln((P_low − δ)/Q_up), or −inf where P_low ≤ δ."""
    p_low, _ = _clopper_pearson(k_p, n, alpha / 2)
    _, q_up = _clopper_pearson(k_q, n, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_low > delta, np.log((p_low - delta) / q_up), -np.inf)


class _Statistic:
    """A scalar reduction of the outputs, fitted on the selection half only."""

    def __init__(self, name, weights):
        self.name = name
        self.weights = weights

    def __call__(self, outputs):
        return outputs @ self.weights


def _statistics(sel_a, sel_b):
    """Each coordinate, plus Fisher's discriminant direction for vector outputs."""
    k = sel_a.shape[1]
    stats = [_Statistic(f"output[{j}]" if k > 1 else "output", np.eye(k)[j]) for j in range(k)]
    if k > 1:
        scatter = np.cov(sel_a, rowvar=False) + np.cov(sel_b, rowvar=False)
        ridge = 1e-9 * max(np.trace(scatter), 1e-300) * np.eye(k)
        weights = np.linalg.solve(scatter + ridge, sel_a.mean(axis=0) - sel_b.mean(axis=0))
        if np.all(np.isfinite(weights)) and np.any(weights != 0):
            stats.append(_Statistic("linear discriminant of output", weights))
    return stats


class _Binning:
    """Bins of one statistic (from the selection half) and the candidate events on them.

    Discrete statistics get one bin per seen value plus the gaps between them; continuous
    ones get bins between pooled quantiles. Every candidate event is a union of bins.
    """

    def __init__(self, pooled):
        values = np.unique(pooled)
        self.discrete = values.size <= _MAX_DISCRETE
        if self.discrete:
            self.edges = values
            self.n_bins = 2 * values.size + 1
        else:
            self.edges = np.unique(np.quantile(pooled, _LEVELS))
            self.n_bins = self.edges.size + 1

    def assign(self, values):
        index = np.searchsorted(self.edges, values, side="left")
        if not self.discrete:
            return index  # bin i: edges[i-1] < x <= edges[i]
        inside = index < self.edges.size
        exact = np.zeros(values.shape, dtype=bool)
        exact[inside] = self.edges[index[inside]] == values[inside]
        return 2 * index + exact  # odd bins hold one seen value, even bins the gaps

    def counts(self, values):
        return np.bincount(self.assign(values), minlength=self.n_bins)

    def candidates(self, counts_a, counts_b, ratios):
        """Boolean masks (n_candidates, n_bins) and their descriptions (made on demand)."""
        b = self.n_bins
        lower_tri = np.tri(b, dtype=bool)
        masks = [lower_tri[:-1], ~lower_tri[:-1]]  # prefixes {bins ≤ i}, suffixes {bins > i}
        kinds = [("prefix", i) for i in range(b - 1)] + [("suffix", i) for i in range(b - 1)]
        if self.discrete:
            points = np.eye(b, dtype=bool)[1::2]
            masks.append(points)
            kinds += [("point", i) for i in range(1, b, 2)]
        for ratio in ratios:
            for first, second, name in ((counts_a, counts_b, "0/1"), (counts_b, counts_a, "1/0")):
                mask = first > math.exp(ratio) * second
                masks.append(mask[None, :])
                kinds.append(("union", (name, ratio, int(mask.sum()))))
        return np.concatenate(masks), kinds

    def describe(self, stat_name, kind):
        what, arg = kind
        if what == "union":
            name, ratio, size = arg
            return f"union of {size} bins of {stat_name} where p{name} > e^{ratio:.3g} (selection half)"
        if not self.discrete:
            op = "<=" if what == "prefix" else ">"
            return f"{stat_name} {op} {self.edges[arg]:.6g}"
        # Discrete bins: 0 = (< u0), 1 = {u0}, 2 = (u0, u1), 3 = {u1}, ..., 2m = (> u_{m-1}).
        value = format(self.edges[arg // 2], ".6g")
        if what == "point":
            return f"{stat_name} == {value}"
        if what == "prefix":  # bins 0..arg
            return f"{stat_name} {'<=' if arg % 2 else '<'} {value}"
        return f"{stat_name} {'>' if arg % 2 else '>='} {value}"  # suffix: bins arg+1..


def _as_outputs(raw, n, which):
    out = np.asarray(raw, dtype=np.float64)
    if out.ndim == 1:
        out = out[:, None]
    if out.ndim != 2 or out.shape[0] != n:
        raise ValueError(
            f"the sampler must return an array of shape ({n},) or ({n}, k) for size={n}; "
            f"got shape {np.shape(raw)} for neighbours[{which}]"
        )
    if out.shape[1] > _MAX_DIMENSION:
        raise ValueError(
            f"outputs have dimension {out.shape[1]} > {_MAX_DIMENSION}; project them to a "
            "scalar or a small vector first (see dpsk.audit.project_attribute)"
        )
    if np.isnan(out).any():
        raise ValueError(f"the sampler returned NaN for neighbours[{which}]")
    return out


def audit(
    sampler,
    neighbours,
    epsilon=None,
    delta=0.0,
    *,
    event=None,
    n_samples=100_000,
    alpha=1e-6,
    selection_fraction=0.5,
    random_state=None,
):
    """Test a differential-privacy claim empirically on one pair of neighbouring inputs.

    Parameters
    ----------
    sampler : callable ``sampler(data, size, rng) -> ndarray``
        Runs the randomized function ``size`` times on ``data`` with randomness from the
        numpy Generator ``rng``, and returns the outputs as an array of shape ``(size,)``
        or ``(size, k)`` (small k). See :func:`mechanism_sampler` and
        :func:`estimator_sampler`.
    neighbours : tuple (data_0, data_1)
        Two neighbouring inputs, passed to ``sampler`` as they are (for estimators, dicts
        of ``fit`` arguments, see :func:`canary_neighbours`).
    epsilon, delta : float
        The claimed (ε, δ) guarantee. Give either ``epsilon`` or ``event``.
    event : PrivacyEvent, optional
        Claim the exact privacy profile of a dpsk privacy event instead (for example an
        estimator's ``privacy_spent_``): a Gaussian mechanism is then tested along its
        whole (ε', δ(ε')) curve, where violations are visible, not only at a tiny δ.
        ``delta`` then only sets the δ at which ``epsilon_lower_bound`` is reported.
    n_samples : int, default=100_000
        Runs per neighbour (split between event selection and testing).
    alpha : float, default=1e-6
        Significance level: a function that satisfies the claim fails with probability at
        most ``alpha``; ``epsilon_lower_bound`` holds with probability ``1 − alpha``.
    selection_fraction : float, default=0.5
        Fraction of the runs used to choose the tested event.
    random_state : None, int, SeedSequence or Generator, default=None
        Seed of the runs. An int makes the audit deterministic.

    Returns
    -------
    result : AuditResult

    Notes
    -----
    A passed audit is evidence, not proof: black-box tests cannot see events rarer than
    about ``1/n_samples``, and they test one pair of neighbours only (choose worst-case
    neighbours, e.g. a canary at the clipping boundary). A failed audit at ``alpha = 1e-6``
    is, up to that probability, proof that the claim is false for this function.

    **Privacy.** An audit runs the function thousands of times on the inputs it is
    given and reports statistics of the outputs, with no budget and no noise of its
    own: it gives those inputs no privacy. Run it on synthetic neighbours
    (:func:`canary_neighbours`, :func:`worst_case_neighbours`), never on personal
    data. It tests a claim; it does not make a release private.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsk.audit import audit
    >>> def laplace_count(count, size, rng):
    ...     return count + rng.laplace(0.0, 1.0 / np.log(3), size)
    >>> result = audit(laplace_count, (0.0, 1.0), epsilon=np.log(3), random_state=0)
    >>> result.passed
    True
    """
    if (epsilon is None) == (event is None):
        raise ValueError("give exactly one of epsilon (with delta) or event")
    if event is not None:
        if not isinstance(event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent, got {type(event).__name__}")
        claim = event
    else:
        claim = (float(epsilon), float(delta))
    grid, deltas = privacy_profile(claim)
    if not (isinstance(neighbours, (tuple, list)) and len(neighbours) == 2):
        raise ValueError("neighbours must be a pair (data_0, data_1)")
    if not (0.0 < alpha < 1.0):
        raise ValueError("alpha must be in (0, 1)")
    if not (0.0 < selection_fraction < 1.0):
        raise ValueError("selection_fraction must be in (0, 1)")
    n_samples = int(n_samples)
    n_select = int(round(n_samples * selection_fraction))
    n_test = n_samples - n_select
    if n_select < 20 or n_test < 10:
        raise ValueError(f"n_samples={n_samples} is too small to split into selection and test")

    rng_0, rng_1 = np.random.default_rng(random_state).spawn(2)
    out_a = _as_outputs(sampler(neighbours[0], n_samples, rng_0), n_samples, 0)
    out_b = _as_outputs(sampler(neighbours[1], n_samples, rng_1), n_samples, 1)
    if out_a.shape[1] != out_b.shape[1]:
        raise ValueError("the two neighbours gave outputs of different dimensions")
    sel_a, test_a = out_a[:n_select], out_a[n_select:]
    sel_b, test_b = out_b[:n_select], out_b[n_select:]
    ratios = [f * grid[-1] for f in _UNION_FRACTIONS]

    # Selection. Bins and union-of-bins events are built on one part of the selection
    # runs and every candidate is scored on the other part: scoring a union on the runs
    # that chose it would favour it by the upward bias of Σ(p̂ − e^ε q̂)₊.
    n_build = n_select // 2
    n_score = n_select - n_build
    best = {"verdict": (-np.inf, None), "epsilon": (-np.inf, None)}
    for stat in _statistics(sel_a, sel_b):
        v_a, v_b = stat(sel_a), stat(sel_b)
        binning = _Binning(np.concatenate([v_a[:n_build], v_b[:n_build]]))
        masks, kinds = binning.candidates(binning.counts(v_a[:n_build]), binning.counts(v_b[:n_build]), ratios)
        c_a, c_b = binning.counts(v_a[n_build:]), binning.counts(v_b[n_build:])
        k_a, k_b = masks @ c_a, masks @ c_b
        k_p = np.concatenate([k_a, k_b])  # direction 0: neighbour 0 favoured; then 1
        k_q = np.concatenate([k_b, k_a])
        scores = {
            "verdict": _violation(k_p, k_q, n_score, alpha, grid, deltas)[0],
            "epsilon": _epsilon_bound(k_p, k_q, n_score, alpha, delta),
        }
        for goal, score in scores.items():
            i = int(np.argmax(score))
            if score[i] > best[goal][0] or best[goal][1] is None:
                candidate, direction = i % masks.shape[0], i // masks.shape[0]
                best[goal] = (score[i], (stat, binning, masks[candidate], kinds[candidate], direction))

    def test_counts(choice):
        stat, binning, mask, _, direction = choice
        k_a = int(mask[binning.assign(stat(test_a))].sum())
        k_b = int(mask[binning.assign(stat(test_b))].sum())
        return (k_a, k_b) if direction == 0 else (k_b, k_a)

    def describe(choice):
        stat, binning, _, kind, direction = choice
        favoured = f"favours neighbours[{direction}]"
        return f"{binning.describe(stat.name, kind)} ({favoured})"

    verdict_choice = best["verdict"][1]
    k_p, k_q = test_counts(verdict_choice)
    margin, where = _violation(np.array([k_p]), np.array([k_q]), n_test, alpha, grid, deltas)
    eps_tested = float(grid[where[0]])
    statistic = k_p / n_test - math.exp(eps_tested) * k_q / n_test
    delta_claimed = float(deltas[where[0]])
    tolerance = statistic - (float(margin[0]) + delta_claimed)

    epsilon_choice = best["epsilon"][1]
    e_p, e_q = test_counts(epsilon_choice)
    eps_lb = float(_epsilon_bound(np.array([e_p]), np.array([e_q]), n_test, alpha, delta)[0])

    return AuditResult(
        passed=bool(margin[0] <= 0.0),
        epsilon_lower_bound=max(eps_lb, 0.0),
        confidence=1.0 - alpha,
        statistic=float(statistic),
        threshold=delta_claimed + tolerance,
        epsilon_tested=eps_tested,
        delta_claimed=delta_claimed,
        event=describe(verdict_choice),
        epsilon_event=describe(epsilon_choice),
        counts=(k_p, k_q),
        n_samples=n_samples,
        n_test=n_test,
        delta=float(delta),
        claim=claim,
    )
