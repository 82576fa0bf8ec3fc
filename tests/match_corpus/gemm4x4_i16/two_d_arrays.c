// isax: gemm4x4_i16
// like: gemm4x4_i16
// realistic: yes
// style: A, B and C as 2-D arrays (pointers to rows of 4) over the flat buffers, trace from C[d][d]
#include <stdint.h>

uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)
{
    const int16_t (*A)[4] = (const int16_t (*)[4])ab;
    const int16_t (*B)[4] = A + 4;
    int32_t (*C)[4] = (int32_t (*)[4])c;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            int32_t acc = 0;
            for (int k = 0; k < 4; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = acc;
        }
    }
    uint32_t trace = 0;
    for (int d = 0; d < 4; d++)
        trace += (uint32_t)C[d][d];
    return trace;
}
