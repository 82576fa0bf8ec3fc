// isax: gemm4x4_i16
// like: gemm4x4_i16
// style: textbook i-j-k loops, ab[4*i+k] * ab[16+4*k+j], trace summed in a second loop over c[5*d]
#include <stdint.h>

uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)
{
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            int32_t acc = 0;
            for (int k = 0; k < 4; k++)
                acc += (int32_t)ab[4 * i + k] * (int32_t)ab[16 + 4 * k + j];
            c[4 * i + j] = acc;
        }
    }
    uint32_t trace = 0;
    for (int d = 0; d < 4; d++)
        trace += (uint32_t)c[5 * d];
    return trace;
}
