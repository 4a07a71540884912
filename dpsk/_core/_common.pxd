# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""C-level helpers shared by the row kernels (inline: each kernel compiles its own copy).

Usage::

    from dpsk._core._common cimport _mat, _out_row, _prefetch, _row, _sum, _vec, _weights_from

The pointer helpers need the GIL (they take memoryviews) and are called before the
``nogil`` sections; ``_prefetch`` (a hint) and ``_sum`` (in index order) work anywhere.
"""

from cython cimport floating

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define _dpsk_prefetch(p) __builtin_prefetch(p)
    #else
    #define _dpsk_prefetch(p) ((void) 0)
    #endif
    """
    void _prefetch "_dpsk_prefetch"(const void*) nogil


# Pointers into possibly empty arrays: NULL when there is nothing to point at (the loops
# never dereference them then). Taken with the GIL, before the nogil sections.
cdef inline const floating* _row(const floating[:, ::1] X, Py_ssize_t i) noexcept:
    if X.shape[1] == 0:
        return NULL
    return &X[i, 0]


cdef inline floating* _out_row(floating[:, ::1] X, Py_ssize_t i) noexcept:
    if X.shape[1] == 0:
        return NULL
    return &X[i, 0]


cdef inline double* _vec(double[::1] v) noexcept:
    if v.shape[0] == 0:
        return NULL
    return &v[0]


cdef inline const double* _weights_from(object w, Py_ssize_t start):
    """&w[start] for optional float64 weights (NULL for None); the caller keeps w alive."""
    if w is None:
        return NULL
    cdef const double[::1] view = w
    return &view[start]


cdef inline double* _mat(double[:, ::1] v) noexcept:
    if v.shape[0] == 0 or v.shape[1] == 0:
        return NULL
    return &v[0, 0]


cdef inline double _sum(const double* v, Py_ssize_t size) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(size):
        s += v[j]
    return s
