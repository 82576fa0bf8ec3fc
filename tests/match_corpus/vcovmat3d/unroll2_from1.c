// isax: vcovmat3d
// like: vcovmat3d
// style: unrolled by 2 (two points per iteration into the same sums), loop counter from 1 with i-1, points through pointer local q = p + 6*(i-1)
#include <stdint.h>

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
{
    int64_t cx = c[0], cy = c[1], cz = c[2];
    int64_t sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0;
    for (int i = 1; i <= 8; i++) {
        const int32_t *q = p + 6 * (i - 1);
        int64_t ax = q[0] - cx;
        int64_t ay = q[1] - cy;
        int64_t az = q[2] - cz;
        int64_t bx = q[3] - cx;
        int64_t by = q[4] - cy;
        int64_t bz = q[5] - cz;
        sxx += ax * ax + bx * bx;
        sxy += ax * ay + bx * by;
        sxz += ax * az + bx * bz;
        syy += ay * ay + by * by;
        syz += ay * az + by * bz;
        szz += az * az + bz * bz;
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
