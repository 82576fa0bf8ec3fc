// isax: vgemv4
// like: vgemv4
// style: column-outer loop order (c then r) into a local accumulator array, copied to y at the end
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    int32_t acc[4];
    for (int r = 0; r < 4; r++)
        acc[r] = 0;
    for (int c = 0; c < 4; c++) {
        int32_t xc = m[16 + c];
        for (int r = 0; r < 4; r++)
            acc[r] += m[4 * r + c] * xc;
    }
    for (int r = 0; r < 4; r++)
        y[r] = acc[r];
}
