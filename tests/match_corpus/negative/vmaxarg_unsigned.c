// isax: none
// like: vmaxarg
// style: unsigned comparison (negative values count as huge) instead of signed
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    uint32_t best = (uint32_t)v[0];
    uint32_t idx = 0;
    for (int i = 1; i < 16; i++) {
        if ((uint32_t)v[i] > best) {
            best = (uint32_t)v[i];
            idx = i;
        }
    }
    *out = (int32_t)best;
    return idx;
}
