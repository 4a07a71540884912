# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk's global configuration, in scikit-learn's pattern (per thread).

``set_config`` / ``get_config`` / ``config_context`` behave as scikit-learn's functions
of the same names: the settings are thread-local, start from the defaults in every new
thread, and ``config_context`` restores the previous settings on exit.
"""

import contextlib
import threading

__all__ = ["config_context", "get_config", "set_config"]

_DEFAULTS = {"require_accountant": False, "bounds_epsilon_share": 0.1}
_local = threading.local()


def _settings():
    if not hasattr(_local, "config"):
        _local.config = dict(_DEFAULTS)
    return _local.config


def get_config():
    """The current values of dpsk's settings (a copy).

    Returns
    -------
    config : dict
        ``{"require_accountant": bool, "bounds_epsilon_share": float}``.

    See Also
    --------
    set_config : Change the settings.
    config_context : Change them inside a ``with`` block.

    Notes
    -----
    **Privacy.** Reading the settings releases nothing.
    """
    return dict(_settings())


def set_config(require_accountant=None, bounds_epsilon_share=None):
    """Change dpsk's settings for this thread (``None`` leaves a setting unchanged).

    Parameters
    ----------
    require_accountant : bool, default=None
        Strict mode. When True, every release (an estimator's ``fit``, a function of
        :mod:`dpsk.stats`, a private search) must know the accountant it spends on, its
        ``accountant=`` or that of an enclosing ``with accountant:`` block (or one bound
        when it was cloned inside such a block); otherwise it raises
        :class:`~dpsk.exceptions.AccountantRequiredError` before reading any data. By
        default (False) such a release is allowed and its cost is kept only in the
        estimator's ``privacy_spent_``.
    bounds_epsilon_share : float in (0, 1), default=None
        The share of an estimator's ε spent on the sensitivity parameters set to
        ``"private"`` (``bounds="private"``, ``data_norm="private"``, ...), estimated
        inside its fit; the rest goes to the fit's own releases (:ref:`bounds`). 0.1
        unless changed. The total stays the estimator's ε whatever the share.

    See Also
    --------
    get_config : The current settings.
    config_context : Change the settings inside a ``with`` block.

    Notes
    -----
    **Privacy.** Strict mode makes sure that no release goes unrecorded by mistake;
    it changes no release. ``bounds_epsilon_share`` moves budget between the private
    bounds and the fit, never the fit's total ε. The settings are per thread, as
    scikit-learn's are: worker threads started by joblib begin with the defaults.

    Examples
    --------
    >>> import dpsk
    >>> dpsk.set_config(require_accountant=True)
    >>> dpsk.get_config()["require_accountant"]
    True
    >>> dpsk.set_config(require_accountant=False)
    """
    if require_accountant is not None:
        if not isinstance(require_accountant, bool):
            raise TypeError(f"require_accountant must be a bool, got {type(require_accountant).__name__}")
        _settings()["require_accountant"] = require_accountant
    if bounds_epsilon_share is not None:
        if isinstance(bounds_epsilon_share, bool) or not isinstance(bounds_epsilon_share, (int, float)):
            raise TypeError(f"bounds_epsilon_share must be a float, got {type(bounds_epsilon_share).__name__}")
        if not 0.0 < float(bounds_epsilon_share) < 1.0:
            raise ValueError(f"bounds_epsilon_share must lie in (0, 1), got {bounds_epsilon_share}")
        _settings()["bounds_epsilon_share"] = float(bounds_epsilon_share)


@contextlib.contextmanager
def config_context(*, require_accountant=None, bounds_epsilon_share=None):
    """Change dpsk's settings inside a ``with`` block (restored on exit).

    Parameters
    ----------
    require_accountant : bool, default=None
        See :func:`set_config`.
    bounds_epsilon_share : float, default=None
        See :func:`set_config`.

    Yields
    ------
    None

    See Also
    --------
    set_config : Change the settings until changed again.
    get_config : The current settings.

    Notes
    -----
    **Privacy.** As :func:`set_config`.

    Examples
    --------
    >>> import dpsk
    >>> from dpsk.exceptions import AccountantRequiredError
    >>> from dpsk.naive_bayes import GaussianNB
    >>> with dpsk.config_context(require_accountant=True):
    ...     try:
    ...         GaussianNB(bounds=(0, 1), classes=[0, 1]).fit([[0.5]], [1])
    ...     except AccountantRequiredError:
    ...         print("refused before reading the data")
    refused before reading the data
    """
    old = get_config()
    set_config(require_accountant=require_accountant, bounds_epsilon_share=bounds_epsilon_share)
    try:
        yield
    finally:
        set_config(**old)
