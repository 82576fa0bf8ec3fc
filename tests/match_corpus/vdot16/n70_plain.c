// isax: vdot16
// like: vdot16
// n: 70
// style: plain 70-element dot product (four vdot16 chunks plus a 6-element software remainder)
#include <stdint.h>

#define N 70

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < N; i++)
        acc += a[i] * b[i];
    return acc;
}
