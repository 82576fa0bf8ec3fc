// isax: none
// like: sparse_decomp_i8
// style: mask bits scanned from bit 31 down (bit 31-k controls dense[k])
#include <stdint.h>

uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)
{
    uint32_t mask = (uint32_t)s[0] | ((uint32_t)s[1] << 8) | ((uint32_t)s[2] << 16) | ((uint32_t)s[3] << 24);
    uint32_t j = 0;
    for (int k = 0; k < 32; k++) {
        if ((mask >> (31 - k)) & 1) {
            dense[k] = s[4 + j];
            j++;
        } else {
            dense[k] = 0;
        }
    }
    return j;
}
