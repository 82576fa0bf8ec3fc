// isax: vmaxarg
// like: vmaxarg
// style: scans from the end with >= so that the lowest index wins ties
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = v[15];
    int idx = 15;
    for (int i = 14; i >= 0; i--) {
        if (v[i] >= best) {
            best = v[i];
            idx = i;
        }
    }
    *out = best;
    return idx;
}
