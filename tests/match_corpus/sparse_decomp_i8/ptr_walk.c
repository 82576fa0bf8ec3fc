// isax: sparse_decomp_i8
// like: sparse_decomp_i8
// style: packed values consumed with a walking pointer (vp++), output written through a walking pointer (dp++), count kept separately
#include <stdint.h>

uint32_t kernel(const uint8_t *restrict s, uint8_t *restrict dense)
{
    uint32_t mask = (uint32_t)s[3];
    mask = (mask << 8) | s[2];
    mask = (mask << 8) | s[1];
    mask = (mask << 8) | s[0];
    const uint8_t *vp = s + 4;
    uint8_t *dp = dense;
    uint32_t count = 0;
    for (int k = 0; k < 32; k++) {
        if ((mask >> k) & 1) {
            *dp = *vp;
            vp++;
            count++;
        } else {
            *dp = 0;
        }
        dp++;
    }
    return count;
}
