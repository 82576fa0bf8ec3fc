// isax: none
// like: v3ddist
// style: pointer-walking do-while whose test (--n > 1) stops one point early: 15 distances
// realistic: yes
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const int32_t *q = b;
    int32_t *d = b + 48;
    uint32_t total = 0;
    int n = 16;
    do {
        int32_t dx = a[0] - q[0];
        int32_t dy = a[1] - q[1];
        int32_t dz = a[2] - q[2];
        *d = dx * dx + dy * dy + dz * dz;
        total += (uint32_t)*d++;
        a += 3;
        q += 3;
    } while (--n > 1);
    return total;
}
