# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Ledger state: running aggregates of a multiset of atoms, and the guarantee they give.

A :class:`LedgerState` counts the atoms of a ledger (:mod:`dpsk.accounting._normalize`)
and keeps, per family of :class:`~dpsk.accounting._costs.Cost`, the running aggregates
the composition theorems need: exact sums of pure ε's (Σε, Σε², Σ ε tanh(ε/2)), the
explicit δ's, the Gaussian μ² and the summed RDP curves. Adding an atom is O(1) (O(number
of Rényi orders) for atoms with an RDP curve), independent of how many spends came before.

The guarantee is the smallest of the methods described in
:mod:`dpsk.accounting._composition`: each family at its share of δ (basic composition,
:mod:`dpsk.accounting._theorems`), joint RDP, and PLD (:mod:`dpsk.accounting._pld`, handed
the PLD factories and counts of the ledger's releases).
"""

import math
from fractions import Fraction

import numpy as np

from dpsk.accounting import _calibration as cal
from dpsk.accounting import _pld, _rdp
from dpsk.accounting._costs import cost_of
from dpsk.accounting._normalize import calibrated_delta, normalize
from dpsk.accounting._sums import FloatSum, fraction_up, sum_up
from dpsk.accounting._theorems import (
    basic_delta,
    basic_epsilon,
    homogeneous_epsilon,
    homogeneous_log_delta,
    kov_closed_form_delta,
    kov_closed_form_epsilon,
    smallest_delta,
)

__all__ = ["LedgerState"]


class LedgerState:
    """Running aggregates of a multiset of atoms; O(1) (or O(#orders)) per added atom."""

    __slots__ = (
        "counts",
        "family_counts",
        "pure_sum",
        "pure_sq",
        "pure_kov",
        "pure_values",
        "pure_rdp",
        "log_keep",
        "delta_sum",
        "mu2",
        "rdp_rest",
        "rdp_rest_atoms",
        "pure_atoms",
        "profile_atoms",
        "calibrated_delta",
        "_cache",
    )

    def __init__(self):
        self.counts = {}
        self.family_counts = {"pure": 0, "gaussian": 0, "rdp": 0, "profile": 0}
        self.pure_sum = Fraction(0)
        self.pure_sq = FloatSum()
        self.pure_kov = FloatSum()
        self.pure_values = {}
        self.pure_rdp = np.zeros(len(_rdp.ORDERS))
        self.log_keep = FloatSum()
        self.delta_sum = Fraction(0)
        self.mu2 = FloatSum()
        self.rdp_rest = np.zeros(len(_rdp.ORDERS))
        self.rdp_rest_atoms = {}
        self.pure_atoms = {}
        self.profile_atoms = {}
        self.calibrated_delta = Fraction(0)  # Σ calibration δ's: where to report without a δ ceiling
        self._cache = {}

    @classmethod
    def from_counts(cls, counts):
        state = cls()
        for atom, count in counts.items():
            state.add_atom(atom, count)
        return state

    def copy(self):
        new = LedgerState.__new__(LedgerState)
        new.counts = dict(self.counts)
        new.family_counts = dict(self.family_counts)
        new.pure_sum = self.pure_sum
        new.pure_sq = self.pure_sq.copy()
        new.pure_kov = self.pure_kov.copy()
        new.pure_values = dict(self.pure_values)
        new.pure_rdp = self.pure_rdp.copy()
        new.log_keep = self.log_keep.copy()
        new.delta_sum = self.delta_sum
        new.mu2 = self.mu2.copy()
        new.rdp_rest = self.rdp_rest.copy()
        new.rdp_rest_atoms = dict(self.rdp_rest_atoms)
        new.pure_atoms = dict(self.pure_atoms)
        new.profile_atoms = dict(self.profile_atoms)
        new.calibrated_delta = self.calibrated_delta
        new._cache = {}
        return new

    def add_event(self, event):
        for atom, count in normalize(event).items():
            self.add_atom(atom, count)
        self.calibrated_delta += calibrated_delta(event)

    def plus(self, event):
        """A new state: this ledger with ``event`` added (this state is unchanged)."""
        new = self.copy()
        new.add_event(event)
        return new

    def apply(self, event):
        """Add ``event`` in place; returns a token for :meth:`undo` (O(1) in the ledger size)."""
        counts = normalize(event)
        hint = calibrated_delta(event)
        # Arrays are replaced, never mutated, by add_atom: keeping references is enough.
        token = (counts, hint, self.pure_rdp, self.rdp_rest, self._cache)
        for atom, count in counts.items():
            self.add_atom(atom, count)
        self.calibrated_delta += hint
        return token

    def undo(self, token):
        """Remove an event added by :meth:`apply` (exactly: sums are exact, arrays restored)."""
        counts, hint, pure_rdp, rdp_rest, cache = token
        for atom, count in counts.items():
            self.add_atom(atom, -count, curves=False)
        self.calibrated_delta -= hint
        self.pure_rdp, self.rdp_rest, self._cache = pure_rdp, rdp_rest, cache

    def add_atom(self, atom, count, curves=True):
        """Add ``count`` releases of ``atom`` (a negative count removes them).

        ``curves=False`` leaves the RDP arrays alone (:meth:`undo` restores them: inf - inf
        would not subtract back).
        """
        cost = cost_of(atom)
        self._cache = {}
        _bump(self.counts, atom, count)
        self.family_counts[cost.family] += count
        if cost.fixed_delta > 0.0:
            self.log_keep.add(math.log1p(-cost.fixed_delta), count)
            self.delta_sum += Fraction(cost.fixed_delta) * count
        if cost.family == "pure":
            eps = cost.pure_epsilon
            self.pure_sum += cost.pure_exact * count
            self.pure_sq.add(eps * eps, count)
            self.pure_kov.add(eps * math.tanh(eps / 2.0), count)  # ε (e^ε - 1)/(e^ε + 1)
            _bump(self.pure_values, eps, count)
            _bump(self.pure_atoms, atom, count)
            if curves:
                self.pure_rdp = self.pure_rdp + count * cost.rdp
        elif cost.family == "gaussian":
            self.mu2.add(cost.mu2, count)
        elif cost.family == "rdp":
            if curves:
                self.rdp_rest = self.rdp_rest + count * cost.rdp
            _bump(self.rdp_rest_atoms, atom, count)
        else:
            _bump(self.profile_atoms, atom, count)

    # -- simple questions ------------------------------------------------------------------

    def __len__(self):
        return sum(self.counts.values())

    def only_family(self, family):
        return all(n == 0 for f, n in self.family_counts.items() if f != family)

    def _single_pure_release(self):
        """The cost of the pure family's only release if it has no explicit δ, else None.

        Its own profile (exact for Laplace, ...) may then beat the family's bounds.
        """
        if self.family_counts["pure"] != 1:
            return None
        cost = cost_of(next(iter(self.pure_atoms)))
        return cost if cost.fixed_delta == 0.0 else None

    def _single_rdp_release(self):
        """The cost of the RDP family's only release, if it holds exactly one, else None.

        Its own profile (exact for the discrete Gaussian, ...) may then beat its RDP curve.
        """
        if len(self.rdp_rest_atoms) == 1:
            ((atom, count),) = self.rdp_rest_atoms.items()
            if count == 1:
                return cost_of(atom)
        return None

    def single_atom(self):
        """The atom if the ledger is exactly one release, else None."""
        if len(self.counts) == 1:
            atom, count = next(iter(self.counts.items()))
            if count == 1:
                return atom
        return None

    def fixed_delta(self):
        """δ_fixed = 1 - Π(1 - δᵢ) of the explicit δ's, rounded up.

        The smaller of Σδᵢ (exact) and the product form (rounded up): exact for one spend,
        tighter for many.
        """
        if self.delta_sum <= 0:
            return 0.0
        product = cal.round_up(-math.expm1(self.log_keep.value()))
        return min(fraction_up(self.delta_sum), product)

    def calibration_delta(self):
        """Σ of the calibration δ's of the recorded releases (a reporting point), as a float."""
        return min(float(self.calibrated_delta), 1.0)

    def basic_epsilon(self):
        """Σ ε of the pure family, exactly, rounded up (inf if other families are present)."""
        if not self.only_family("pure"):
            return math.inf
        return fraction_up(self.pure_sum)

    def rdp_all(self):
        """The summed RDP curve of the whole ledger (None if some atom has none)."""
        if self.family_counts["profile"]:
            return None
        return self._rdp_sum()

    def _rdp_sum(self):
        """The summed RDP curve of the atoms that have one (all but the profile family)."""
        return self.pure_rdp + self.rdp_rest + cal.round_up(self.mu2.value()) / 2.0 * _rdp.ORDERS

    def rdp_curve_function(self):
        """A callable orders -> summed RDP curve at arbitrary orders (for subsampling)."""
        atoms = list(self.counts.items())

        def curve(orders):
            total = np.zeros(len(orders))
            for atom, count in atoms:
                total += count * cost_of(atom).rdp_at(np.asarray(orders, dtype=float))
            return total

        return curve

    # -- family guarantees at a share of δ --------------------------------------------------

    def _pure_family_epsilon(self, delta, use_rdp=True):
        if self.family_counts["pure"] == 0:
            return 0.0
        best = fraction_up(self.pure_sum)
        if delta <= 0.0:
            return best
        single = self._single_pure_release()
        if single is not None:
            best = min(best, single.profile(delta))
            if single.exact:
                return best  # nothing beats the exact profile
        if len(self.pure_values) == 1:
            ((eps0, k),) = self.pure_values.items()
            if eps0 == 0.0:
                return 0.0
            best = min(best, homogeneous_epsilon(eps0, k, delta))
        sum_eps = float(self.pure_sum)
        kov = kov_closed_form_epsilon(sum_eps, self.pure_sq.value(), self.pure_kov.value(), delta)
        rdp = _rdp.rdp_to_epsilon(self.pure_rdp, delta) if use_rdp else math.inf
        return min(best, cal.round_up(min(kov, rdp)))

    def _gaussian_family_epsilon(self, delta):
        if self.family_counts["gaussian"] == 0:
            return 0.0
        return cal.gaussian_epsilon(delta, math.sqrt(cal.round_up(self.mu2.value())))

    def _rdp_family_epsilon(self, delta):
        if self.family_counts["rdp"] == 0:
            return 0.0
        best = cal.round_up(_rdp.rdp_to_epsilon(self.rdp_rest, delta))
        single = self._single_rdp_release()
        return best if single is None else min(best, single.profile(delta))

    def _profile_family_epsilon(self, delta):
        total = sum(self.profile_atoms.values())
        if total == 0:
            return 0.0
        share = delta / total  # basic composition: each release gets an equal share of δ
        return sum_up([n * cost_of(atom).profile(share) for atom, n in self.profile_atoms.items()])

    def _joint_rdp_epsilon(self, delta):
        return cal.round_up(_rdp.rdp_to_epsilon(self._rdp_sum(), delta))

    # -- family guarantees at a share of ε (the inverse direction: δ at a given ε) ---------
    #
    # Each is the inverse of the ε function above: the smallest δ share at which that
    # family's ε is at most ``epsilon`` (not rounded: :meth:`delta` rounds the total).

    def _pure_family_delta(self, epsilon, use_rdp=True):
        if self.family_counts["pure"] == 0 or epsilon >= math.inf or Fraction(epsilon) >= self.pure_sum:
            return 0.0
        single = self._single_pure_release()
        if single is not None and single.exact:
            return single.delta(epsilon)  # nothing beats the exact profile
        best = 1.0 if single is None else single.delta(epsilon)
        if len(self.pure_values) == 1:
            ((eps0, k),) = self.pure_values.items()
            best = min(best, math.exp(homogeneous_log_delta(eps0, k, epsilon)))
        sum_sq = self.pure_sq.value()
        best = min(best, kov_closed_form_delta(self.pure_kov.value(), sum_sq, epsilon))
        if use_rdp:
            best = min(best, _rdp.rdp_to_delta(self.pure_rdp, epsilon))
        return best

    def _gaussian_family_delta(self, epsilon):
        if self.family_counts["gaussian"] == 0:
            return 0.0
        return cal.gaussian_delta(epsilon, math.sqrt(cal.round_up(self.mu2.value())))

    def _rdp_family_delta(self, epsilon):
        if self.family_counts["rdp"] == 0:
            return 0.0
        best = _rdp.rdp_to_delta(self.rdp_rest, epsilon)
        single = self._single_rdp_release()
        return best if single is None else min(best, single.delta(epsilon))

    def _profile_family_delta(self, epsilon):
        total = sum(self.profile_atoms.values())
        if total == 0:
            return 0.0
        if total == 1:
            ((atom, _),) = self.profile_atoms.items()
            return cost_of(atom).delta(epsilon)
        return smallest_delta(self._profile_family_epsilon, epsilon)

    def _joint_rdp_delta(self, epsilon):
        return _rdp.rdp_to_delta(self._rdp_sum(), epsilon)

    # -- the ledger's guarantee -------------------------------------------------------------

    def conversion_delta(self, delta):
        """δ_c left for conversion when the total must be ``delta`` (rounded down); None if < 0."""
        return cal.delta_remove(delta, self.fixed_delta())

    def epsilon(self, delta, *, method="tightest", use_pld=True):
        """The smallest certified ε such that the ledger is (ε, ``delta``)-DP (rounded up)."""
        if not self.counts or delta >= 1.0:
            return 0.0
        delta_c = self.conversion_delta(delta)
        if delta_c is None:
            return math.inf
        return self.conversion_epsilon(delta_c, method=method, use_pld=use_pld)

    def conversion_epsilon(self, delta_c, *, method="tightest", use_pld=True):
        """ε of the ledger when δ_c is spent on conversion; its total δ is δ_fixed ⊕ δ_c.

        Explicit δ's of (ε, δ) releases are not part of δ_c: they are in δ_fixed.
        """
        key = (delta_c, method, use_pld)
        if key not in self._cache:
            self._cache[key] = self._conversion_epsilon(delta_c, method, use_pld)
        return self._cache[key]

    def certify(self, epsilon, delta_c, *, use_pld=True):
        """None if the ledger is certified (``epsilon``, δ_fixed ⊕ δ_c)-DP, else its best ε.

        Cheapest methods first: the exact Σε of pure releases; for Gaussian releases only,
        one evaluation of δ(ε) instead of solving for ε; every method but PLD; PLD last.
        """
        if self.basic_epsilon() <= epsilon:
            return None
        if delta_c > 0.0 and self.only_family("gaussian"):
            mu = math.sqrt(cal.round_up(self.mu2.value()))
            if cal.gaussian_delta(cal.round_down(epsilon), mu) <= delta_c:
                return None
        eps = self.conversion_epsilon(delta_c, use_pld=False)
        if eps <= epsilon:
            return None
        if use_pld:
            eps = self.conversion_epsilon(delta_c, use_pld=True)
            if eps <= epsilon:
                return None
        return eps

    def total_delta(self, delta_c):
        """δ_fixed ⊕ δ_c = 1 - (1 - δ_fixed)(1 - δ_c), rounded up."""
        return cal.delta_compose(self.fixed_delta(), delta_c)

    def delta(self, epsilon, *, method="tightest", use_pld=True):
        """The smallest certified δ such that the ledger is (``epsilon``, δ)-DP (rounded up).

        The inverse of :meth:`epsilon`: the explicit δ's, composed with the δ_c that the
        conversion needs at ``epsilon``, by the same methods.
        """
        if not self.counts:
            return 0.0
        delta_c = self._conversion_delta(float(epsilon), method, use_pld)
        return min(1.0, self.total_delta(min(1.0, cal.round_up(delta_c))))

    def _conversion_delta(self, epsilon, method, use_pld):
        if method == "basic":
            return 0.0 if self.only_family("pure") and epsilon >= self.basic_epsilon() else 1.0
        if method == "advanced":
            return self._pure_family_delta(epsilon, use_rdp=False) if self.only_family("pure") else 1.0
        if method == "gaussian":
            return self._gaussian_family_delta(epsilon) if self.only_family("gaussian") else 1.0
        if method == "pld":
            result = self._pld_delta(epsilon)
            return 1.0 if result is None else result
        # Each group: its δ function, and the ε at which that δ is 0 (its pure ε, or inf).
        profile_group = (self._profile_family_delta, self._profile_family_epsilon(0.0))
        joint_groups = [(self._joint_rdp_delta, math.inf)]
        if self.family_counts["profile"]:
            joint_groups.append(profile_group)
        joint = basic_delta(joint_groups, epsilon)
        if method == "rdp":
            return joint
        groups = {
            "pure": (self._pure_family_delta, self._pure_family_epsilon(0.0)),
            "gaussian": (self._gaussian_family_delta, math.inf),
            "rdp": (self._rdp_family_delta, math.inf),
            "profile": profile_group,
        }
        best = basic_delta([g for f, g in groups.items() if self.family_counts[f] > 0], epsilon)
        best = min(best, joint)
        if use_pld and best > 0.0 and math.isfinite(epsilon) and self._pld_may_help():
            pld_delta = self._pld_delta(epsilon)
            if pld_delta is not None:
                best = min(best, pld_delta)
        return best

    def _conversion_epsilon(self, delta_c, method, use_pld):
        if not self.counts:
            return 0.0
        if method == "basic":
            return self.basic_epsilon()
        if method == "advanced":
            return self._pure_family_epsilon(delta_c, use_rdp=False) if self.only_family("pure") else math.inf
        if method == "gaussian":
            return self._gaussian_family_epsilon(delta_c) if self.only_family("gaussian") else math.inf
        joint = basic_epsilon(
            [self._joint_rdp_epsilon] + ([self._profile_family_epsilon] if self.family_counts["profile"] else []),
            delta_c,
        )
        if method == "rdp":
            return joint
        if method == "pld":
            result = self._pld_epsilon(self.total_delta(delta_c), None)
            return math.inf if result is None else result
        families = {
            "pure": self._pure_family_epsilon,
            "gaussian": self._gaussian_family_epsilon,
            "rdp": self._rdp_family_epsilon,
            "profile": self._profile_family_epsilon,
        }
        best = basic_epsilon([f for family, f in families.items() if self.family_counts[family] > 0], delta_c)
        best = min(best, joint)
        if use_pld and delta_c > 0.0 and math.isfinite(best) and self._pld_may_help():
            pld_eps = self._pld_epsilon(self.total_delta(delta_c), best)
            if pld_eps is not None:
                best = min(best, pld_eps)
        return best

    def _pld_may_help(self):
        # Exact already: all-Gaussian, one release with an exact profile, or identical
        # pure releases (optimal composition).
        if self.only_family("gaussian"):
            return False
        single = self.single_atom()
        if single is not None and cost_of(single).exact:
            return False
        if self.only_family("pure") and len(self.pure_values) == 1 and all(cost_of(a).bare for a in self.counts):
            return False
        return _pld.available()

    # -- privacy loss distributions (optional dp-accounting) --------------------------------

    def _ledger_pld(self, epsilon):
        """The PLD of the whole ledger, discretised for an ε of about ``epsilon`` (cached in
        the state's cache, emptied whenever the ledger changes), or None if some atom has none.
        """
        interval = _pld.interval_for(epsilon)
        key = ("pld", interval)
        if key not in self._cache:
            costs = [(cost_of(atom), count) for atom, count in self.counts.items()]
            if any(cost.pld is None for cost, _ in costs):
                self._cache[key] = None
            else:
                parts = [(cost.pld, count) for cost, count in costs if cost.family != "gaussian"]
                mu2 = cal.round_up(self.mu2.value()) if self.family_counts["gaussian"] else None
                self._cache[key] = _pld.compose(parts, mu2, interval)
        return self._cache[key]

    def _pld_epsilon(self, delta, hint):
        """ε of the whole ledger at total ``delta`` by PLD, or None if it has no PLD.

        ``hint`` (an ε already certified by another method) sets the discretisation interval.
        """
        if not _pld.available():
            return None
        composed = self._ledger_pld(hint)
        return None if composed is None else _pld.epsilon_at(composed, delta)

    def _pld_delta(self, epsilon):
        """δ of the whole ledger at ``epsilon`` by PLD (not rounded), or None if it has no PLD."""
        if not _pld.available():
            return None
        composed = self._ledger_pld(epsilon)
        return None if composed is None else _pld.delta_at(composed, epsilon)


def _bump(counter, key, count):
    value = counter.get(key, 0) + count
    if value:
        counter[key] = value
    else:
        del counter[key]
