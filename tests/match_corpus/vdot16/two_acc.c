// isax: vdot16
// like: vdot16
// n: 16
// style: unrolled by 2 with even/odd accumulators summed at the end, index 2*j written as j<<1
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t even = 0;
    int32_t odd = 0;
    for (int j = 0; j < 8; j++) {
        even += a[j << 1] * b[j << 1];
        odd += a[(j << 1) + 1] * b[(j << 1) + 1];
    }
    return even + odd;
}
