// isax: v3ddist
// like: v3ddist
// style: textbook loop, a[3*i+k] indexing, one statement per axis, total += d
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t dx = a[3 * i] - b[3 * i];
        int32_t dy = a[3 * i + 1] - b[3 * i + 1];
        int32_t dz = a[3 * i + 2] - b[3 * i + 2];
        int32_t d = dx * dx + dy * dy + dz * dz;
        b[48 + i] = d;
        total += (uint32_t)d;
    }
    return total;
}
