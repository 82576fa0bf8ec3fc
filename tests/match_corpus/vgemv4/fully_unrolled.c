// isax: vgemv4
// like: vgemv4
// style: completely unrolled straight-line code with explicit scalar loads into temporaries
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    int32_t x0 = m[16];
    int32_t x1 = m[17];
    int32_t x2 = m[18];
    int32_t x3 = m[19];
    y[0] = m[0] * x0 + m[1] * x1 + m[2] * x2 + m[3] * x3;
    y[1] = m[4] * x0 + m[5] * x1 + m[6] * x2 + m[7] * x3;
    y[2] = m[8] * x0 + m[9] * x1 + m[10] * x2 + m[11] * x3;
    y[3] = m[12] * x0 + m[13] * x1 + m[14] * x2 + m[15] * x3;
}
