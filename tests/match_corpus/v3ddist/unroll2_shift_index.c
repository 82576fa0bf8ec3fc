// isax: v3ddist
// like: v3ddist
// style: manually unrolled by 2 with two running totals summed at the end; 3*i written as (i<<1)+i, element access via *(a + k)
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t t0 = 0;
    uint32_t t1 = 0;
    for (int i = 0; i < 16; i += 2) {
        int k = (i << 1) + i;
        int32_t x0 = *(a + k) - *(b + k);
        int32_t y0 = *(a + k + 1) - *(b + k + 1);
        int32_t z0 = *(a + k + 2) - *(b + k + 2);
        int32_t x1 = *(a + k + 3) - *(b + k + 3);
        int32_t y1 = *(a + k + 4) - *(b + k + 4);
        int32_t z1 = *(a + k + 5) - *(b + k + 5);
        int32_t d0 = x0 * x0 + y0 * y0 + z0 * z0;
        int32_t d1 = x1 * x1 + y1 * y1 + z1 * z1;
        *(b + 48 + i) = d0;
        *(b + 49 + i) = d1;
        t0 += d0;
        t1 += d1;
    }
    return t0 + t1;
}
