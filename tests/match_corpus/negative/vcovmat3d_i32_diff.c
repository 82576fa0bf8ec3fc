// isax: none
// like: vcovmat3d
// style: differences computed in int32 (x - cx wraps for far-apart values) before widening, instead of exactly in int64
#include <stdint.h>

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
{
    int64_t sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0;
    for (int i = 0; i < 16; i++) {
        int32_t ex = p[3 * i] - c[0];
        int32_t ey = p[3 * i + 1] - c[1];
        int32_t ez = p[3 * i + 2] - c[2];
        int64_t dx = ex;
        int64_t dy = ey;
        int64_t dz = ez;
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
