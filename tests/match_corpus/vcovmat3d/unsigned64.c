// isax: vcovmat3d
// like: vcovmat3d
// style: uint64_t accumulators and differences (equal modulo 2^64), high halves via unsigned shift, 3*i written as (i<<1)+i
#include <stdint.h>

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
{
    uint64_t sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0;
    for (uint32_t i = 0; i < 16; i++) {
        uint32_t k = (i << 1) + i;
        uint64_t dx = (uint64_t)(int64_t)p[k] - (uint64_t)(int64_t)c[0];
        uint64_t dy = (uint64_t)(int64_t)p[k + 1] - (uint64_t)(int64_t)c[1];
        uint64_t dz = (uint64_t)(int64_t)p[k + 2] - (uint64_t)(int64_t)c[2];
        sxx += dx * dx;
        sxy += dx * dy;
        sxz += dx * dz;
        syy += dy * dy;
        syz += dy * dz;
        szz += dz * dz;
    }
    c[4] = (uint32_t)sxx;
    c[5] = (uint32_t)(sxx >> 32);
    c[6] = (uint32_t)sxy;
    c[7] = (uint32_t)(sxy >> 32);
    c[8] = (uint32_t)sxz;
    c[9] = (uint32_t)(sxz >> 32);
    c[10] = (uint32_t)syy;
    c[11] = (uint32_t)(syy >> 32);
    c[12] = (uint32_t)syz;
    c[13] = (uint32_t)(syz >> 32);
    c[14] = (uint32_t)szz;
    c[15] = (uint32_t)(szz >> 32);
    return (uint32_t)(sxx + syy + szz);
}
