/* Kernels of the point-cloud ICP case study (examples/pointcloud/README.md).
 *
 * Points are fixed-point integer coordinates stored as (x, y, z) int32_t triples; the
 * block kernels work on ICP_BLOCK = 16 points (48 words), the nearest-neighbour search on
 * the whole cloud of ICP_POINTS.  The ISAX-shaped kernels compute exactly what one ISAX of
 * pointcloud.isax computes, written as plain C loops for `aquas match` to recognise; the
 * others are software helpers.
 */
#ifndef ICP_KERNELS_H
#define ICP_KERNELS_H

#include <stdint.h>

#define ICP_BLOCK 16
#define ICP_BLOCK_WORDS 48 /* 16 points x (x, y, z) */
#define ICP_POINTS 64      /* points per cloud */

/* ---- ISAX-shaped kernels ---------------------------------------------------------- */

/* v3ddist: squared distances of two aligned 16-point blocks.
 * a[0..47], b[0..47]: the points; writes b[48 + i] = |a_i - b_i|^2 (u32, wrapping) and
 * returns the sum of the 16 distances (u32, wrapping).  b must hold 64 words. */
uint32_t icp_block_dist(const int32_t *restrict a, int32_t *restrict b);

/* vcovmat3d: scatter matrix of a 16-point block about a centre.
 * c[0..2] = centre (c[3] unused), c must be 8-byte aligned and hold 16 words.
 * With d = p_i - c computed in int64, writes Sxx, Sxy, Sxz, Syy, Syz, Szz (sums over the
 * block of dx*dx, dx*dy, ...) as int64 low/high word pairs to c[4..15] and returns the low
 * 32 bits of the trace Sxx + Syy + Szz. */
uint32_t icp_block_scatter(const int32_t *restrict p, int32_t *restrict c);

/* vnearest: index of the point of cloud[0 .. 3 * ICP_POINTS - 1] nearest to p[0..2]
 * (squared Euclidean distance, u32 wrapping; the first one on ties). */
int icp_nearest(const int32_t *restrict p, const int32_t *restrict cloud);

/* ---- software helpers --------------------------------------------------------------- */

/* Every point of pts[0 .. 3 * ICP_POINTS - 1] becomes (R p + t) >> 14, with
 * m[0..11] a 3x4 row-major Q14 matrix [R | t] (int32 wrapping multiply-add, arithmetic
 * shift). */
void icp_transform(const int32_t *restrict m, int32_t *restrict pts);

/* Squared distance |a - b|^2 of two points (u32, wrapping). */
uint32_t icp_dist2(const int32_t *a, const int32_t *b);

/* sum[k] += sum over the 16 points of p[3i + k], k = 0..2. */
void icp_block_sum(const int32_t *restrict p, int32_t *restrict sum);

/* acc[0..2] += sum over the 16 points of (p_i - cp) x (q_i - cq) (cross product, int64). */
void icp_block_cross(const int32_t *restrict p, const int32_t *restrict q,
                     const int32_t *restrict cp, const int32_t *restrict cq,
                     int64_t *restrict acc);

#endif /* ICP_KERNELS_H */
