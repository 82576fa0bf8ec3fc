// isax: none
// like: gemm4x4_i16
// style: an extra store inside the loop nest clears A[i][0] once row i is done (ab not const); the products are unchanged but the ISAX leaves its input intact, so the loop may not be replaced
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
        ab[4 * i] = 0;
    }
    return trace;
}
