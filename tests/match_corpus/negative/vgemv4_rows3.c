// isax: none
// like: vgemv4
// style: row loop bound 3 instead of 4: y[3] is never written
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    for (int r = 0; r < 3; r++) {
        int32_t acc = 0;
        for (int c = 0; c < 4; c++)
            acc += m[4 * r + c] * m[16 + c];
        y[r] = acc;
    }
}
