// isax: vdot16
// like: vdot16
// n: 64
// style: plain 64-element dot product (four whole vdot16 chunks)
#include <stdint.h>

#define N 64

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < N; i++)
        acc += a[i] * b[i];
    return acc;
}
