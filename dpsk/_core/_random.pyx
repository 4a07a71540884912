# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""``bitgen_t`` access shared by every kernel."""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from numpy.random cimport bitgen_t

import numpy as np

cdef const char* _CAPSULE_NAME = "BitGenerator"


cdef bitgen_t* get_bitgen(object rng) except NULL:
    """Return the ``bitgen_t*`` behind a :class:`numpy.random.Generator`.

    The caller must keep ``rng`` alive and hold ``rng.bit_generator.lock`` while drawing.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator, got {type(rng).__name__}; "
            "use dpsk.utils.check_random_state to build one"
        )
    capsule = rng.bit_generator.capsule
    if not PyCapsule_IsValid(capsule, _CAPSULE_NAME):
        raise ValueError("rng.bit_generator does not expose a valid BitGenerator capsule")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, _CAPSULE_NAME)


def _next_uint64_py(rng, Py_ssize_t n):
    """Test wrapper: ``n`` raw 64-bit outputs of ``rng``'s bit generator, drawn through ``bitgen_t``."""
    cdef bitgen_t* state = get_bitgen(rng)
    out = np.empty(n, dtype=np.uint64)
    cdef unsigned long long[::1] view = out
    cdef Py_ssize_t i
    with rng.bit_generator.lock, nogil:
        for i in range(n):
            view[i] = state.next_uint64(state.state)
    return out
