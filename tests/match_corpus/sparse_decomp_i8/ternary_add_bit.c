// isax: sparse_decomp_i8
// like: sparse_decomp_i8
// style: branch-free: bit extracted into a temporary, ternary select, j += bit; values through pointer local vals = s + 4
#include <stdint.h>

uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)
{
    const uint8_t *vals = s + 4;
    uint32_t mask = s[0] | (s[1] << 8) | (s[2] << 16) | ((uint32_t)s[3] << 24);
    uint32_t j = 0;
    for (int k = 0; k < 32; k++) {
        uint32_t bit = (mask >> k) & 1u;
        dense[k] = bit ? vals[j] : 0;
        j += bit;
    }
    return j;
}
