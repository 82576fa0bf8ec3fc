// isax: gemm4x4_i16
// like: gemm4x4_i16
// style: k loop fully unrolled into one expression, row/column offsets with shifts (i<<2), operands swapped (B * A), trace from explicit diagonal loads
#include <stdint.h>

uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)
{
    for (int i = 0; i < 4; i++) {
        int ra = i << 2;
        for (int j = 0; j < 4; j++) {
            c[ra + j] = ab[16 + j] * ab[ra] + ab[20 + j] * ab[ra + 1] + ab[24 + j] * ab[ra + 2]
                        + ab[28 + j] * ab[ra + 3];
        }
    }
    return (uint32_t)c[0] + (uint32_t)c[5] + (uint32_t)c[10] + (uint32_t)c[15];
}
