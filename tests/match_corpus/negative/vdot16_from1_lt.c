// isax: none
// like: vdot16
// n: 16
// style: off-by-one: counts from 1 with i-1 but uses < 16 instead of <= 16, so only 15 products are summed
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 1; i < 16; i++)
        acc += a[i - 1] * b[i - 1];
    return acc;
}
