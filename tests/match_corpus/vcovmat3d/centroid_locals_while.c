// isax: vcovmat3d
// like: vcovmat3d
// style: centroid hoisted into int64 locals before a while loop, products with swapped operands (dy*dx), acc = prod + acc
#include <stdint.h>

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
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
    int i = 0;
    while (i < 16) {
        int64_t x = p[3 * i];
        int64_t y = p[3 * i + 1];
        int64_t z = p[3 * i + 2];
        int64_t dx = x - cx;
        int64_t dy = y - cy;
        int64_t dz = z - cz;
        sxx = dx * dx + sxx;
        sxy = dy * dx + sxy;
        sxz = dz * dx + sxz;
        syy = dy * dy + syy;
        syz = dz * dy + syz;
        szz = dz * dz + szz;
        i++;
    }
    int64_t tr = sxx + syy + szz;
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
    return (uint32_t)tr;
}
