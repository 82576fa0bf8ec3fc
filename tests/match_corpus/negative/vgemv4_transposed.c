// isax: none
// like: vgemv4
// style: reads the matrix column-major (m[4*c + r]), i.e. computes M^T x
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    for (int r = 0; r < 4; r++) {
        int32_t acc = 0;
        for (int c = 0; c < 4; c++)
            acc += m[4 * c + r] * m[16 + c];
        y[r] = acc;
    }
}
