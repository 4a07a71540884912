/* Authors: The dpsk developers
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Upper triangle of a block's Gram matrix by 4 x 12 register tiles (AVX2 + FMA): for
 * rows i0..i0+3 of the Gram and columns j0..j0+11, every row r of the block adds
 * buf[r, i] * buf[r, j0..j0+11] to twelve accumulators (one FMA per 4 products). Twelve
 * accumulators, three column vectors and a broadcast fill the 16 vector registers, so
 * full tiles load without a mask (a mask register made GCC spill an accumulator: a
 * chain through memory); twelve independent chains hide the FMA latency. The
 * entries are exact integers and so are all partial sums (the caller bounds them below
 * 2**53), so the result does not depend on the order or on contraction: it is bitwise
 * what BLAS's dgemm or dsyrk would give. A tile covers a few entries below the diagonal,
 * which are computed and not stored; for d = 20 the tiles do 240 products per row
 * against the triangle's 210 (dgemm: 400, plus packing the block).
 */
#include "block_gram.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define TILE_ROWS 4
#define TILE_VECS 3

/* One tile with nv (1..TILE_VECS) column vectors; with `masked`, the last vector loads
   only the columns below d. Rows of the tile beyond d read column d - 1 and are not
   stored. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
tile(const double *buf, int rows, ptrdiff_t d, ptrdiff_t i0, ptrdiff_t j0, const int nv,
     const int masked, __m256i last, double *out)
{
    __m256d acc[TILE_ROWS][TILE_VECS];
    __m256d v[TILE_VECS];
    ptrdiff_t ik[TILE_ROWS];
    int k, c, r;
    for (k = 0; k < TILE_ROWS; k++) {
        ik[k] = i0 + k < d ? i0 + k : d - 1;
        for (c = 0; c < TILE_VECS; c++)
            acc[k][c] = _mm256_setzero_pd();
    }
    for (r = 0; r < rows; r++) {
        const double *p = buf + (ptrdiff_t) r * d;
        for (c = 0; c < nv; c++)
            v[c] = masked && c == nv - 1 ? _mm256_maskload_pd(p + j0 + 4 * c, last)
                                         : _mm256_loadu_pd(p + j0 + 4 * c);
        for (k = 0; k < TILE_ROWS; k++) {
            __m256d a = _mm256_broadcast_sd(p + ik[k]);
            for (c = 0; c < nv; c++)
                acc[k][c] = _mm256_fmadd_pd(a, v[c], acc[k][c]);
        }
    }
    for (k = 0; k < TILE_ROWS; k++)
        for (c = 0; c < nv; c++)
            _mm256_storeu_pd(out + k * 4 * TILE_VECS + 4 * c, acc[k][c]);
}

/* colsum (+)= alpha * the block's column sums, in a local array the compiler keeps
   apart from buf (the caller's colsum may not be). */
__attribute__((target("avx2,fma"))) static void
column_sums_avx2(const double *restrict buf, int rows, ptrdiff_t d, double *colsum,
                 double alpha, int fresh)
{
    double acc[DPSK_BLOCK_GRAM_MAX_FEATURES] = {0.0};
    ptrdiff_t j;
    int r;
    for (r = 0; r < rows; r++) {
        const double *p = buf + (ptrdiff_t) r * d;
        for (j = 0; j < d; j++)
            acc[j] += p[j];
    }
    for (j = 0; j < d; j++)
        colsum[j] = (fresh ? 0.0 : colsum[j]) + alpha * acc[j];
}

__attribute__((target("avx2,fma"))) static void
gram_avx2(const double *buf, int rows, ptrdiff_t d, double *gram, double alpha, int fresh)
{
    double out[TILE_ROWS * 4 * TILE_VECS];
    ptrdiff_t i0, j0, i, j, k, jj, width;
    for (i0 = 0; i0 < d; i0 += TILE_ROWS) {
        for (j0 = i0; j0 < d; j0 += 4 * TILE_VECS) {
            int nv, m;
            __m256i last;
            width = d - j0 < 4 * TILE_VECS ? d - j0 : 4 * TILE_VECS;
            nv = (int) ((width + 3) / 4);
            m = (int) (width - 4 * (nv - 1));   /* columns in the last vector, 1..4 */
            last = _mm256_set_epi64x(m > 3 ? -1 : 0, m > 2 ? -1 : 0, m > 1 ? -1 : 0, -1);
            /* Literal nv and masked: each call inlines a tile with fixed registers. */
            if (nv == 3 && m == 4)
                tile(buf, rows, d, i0, j0, 3, 0, last, out);
            else if (nv == 3)
                tile(buf, rows, d, i0, j0, 3, 1, last, out);
            else if (nv == 2 && m == 4)
                tile(buf, rows, d, i0, j0, 2, 0, last, out);
            else if (nv == 2)
                tile(buf, rows, d, i0, j0, 2, 1, last, out);
            else if (m == 4)
                tile(buf, rows, d, i0, j0, 1, 0, last, out);
            else
                tile(buf, rows, d, i0, j0, 1, 1, last, out);
            for (k = 0; k < TILE_ROWS && i0 + k < d; k++) {
                i = i0 + k;
                for (jj = 0; jj < width; jj++) {
                    j = j0 + jj;
                    if (j < i)
                        continue;
                    gram[i * d + j] = (fresh ? 0.0 : gram[i * d + j])
                                      + alpha * out[k * 4 * TILE_VECS + jj];
                }
            }
        }
    }
}

int dpsk_block_gram(const double *buf, int rows, ptrdiff_t d, double *gram, double *colsum,
                    double alpha, int fresh)
{
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || d < 1 || d > DPSK_BLOCK_GRAM_MAX_FEATURES || rows < 0)
        return 0;
    gram_avx2(buf, rows, d, gram, alpha, fresh);
    column_sums_avx2(buf, rows, d, colsum, alpha, fresh);
    return 1;
}

#else

int dpsk_block_gram(const double *buf, int rows, ptrdiff_t d, double *gram, double *colsum,
                    double alpha, int fresh)
{
    (void) buf; (void) rows; (void) d; (void) gram; (void) colsum; (void) alpha; (void) fresh;
    return 0;
}

#endif
