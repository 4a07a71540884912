/* Authors: The dpsk developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The Gram matrix of a block of quantised rows (exact integers stored as doubles) for
 * dpsk._core._exact_sums, which documents why every sum here is exact. Compiled as a
 * source of that extension (setup.py).
 */
#ifndef DPSK_BLOCK_GRAM_H
#define DPSK_BLOCK_GRAM_H

#include <stddef.h>

/* Most features the tiled kernel takes (wider blocks go to BLAS). */
#define DPSK_BLOCK_GRAM_MAX_FEATURES 64

/* gram[i*d + j] (j >= i: the upper triangle, row-major) = (fresh ? 0 : gram[i*d + j])
   + alpha * sum_r buf[r*d + i] * buf[r*d + j], and colsum[j] = (fresh ? 0 : colsum[j])
   + alpha * sum_r buf[r*d + j], over the rows x d block buf (row-major); other entries
   of gram are left alone. Returns 0, and does nothing, when this CPU lacks
   AVX2 and FMA or d exceeds DPSK_BLOCK_GRAM_MAX_FEATURES (the caller then uses BLAS),
   else 1. Exact for integer entries whose products and partial sums stay below 2**53
   in magnitude (the caller's bound), in any order of summation. */
int dpsk_block_gram(const double *buf, int rows, ptrdiff_t d, double *gram, double *colsum,
                    double alpha, int fresh);

#endif
