// isax: vgemv4
// like: vgemv4
// style: row loop counting from 1 with r-1, inner loop unrolled by 2 with two partial sums added at the end
#include <stdint.h>

#define N 4

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    for (int r = 1; r <= N; r++) {
        int32_t s0 = 0;
        int32_t s1 = 0;
        for (int c = 0; c < N; c += 2) {
            s0 += m[N * (r - 1) + c] * m[N * N + c];
            s1 += m[N * (r - 1) + c + 1] * m[N * N + c + 1];
        }
        y[r - 1] = s0 + s1;
    }
}
