# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy audits of naive Bayes, PCA and k-means reject deliberately broken variants.

Each broken variant (``dpsk/utils/_testing/family.py``) declares the correct cost but adds
too little noise for it (ε × 2, no clipping, a sensitivity that forgets part of a row); the
audit configured for the correct estimator in ``test_estimator_privacy.py`` must reject it
(α = 1e-6, fixed seeds, so deterministic), while it accepts the correct estimator there.
"""

import pytest

from dpsk.utils._testing.registry import BROKEN_VARIANTS
from dpsk.utils._testing.registry import FAMILY_AUDITS as AUDITS


def run_audit(name, cls, seed=0, n_samples=None):
    return AUDITS[name].run(cls, n_samples=n_samples, random_state=seed)


#: Broken variants whose excess is at the edge of the audit's power with the family's runs.
#: KMeansEpsilonX2 (ε = 4 spent, 2 claimed): lower bounds 1.98-2.30 with 3000 runs on audit
#: seeds 0-2 (2.11-2.25 before integer seeds were derived per release), 2.27-2.54 with 6000.
MORE_RUNS = {"KMeansEpsilonX2": 6_000}


# Not ``extended``: CI runs these (2 min 44 s on 2 cores after the per-fit costs were cut),
# so that every family audit shows at each submission that it can still fail.
@pytest.mark.slow
@pytest.mark.parametrize("name, cls", BROKEN_VARIANTS, ids=[cls.__name__ for _, cls in BROKEN_VARIANTS])
def test_audit_rejects_broken_variant(name, cls):
    result = run_audit(name, cls, n_samples=MORE_RUNS.get(cls.__name__))
    assert not result.passed, str(result)


@pytest.mark.parametrize("name, cls", BROKEN_VARIANTS, ids=[cls.__name__ for _, cls in BROKEN_VARIANTS])
def test_broken_variant_declares_the_correct_cost(name, cls):
    """Check that a broken variant declares what the correct estimator declares: only its noise differs."""
    config = AUDITS[name]
    without, _ = config.neighbours()
    broken = cls(random_state=0, **config.params).fit(**without)
    correct = config.cls(random_state=0, **config.params).fit(**without)
    assert broken.privacy_spent_ == correct.privacy_spent_
