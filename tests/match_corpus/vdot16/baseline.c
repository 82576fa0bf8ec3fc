// isax: vdot16
// like: vdot16
// n: 16
// style: textbook loop, acc += a[i] * b[i] with implicit int promotion
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < 16; i++)
        acc += a[i] * b[i];
    return acc;
}
