// isax: v3ddist
// like: v3ddist
// style: while loop walking both point arrays with pointer increments (pa += 3), output pointer incremented with ++
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const int32_t *pa = a;
    const int32_t *pb = b;
    int32_t *out = b + 48;
    uint32_t total = 0;
    int n = 16;
    while (n > 0) {
        int32_t dx = pa[0] - pb[0];
        int32_t dy = pa[1] - pb[1];
        int32_t dz = pa[2] - pb[2];
        int32_t d = dx * dx + dy * dy + dz * dz;
        *out = d;
        total += d;
        out++;
        pa += 3;
        pb += 3;
        n--;
    }
    return total;
}
