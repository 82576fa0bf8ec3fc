/* Kernels of the point-cloud ICP case study (examples/pointcloud/README.md).
 *
 * Points are fixed-point integer coordinates stored as (x, y, z) int32_t triples; the
 * kernels work on blocks of ICP_BLOCK = 16 points (48 words).  The first four kernels
 * compute exactly what one ISAX of pointcloud.isax computes, written as plain C loops for
 * `aquas match` to recognise; the others are software helpers.
 */
#ifndef ICP_KERNELS_H
#define ICP_KERNELS_H

#include <stdint.h>

#define ICP_BLOCK 16
#define ICP_BLOCK_WORDS 48 /* 16 points x (x, y, z) */

/* ---- ISAX-shaped kernels ---------------------------------------------------------- */

/* v3ddist: squared distances of two aligned 16-point blocks.
 * a[0..47], b[0..47]: the points; writes b[48 + i] = |a_i - b_i|^2 (u32, wrapping) and
 * returns the sum of the 16 distances (u32, wrapping).  b must hold 64 words. */
uint32_t icp_block_dist(const int32_t *restrict a, int32_t *restrict b);

/* vmaxarg: *out = signed maximum of v[0..15]; returns the index of its first occurrence. */
uint32_t icp_block_argmax(const int32_t *restrict v, int32_t *restrict out);

/* vcovmat3d: scatter matrix of a 16-point block about a centre.
 * c[0..2] = centre (c[3] unused), c must be 8-byte aligned and hold 16 words.
 * With d = p_i - c computed in int64, writes Sxx, Sxy, Sxz, Syy, Syz, Szz (sums over the
 * block of dx*dx, dx*dy, ...) as int64 low/high word pairs to c[4..15] and returns the low
 * 32 bits of the trace Sxx + Syy + Szz. */
uint32_t icp_block_scatter(const int32_t *restrict p, int32_t *restrict c);

/* vgemv4: y[r] = sum_c m[4r + c] * m[16 + c] (int32, wrapping) for r = 0..3:
 * a row-major 4x4 matrix m[0..15] times the homogeneous vector m[16..19]. */
void icp_mat4_vec(const int32_t *restrict m, int32_t *restrict y);

/* ---- software helpers --------------------------------------------------------------- */

/* q[0..47] = 16 copies of the point (x, y, z). */
void icp_broadcast(int32_t *restrict q, int32_t x, int32_t y, int32_t z);

/* s[i] = -d[i] for i = 0..15 (the nearest neighbour is the arg-max of the negated
 * distances; distances are below 2^31 here). */
void icp_negate16(const int32_t *restrict d, int32_t *restrict s);

/* sum[k] += sum over the 16 points of p[3i + k], k = 0..2. */
void icp_block_sum(const int32_t *restrict p, int32_t *restrict sum);

/* acc[0..2] += sum over the 16 points of (p_i - cp) x (q_i - cq) (cross product, int64). */
void icp_block_cross(const int32_t *restrict p, const int32_t *restrict q,
                     const int32_t *restrict cp, const int32_t *restrict cq,
                     int64_t *restrict acc);

#endif /* ICP_KERNELS_H */
