// isax: vdot16
// like: vdot16
// n: 16
// style: manually unrolled by 4 into a single accumulator, explicit (int32_t) casts on the operands
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < 16; i += 4) {
        acc += (int32_t)a[i] * (int32_t)b[i];
        acc += (int32_t)a[i + 1] * (int32_t)b[i + 1];
        acc += (int32_t)a[i + 2] * (int32_t)b[i + 2];
        acc += (int32_t)a[i + 3] * (int32_t)b[i + 3];
    }
    return acc;
}
