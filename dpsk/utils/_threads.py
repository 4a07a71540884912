# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""One BLAS thread inside dpsk's own loops (threadpoolctl).

dpsk's fits call BLAS on tall, thin operands (n × d with d ~ 10–100: class tables,
Gram matrices, Newton systems, d × d eigen-decompositions) and, for large n, from
inside the kernels' own OpenMP threads. A multi-threaded BLAS gains little there and,
on a loaded machine, loses a lot: its threads spin-wait for cores that other processes
hold. Measured on Adult (32,561 × 107) on a shared 2-core machine at load 8: the class
table of MultinomialNB (2 × n times n × 107) took 1.58 s with OpenBLAS's 2 threads and
0.003 s with one; a Newton step of LogisticRegression 2 s against 0.06 s. Inside
:func:`single_blas_thread` BLAS runs on one thread; the previous limits are restored on
exit.
"""

import contextlib
import threading

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread"]

_CONTROLLER = None
# Depth of single_blas_thread per thread: a nested call changes nothing (the limit is
# already set) and skips threadpoolctl's bookkeeping, a few milliseconds per call.
_DEPTH = threading.local()


def _controller():
    # Built once (it scans the loaded libraries: about a millisecond); BLAS libraries are
    # loaded by numpy and scipy, both imported before any fit.
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def _blas_single():
    """Whether every BLAS library already runs one thread (one cheap C call each): then
    there is nothing to limit, and threadpoolctl's limit, which costs milliseconds
    (several per fit in the block loops), is skipped."""
    return all(lib.num_threads == 1 for lib in _controller().lib_controllers if lib.user_api == "blas")


@contextlib.contextmanager
def single_blas_thread():
    """Context manager (and decorator): BLAS limited to one thread inside it (nested: free)."""
    depth = getattr(_DEPTH, "value", 0)
    if depth or _blas_single():
        _DEPTH.value = depth + 1
        try:
            yield
        finally:
            _DEPTH.value = depth
        return
    with _controller().limit(limits=1, user_api="blas"):
        _DEPTH.value = 1
        try:
            yield
        finally:
            _DEPTH.value = 0
