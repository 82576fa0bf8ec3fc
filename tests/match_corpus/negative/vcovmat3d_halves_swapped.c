// isax: none
// like: vcovmat3d
// style: each 64-bit sum stored high half first (big-endian word order) -- stores land at different offsets
#include <stdint.h>

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
{
    int64_t s[6];
    for (int k = 0; k < 6; k++)
        s[k] = 0;
    for (int i = 0; i < 16; i++) {
        int64_t dx = (int64_t)p[3 * i] - c[0];
        int64_t dy = (int64_t)p[3 * i + 1] - c[1];
        int64_t dz = (int64_t)p[3 * i + 2] - c[2];
        s[0] += dx * dx;
        s[1] += dx * dy;
        s[2] += dx * dz;
        s[3] += dy * dy;
        s[4] += dy * dz;
        s[5] += dz * dz;
    }
    for (int k = 0; k < 6; k++) {
        c[4 + 2 * k] = (int32_t)(s[k] >> 32);
        c[5 + 2 * k] = (int32_t)s[k];
    }
    return (uint32_t)(s[0] + s[3] + s[5]);
}
