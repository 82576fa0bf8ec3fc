// isax: none
// like: sparse_decomp_i8
// style: missing else branch: positions with a clear mask bit keep their old contents instead of 0
#include <stdint.h>

uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)
{
    uint32_t mask = (uint32_t)s[0] | ((uint32_t)s[1] << 8) | ((uint32_t)s[2] << 16) | ((uint32_t)s[3] << 24);
    uint32_t j = 0;
    for (int k = 0; k < 32; k++) {
        if ((mask >> k) & 1) {
            dense[k] = s[4 + j];
            j++;
        }
    }
    return j;
}
