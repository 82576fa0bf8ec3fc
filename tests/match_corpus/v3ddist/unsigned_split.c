// isax: v3ddist
// like: v3ddist
// style: all arithmetic in uint32_t (equal modulo 2^32), distance built by split statements d = dx*dx; d += dy*dy; ...
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t total = 0;
    for (unsigned i = 0; i < 16u; i++) {
        uint32_t dx = (uint32_t)a[3 * i] - (uint32_t)b[3 * i];
        uint32_t dy = (uint32_t)a[3 * i + 1] - (uint32_t)b[3 * i + 1];
        uint32_t dz = (uint32_t)a[3 * i + 2] - (uint32_t)b[3 * i + 2];
        uint32_t d = dx * dx;
        d += dy * dy;
        d += dz * dz;
        b[48 + i] = (int32_t)d;
        total = d + total;
    }
    return total;
}
