// isax: vgemv4
// like: vgemv4
// style: inner loop fully unrolled into one expression, vector through pointer local x = m + 16, operands swapped (x[c] * row)
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    const int32_t *x = m + 16;
    for (int r = 0; r < 4; r++) {
        y[r] = x[0] * m[4 * r] + x[1] * m[4 * r + 1] + x[2] * m[4 * r + 2] + x[3] * m[4 * r + 3];
    }
}
