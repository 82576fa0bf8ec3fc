// isax: vdot16
// like: vdot16
// n: 16
// style: 64-bit long long accumulator truncated to int32_t at the end (equal modulo 2^32), index counting down from 15
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    long long acc = 0;
    for (int i = 15; i >= 0; i--)
        acc += (long long)a[i] * b[i];
    return (int32_t)acc;
}
