// isax: none
// like: vmaxarg
// style: loop bound 15 instead of 16: v[15] is never considered
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = v[0];
    uint32_t idx = 0;
    for (int i = 1; i < 15; i++) {
        if (v[i] > best) {
            best = v[i];
            idx = i;
        }
    }
    *out = best;
    return idx;
}
