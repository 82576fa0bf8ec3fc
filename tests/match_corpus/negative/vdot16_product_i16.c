// isax: none
// like: vdot16
// n: 16
// style: products narrowed through int16_t before accumulation (wraps at 16 bits, not 32)
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < 16; i++) {
        int16_t p = (int16_t)(a[i] * b[i]);
        acc += p;
    }
    return acc;
}
