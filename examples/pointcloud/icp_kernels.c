/* Kernels of the point-cloud ICP case study: plain C, in the subset of the matcher's C
 * frontend (docs/c-subset.md).  icp_nearest, icp_block_dist and icp_block_scatter compute
 * exactly what vnearest, v3ddist and vcovmat3d (pointcloud.isax) compute; the rest stay in
 * software.
 * Blocks are 16 points = 48 int32_t words (x, y, z interleaved). */
#include <stdint.h>

#include "icp_kernels.h"

static inline uint32_t dist2(const int32_t *a, const int32_t *b)
{
    int32_t dx = a[0] - b[0];
    int32_t dy = a[1] - b[1];
    int32_t dz = a[2] - b[2];
    return (uint32_t)(dx * dx + dy * dy + dz * dz);
}

/* vnearest: a linear scan; the strict '<' keeps the first nearest point. */
int icp_nearest(const int32_t *restrict p, const int32_t *restrict cloud)
{
    uint32_t best = UINT32_MAX;
    int best_j = 0;
    for (int j = 0; j < ICP_POINTS; j++) {
        uint32_t d = dist2(p, &cloud[3 * j]);
        if (d < best) {
            best = d;
            best_j = j;
        }
    }
    return best_j;
}

/* v3ddist: b[48 + i] = |a_i - b_i|^2, returns the sum of the 16 distances. */
uint32_t icp_block_dist(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t dx = a[3 * i] - b[3 * i];
        int32_t dy = a[3 * i + 1] - b[3 * i + 1];
        int32_t dz = a[3 * i + 2] - b[3 * i + 2];
        uint32_t d = (uint32_t)(dx * dx + dy * dy + dz * dz);
        b[48 + i] = (int32_t)d;
        total += d;
    }
    return total;
}

/* vcovmat3d: scatter matrix of p about the centre c[0..2], six int64 sums written as
 * low/high words to c[4..15]; returns the low word of the trace. */
uint32_t icp_block_scatter(const int32_t *restrict p, int32_t *restrict c)
{
    int64_t cx = c[0];
    int64_t cy = c[1];
    int64_t cz = c[2];
    int64_t sxx = 0;
    int64_t sxy = 0;
    int64_t sxz = 0;
    int64_t syy = 0;
    int64_t syz = 0;
    int64_t szz = 0;
    for (int i = 0; i < 16; i++) {
        const int32_t *pt = p + 3 * i;
        int64_t dx = pt[0] - cx;
        int64_t dy = pt[1] - cy;
        int64_t dz = pt[2] - cz;
        sxx += dx * dx;
        sxy += dx * dy;
        sxz += dx * dz;
        syy += dy * dy;
        syz += dy * dz;
        szz += dz * dz;
    }
    c[4] = (int32_t)sxx;
    c[5] = (int32_t)(sxx >> 32);
    c[6] = (int32_t)sxy;
    c[7] = (int32_t)(sxy >> 32);
    c[8] = (int32_t)sxz;
    c[9] = (int32_t)(sxz >> 32);
    c[10] = (int32_t)syy;
    c[11] = (int32_t)(syy >> 32);
    c[12] = (int32_t)syz;
    c[13] = (int32_t)(syz >> 32);
    c[14] = (int32_t)szz;
    c[15] = (int32_t)(szz >> 32);
    return (uint32_t)(sxx + syy + szz);
}

void icp_transform(const int32_t *restrict m, int32_t *restrict pts)
{
    for (int i = 0; i < ICP_POINTS; i++) {
        int32_t *p = &pts[3 * i];
        int32_t x = p[0], y = p[1], z = p[2];
        p[0] = (m[0] * x + m[1] * y + m[2] * z + m[3]) >> 14;
        p[1] = (m[4] * x + m[5] * y + m[6] * z + m[7]) >> 14;
        p[2] = (m[8] * x + m[9] * y + m[10] * z + m[11]) >> 14;
    }
}

/* ---- software helpers --------------------------------------------------------------- */

uint32_t icp_dist2(const int32_t *a, const int32_t *b)
{
    return dist2(a, b);
}

void icp_block_sum(const int32_t *restrict p, int32_t *restrict sum)
{
    int32_t sx = 0;
    int32_t sy = 0;
    int32_t sz = 0;
    for (int i = 0; i < 16; i++) {
        sx += p[3 * i];
        sy += p[3 * i + 1];
        sz += p[3 * i + 2];
    }
    sum[0] += sx;
    sum[1] += sy;
    sum[2] += sz;
}

void icp_block_cross(const int32_t *restrict p, const int32_t *restrict q,
                     const int32_t *restrict cp, const int32_t *restrict cq,
                     int64_t *restrict acc)
{
    int64_t ax = 0;
    int64_t ay = 0;
    int64_t az = 0;
    for (int i = 0; i < 16; i++) {
        int64_t px = (int64_t)(p[3 * i] - cp[0]);
        int64_t py = (int64_t)(p[3 * i + 1] - cp[1]);
        int64_t pz = (int64_t)(p[3 * i + 2] - cp[2]);
        int64_t qx = (int64_t)(q[3 * i] - cq[0]);
        int64_t qy = (int64_t)(q[3 * i + 1] - cq[1]);
        int64_t qz = (int64_t)(q[3 * i + 2] - cq[2]);
        ax += py * qz - pz * qy;
        ay += pz * qx - px * qz;
        az += px * qy - py * qx;
    }
    acc[0] += ax;
    acc[1] += ay;
    acc[2] += az;
}
