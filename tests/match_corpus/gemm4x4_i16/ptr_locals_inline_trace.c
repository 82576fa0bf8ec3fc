// isax: gemm4x4_i16
// like: gemm4x4_i16
// style: A and B as pointer locals (B = ab + 16), implicit int promotion of the i16 products, trace accumulated inline with if (i == j)
#include <stdint.h>

uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)
{
    const int16_t *A = ab;
    const int16_t *B = ab + 16;
    uint32_t trace = 0;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            int acc = 0;
            for (int k = 0; k < 4; k++)
                acc += A[i * 4 + k] * B[k * 4 + j];
            c[i * 4 + j] = acc;
            if (i == j)
                trace += acc;
        }
    }
    return trace;
}
