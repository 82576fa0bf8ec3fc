// isax: sparse_decomp_i8
// like: sparse_decomp_i8
// style: mask consumed by shifting right each iteration (m & 1; m >>= 1), while loop over k
#include <stdint.h>

uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)
{
    uint32_t m = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
    uint32_t j = 0;
    int k = 0;
    while (k < 32) {
        if (m & 1) {
            dense[k] = s[j + 4];
            j += 1;
        } else {
            dense[k] = 0;
        }
        m >>= 1;
        k++;
    }
    return j;
}
