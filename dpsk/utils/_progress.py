# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""A progress bar for long work: tqdm when it is installed, a few plain lines otherwise.

Only the number of finished tasks is shown, out of a total that is public (a search's
number of fits comes from its parameters), never a score or a time measured on the data.
Output goes to standard error, as tqdm's does, so the printed plan of a search on
standard output is unchanged.
"""

import sys

__all__ = ["progress"]

#: At most this many plain lines per run without tqdm (about every 10%).
_PLAIN_LINES = 10


def progress(iterable, total, description, unit="fit"):
    """Iterate over ``iterable`` (``total`` items, ``unit`` each) drawing a progress bar.

    tqdm's bar (``tqdm.auto``, which draws a widget in notebooks) when tqdm is
    installed, the optional ``progress`` extra; otherwise lines such as
    ``GridSearchCV: 6/12 fits done`` on standard error, about every 10%.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _plain(iterable, total, description, unit)
    return tqdm(iterable, total=total, desc=description, unit=unit, file=sys.stderr)


def _plain(iterable, total, description, unit):
    step = max(total // _PLAIN_LINES, 1)
    done = 0
    for item in iterable:
        yield item
        done += 1
        if done % step == 0 or done == total:
            print(f"{description}: {done}/{total} {unit}s done", file=sys.stderr, flush=True)
