// isax: v3ddist
// like: v3ddist
// style: per-point pointer locals (pa = a + 3*i, pa[1]), output through int32_t *dist = b + 48, differences b - a (squared, so equal)
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    int32_t *dist = b + 48;
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        const int32_t *pa = a + 3 * i;
        const int32_t *pb = b + 3 * i;
        int32_t dx = pb[0] - pa[0];
        int32_t dy = pb[1] - pa[1];
        int32_t dz = pb[2] - pa[2];
        dist[i] = dz * dz + dy * dy + dx * dx;
        total = total + (uint32_t)dist[i];
    }
    return total;
}
