// isax: gemm4x4_i16
// like: gemm4x4_i16
// style: while loops, products cast to uint32_t and accumulated unsigned (equal modulo 2^32), deref form *(ab + ...)
#include <stdint.h>

uint32_t kernel(const int16_t *restrict ab, int32_t *restrict c)
{
    uint32_t trace = 0;
    int i = 0;
    while (i < 4) {
        int j = 0;
        while (j < 4) {
            uint32_t acc = 0;
            int k = 0;
            while (k < 4) {
                int32_t p = (int32_t)*(ab + 4 * i + k) * (int32_t)*(ab + 16 + 4 * k + j);
                acc += (uint32_t)p;
                k++;
            }
            *(c + 4 * i + j) = (int32_t)acc;
            j++;
        }
        trace += (uint32_t)c[5 * i];
        i++;
    }
    return trace;
}
