# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""k-means' labels: the nearest centre of every clipped row, in one pass.

Each pass of ``dpsk.cluster.KMeans`` labels every row with its nearest centre, then sums
the rows per label exactly. In numpy the labels cost a clipped copy of X, an n × k
product and two n × k temporaries, then an argmin: more than the exact sums themselves.
Here blocks of 64 rows are clipped into a small transposed buffer and their scores
against each centre accumulated together (independent sums, so the loops vectorise
without reordering any sum); only the labels are stored. Import it from ``dpsk._core._kmeans``.

``nearest_centres(X, lower, upper, centres, *, n_threads=None) -> labels``
    ``X``: C-contiguous float32/float64 (n, d), finite (not checked: validated by the
    estimator); ``lower``, ``upper``: float64 (d,); ``centres``: finite float64 (k, d), k >= 1.
    ``labels[i]`` (intp) is the first j minimising ``‖c_j‖² − 2 c(x_i)·c_j`` (the squared
    distance less ‖c(x_i)‖², the same for every j), with c(x) = min(max(x, lower), upper)
    in float64 and the dot product summed in feature order. Labels are a function of each
    row alone (whatever ``n_threads``), which is all that the privacy of the sums that
    follow needs; they may differ from a BLAS product's in the last bits of a near tie.
"""

from cython cimport floating
from libc.stdlib cimport free, malloc

import numpy as np

from dpsk._core._common import _check_array, _check_bounds, _map_chunks

__all__ = ["nearest_centres"]


cdef extern from *:
    """
    /* Labels of a block of B clipped rows, stored transposed (rows_t[t*B + b]): for each
       centre j the B scores advance together over the features (contiguous, independent
       sums: the loops vectorise, AVX2 where the CPU has it, and no sum is reordered); a
       product and the addition after it round separately (no contraction), so the labels
       do not depend on the CPU. */
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC push_options
    #pragma GCC optimize ("no-trapping-math", "fp-contract=off")
    #endif
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void _dpsk_label_block(const double* __restrict rows_t, Py_ssize_t B, Py_ssize_t d,
                                  Py_ssize_t k, const double* __restrict centres,
                                  const double* __restrict csq, double* __restrict acc,
                                  double* __restrict best_score, Py_ssize_t* __restrict best) {
        Py_ssize_t j, t, b;
        for (j = 0; j < k; j++) {
            const double q = csq[j];
            for (b = 0; b < B; b++)
                acc[b] = 0.0;
            for (t = 0; t + 4 <= d; t += 4) {  /* four features per sweep, in order */
                const double* c = centres + j * d + t;
                const double* __restrict r = rows_t + t * B;
                for (b = 0; b < B; b++) {
                    double a = acc[b];
                    a += r[b] * c[0];
                    a += r[B + b] * c[1];
                    a += r[2 * B + b] * c[2];
                    a += r[3 * B + b] * c[3];
                    acc[b] = a;
                }
            }
            for (; t < d; t++) {
                const double c = centres[j * d + t];
                const double* __restrict r = rows_t + t * B;
                for (b = 0; b < B; b++)
                    acc[b] += r[b] * c;
            }
            if (j == 0) {
                for (b = 0; b < B; b++) {
                    best_score[b] = q - 2.0 * acc[b];
                    best[b] = 0;
                }
            } else {
                for (b = 0; b < B; b++) {
                    const double score = q - 2.0 * acc[b];
                    const int better = score < best_score[b];
                    best_score[b] = better ? score : best_score[b];
                    best[b] = better ? j : best[b];
                }
            }
        }
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    void _label_block "_dpsk_label_block"(const double* rows_t, Py_ssize_t B, Py_ssize_t d,
                                          Py_ssize_t k, const double* centres, const double* csq,
                                          double* acc, double* best_score,
                                          Py_ssize_t* best) noexcept nogil


cdef enum:
    _BLOCK = 64    # rows labelled together (their clipped values, transposed, stay in L1)


cdef void _label_rows(const floating* X, Py_ssize_t rows, Py_ssize_t d, Py_ssize_t k,
                      const double* lo, const double* hi, const double* centres, const double* csq,
                      double* work, Py_ssize_t* labels) noexcept nogil:
    cdef Py_ssize_t start, b, t, size
    cdef double v
    cdef const floating* x
    cdef double* rows_t = work
    cdef double* acc = work + _BLOCK * d
    cdef double* best_score = acc + _BLOCK
    start = 0
    while start < rows:
        size = min(<Py_ssize_t> _BLOCK, rows - start)
        for b in range(size):
            x = X + (start + b) * d
            for t in range(d):
                v = <double> x[t]
                v = lo[t] if v < lo[t] else v
                rows_t[t * size + b] = hi[t] if v > hi[t] else v
        _label_block(rows_t, size, d, k, centres, csq, acc, best_score, labels + start)
        start += size


def _labels_chunk(const floating[:, ::1] X, Py_ssize_t start, Py_ssize_t stop, const double[::1] lo,
                  const double[::1] hi, const double[:, ::1] centres, const double[::1] csq,
                  Py_ssize_t[::1] labels):
    cdef Py_ssize_t d = X.shape[1], k = csq.shape[0]
    cdef double* work = <double*> malloc((_BLOCK * (d + 2)) * sizeof(double))
    if work == NULL:
        raise MemoryError()
    try:
        with nogil:
            _label_rows(&X[0, 0] + start * d if d else NULL, stop - start, d, k,
                        &lo[0] if d else NULL, &hi[0] if d else NULL, &centres[0, 0] if d else NULL,
                        &csq[0], work, &labels[start])
    finally:
        free(work)


def nearest_centres(X, lower, upper, centres, *, n_threads=None):
    X = _check_array(X, "X", 2)
    n, d = X.shape
    lower, upper = _check_bounds(lower, upper, d)
    centres = np.ascontiguousarray(centres, dtype=np.float64)
    if centres.ndim != 2 or centres.shape[1] != d or centres.shape[0] < 1:
        raise ValueError(f"centres must have shape (k >= 1, {d}), got {centres.shape}")
    if not np.all(np.isfinite(centres)):
        raise ValueError("centres must be finite")
    csq = np.einsum("ij,ij->i", centres, centres)
    labels = np.empty(n, dtype=np.intp)
    _map_chunks(lambda start, stop: _labels_chunk(X, start, stop, lower, upper, centres, csq, labels), n, n_threads)
    return labels
