// isax: gemm4x4_i16
// like: gemm4x4_i16
// style: i-k-j loop order (broadcast A[i][k] over a row of B) into a local int32_t acc[16], copied out at the end
#include <stdint.h>

uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)
{
    int32_t acc[16];
    for (int n = 0; n < 16; n++)
        acc[n] = 0;
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 4; k++) {
            int32_t aik = ab[4 * i + k];
            for (int j = 0; j < 4; j++)
                acc[4 * i + j] += aik * ab[16 + 4 * k + j];
        }
    }
    uint32_t tr = 0;
    for (int n = 0; n < 16; n++) {
        c[n] = acc[n];
        if (n % 5 == 0)
            tr += acc[n];
    }
    return tr;
}
