// isax: sparse_decomp_i8
// like: sparse_decomp_i8
// style: bit tested with mask & (1u << k), zero store first then overwritten, mask built with multiplications by 256^k
#include <stdint.h>

uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)
{
    uint32_t mask = (uint32_t)s[0] + (uint32_t)s[1] * 256u + (uint32_t)s[2] * 65536u + (uint32_t)s[3] * 16777216u;
    uint32_t j = 0;
    for (uint32_t k = 0; k < 32; k++) {
        dense[k] = 0;
        if ((mask & (1u << k)) != 0) {
            dense[k] = *(s + 4 + j);
            ++j;
        }
    }
    return j;
}
