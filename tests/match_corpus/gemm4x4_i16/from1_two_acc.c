// isax: gemm4x4_i16
// like: gemm4x4_i16
// style: loops counted from 1 with i-1/j-1, k unrolled by 2 with two partial sums, walking B column pointer (bp += 8)
#include <stdint.h>

#define DIM 4

uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)
{
    int32_t trace = 0;
    for (int i = 1; i <= DIM; i++) {
        for (int j = 1; j <= DIM; j++) {
            const int16_t *ap = ab + DIM * (i - 1);
            const int16_t *bp = ab + DIM * DIM + (j - 1);
            int32_t s0 = 0;
            int32_t s1 = 0;
            for (int k = 0; k < DIM; k += 2) {
                s0 = s0 + ap[k] * bp[0];
                s1 = s1 + ap[k + 1] * bp[DIM];
                bp += 2 * DIM;
            }
            int32_t v = s0 + s1;
            c[DIM * (i - 1) + (j - 1)] = v;
            if (i == j)
                trace += v;
        }
    }
    return (uint32_t)trace;
}
