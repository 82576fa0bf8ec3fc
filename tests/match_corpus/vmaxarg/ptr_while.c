// isax: vmaxarg
// like: vmaxarg
// style: while loop with a walking pointer (p++), comparison written as best < *p
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    const int32_t *p = v + 1;
    int32_t best = *v;
    uint32_t idx = 0;
    uint32_t i = 1;
    while (i < 16) {
        int32_t x = *p;
        if (best < x) {
            best = x;
            idx = i;
        }
        p++;
        i++;
    }
    *out = best;
    return idx;
}
