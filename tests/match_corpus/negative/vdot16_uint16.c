// isax: none
// like: vdot16
// n: 16
// style: operands zero-extended through uint16_t casts (missing sign extension)
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < 16; i++)
        acc += (int32_t)(uint16_t)a[i] * (int32_t)(uint16_t)b[i];
    return acc;
}
