// isax: vdot16
// like: vdot16
// n: 35
// style: 35-element dot product with walking pointers (two vdot16 chunks plus a 3-element remainder)
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 0; i < 35; i++) {
        acc += *a * *b;
        a++;
        b++;
    }
    return acc;
}
