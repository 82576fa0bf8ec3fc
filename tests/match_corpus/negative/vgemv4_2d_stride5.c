// isax: none
// like: vgemv4
// realistic: yes
// style: the matrix viewed as rows of 5 (a row stride off by one): y[r] reads m[5*r + c]
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    const int32_t (*mat)[5] = (const int32_t (*)[5])m;
    for (int r = 0; r < 4; r++) {
        int32_t acc = 0;
        for (int c = 0; c < 4; c++)
            acc += mat[r][c] * m[16 + c];
        y[r] = acc;
    }
}
