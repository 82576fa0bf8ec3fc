// isax: none
// like: vmaxarg
// style: >= in the running comparison returns the LAST occurrence of the maximum on ties
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = v[0];
    uint32_t idx = 0;
    for (int i = 1; i < 16; i++) {
        if (v[i] >= best) {
            best = v[i];
            idx = i;
        }
    }
    *out = best;
    return idx;
}
