// isax: vdot16
// like: vdot16
// n: 16
// realistic: yes
// style: a static inline multiply-accumulate helper called in the loop
#include <stdint.h>

static inline int32_t mac(int32_t acc, int16_t x, int16_t y)
{
    return acc + (int32_t)x * y;
}

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < 16; i++)
        acc = mac(acc, a[i], b[i]);
    return acc;
}
