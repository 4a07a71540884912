# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exceptions and warnings raised by dpsk.

Each class also inherits from the builtin that callers already catch, so code written
for scikit-learn or for other DP libraries keeps working (``except ValueError`` still
catches a budget overrun). Messages never contain data values, only hyper-parameters
and shapes.
"""

__all__ = [
    "AccountantRequiredError",
    "BudgetExceededError",
    "DetachedAccountantError",
    "PrivacyLeakWarning",
]


class BudgetExceededError(ValueError):
    """A release would exceed the privacy budget of a :class:`~dpsk.BudgetAccountant`.

    Raised *before* any data is read: nothing was released and nothing was spent.
    """


class AccountantRequiredError(RuntimeError):
    """A release found no accountant while strict mode is on.

    Raised before any data is read when ``dpsk.set_config(require_accountant=True)`` (or
    ``dpsk.config_context``) is in effect and a fit or statistic would spend on no
    accountant: pass ``accountant=`` or use ``with accountant:``.
    """


class DetachedAccountantError(RuntimeError):
    """An accountant copy cannot record spends where it is being used.

    Raised, for example, when an in-memory accountant was copied into another process
    (``n_jobs > 1``): a spend recorded there would be lost. Use a persistent accountant
    (``BudgetAccountant(path=...)``) or ``n_jobs=1``.
    """


class PrivacyLeakWarning(UserWarning):
    """Something about the data is being used without privacy protection.

    Typical cause: a sensitivity assumption (``bounds``, ``data_norm``, ``classes``) was
    left out and was derived from the data itself. The derived value is stored in a
    fitted attribute (``bounds_``, ``data_norm_``, ``classes_``) and the release is *not*
    differentially private with respect to it.
    """
