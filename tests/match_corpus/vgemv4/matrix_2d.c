// isax: vgemv4
// like: vgemv4
// realistic: yes
// style: the matrix as a 2-D array (pointer to rows of 4), the vector as the row after the last
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    const int32_t (*mat)[4] = (const int32_t (*)[4])m;
    const int32_t *x = mat[4];
    for (int r = 0; r < 4; r++) {
        int32_t acc = 0;
        for (int c = 0; c < 4; c++)
            acc += mat[r][c] * x[c];
        y[r] = acc;
    }
}
