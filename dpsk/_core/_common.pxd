# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""C-level helpers shared by the row kernels (inline: each kernel compiles its own copy).

Usage::

    from dpsk._core._common cimport (_classes_from, _mat, _out_row, _prefetch, _row, _row_class,
                                     _sum, _units_from, _vec, _weights_from)

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


cdef inline const long long* _units_from(object w, Py_ssize_t start):
    """&w[start] for optional quantised (int64) weights (NULL for None); the caller keeps w alive."""
    if w is None:
        return NULL
    cdef const long long[::1] view = w
    return &view[start]


cdef inline const Py_ssize_t* _classes_from(object y_index, Py_ssize_t start):
    """&y_index[start] for an optional intp class index (NULL for None); the caller keeps it alive."""
    if y_index is None:
        return NULL
    cdef const Py_ssize_t[::1] view = y_index
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


ctypedef fused _weight_t:
    double      # float weights (the float kernels)
    long long   # quantised weights (the exact kernels)


cdef inline bint _row_class(Py_ssize_t i, const Py_ssize_t* y_index, Py_ssize_t n_classes,
                            const _weight_t* w, Py_ssize_t* k, _weight_t* wi) noexcept nogil:
    """Row i's class into ``k`` and weight into ``wi`` (left as they are when ``y_index`` or
    ``w`` is NULL); False when ``y_index[i]`` is outside [0, n_classes)."""
    if y_index != NULL:
        k[0] = y_index[i]
        if k[0] < 0 or k[0] >= n_classes:
            return False
    if w != NULL:
        wi[0] = w[i]
    return True
