// isax: none
// like: sparse_decomp_i8
// alias: yes
// style: no restrict: when dense overlaps the packed values (e.g. dense == s + 4) a zero written for a clear bit replaces a value that is consumed later
#include <stdint.h>

uint32_t kernel(const uint8_t *s, uint8_t *dense)
{
    uint32_t mask = (uint32_t)s[0] | ((uint32_t)s[1] << 8) | ((uint32_t)s[2] << 16) | ((uint32_t)s[3] << 24);
    uint32_t j = 0;
    for (int k = 0; k < 32; k++) {
        if ((mask >> k) & 1) {
            dense[k] = s[4 + j];
            j++;
        } else {
            dense[k] = 0;
        }
    }
    return j;
}
