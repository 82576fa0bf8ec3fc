// isax: vcovmat3d
// like: vcovmat3d
// style: point pointer advanced with pp += 3, output halves through a pointer local out = c + 4 and *(out + k)
#include <stdint.h>

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
{
    const int32_t *pp = p;
    int64_t cx = c[0], cy = c[1], cz = c[2];
    int64_t sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0;
    for (int n = 0; n < 16; n++) {
        int64_t dx = pp[0] - cx;
        int64_t dy = pp[1] - cy;
        int64_t dz = pp[2] - cz;
        sxx += dx * dx;
        sxy += dx * dy;
        sxz += dx * dz;
        syy += dy * dy;
        syz += dy * dz;
        szz += dz * dz;
        pp += 3;
    }
    int32_t *out = c + 4;
    *(out + 0) = (int32_t)sxx;
    *(out + 1) = (int32_t)(sxx >> 32);
    *(out + 2) = (int32_t)sxy;
    *(out + 3) = (int32_t)(sxy >> 32);
    *(out + 4) = (int32_t)sxz;
    *(out + 5) = (int32_t)(sxz >> 32);
    *(out + 6) = (int32_t)syy;
    *(out + 7) = (int32_t)(syy >> 32);
    *(out + 8) = (int32_t)syz;
    *(out + 9) = (int32_t)(syz >> 32);
    *(out + 10) = (int32_t)szz;
    *(out + 11) = (int32_t)(szz >> 32);
    return (uint32_t)sxx + (uint32_t)syy + (uint32_t)szz;
}
