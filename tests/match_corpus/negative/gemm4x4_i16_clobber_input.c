// isax: none
// like: gemm4x4_i16
// style: extra statement after the product clears A's first row in the input buffer (ab not const); the ISAX leaves its input intact
#include <stdint.h>

uint32_t kernel(int16_t *restrict ab, int32_t *restrict c)
{
    uint32_t trace = 0;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            int32_t acc = 0;
            for (int k = 0; k < 4; k++)
                acc += ab[4 * i + k] * ab[16 + 4 * k + j];
            c[4 * i + j] = acc;
            if (i == j)
                trace += acc;
        }
    }
    for (int k = 0; k < 4; k++)
        ab[k] = 0;
    return trace;
}
