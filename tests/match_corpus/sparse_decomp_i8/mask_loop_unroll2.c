// isax: sparse_decomp_i8
// like: sparse_decomp_i8
// style: mask assembled by a byte loop (mask |= s[b] << 8*b), main loop unrolled by 2, signed int8_t values copied through casts
#include <stdint.h>

uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)
{
    uint32_t mask = 0;
    for (int b = 0; b < 4; b++)
        mask |= (uint32_t)s[b] << (8 * b);
    int j = 0;
    for (int k = 0; k < 32; k += 2) {
        int8_t v0 = 0;
        if ((mask >> k) & 1) {
            v0 = (int8_t)s[4 + j];
            j++;
        }
        dense[k] = (uint8_t)v0;
        int8_t v1 = 0;
        if ((mask >> (k + 1)) & 1) {
            v1 = (int8_t)s[4 + j];
            j++;
        }
        dense[k + 1] = (uint8_t)v1;
    }
    return (uint32_t)j;
}
