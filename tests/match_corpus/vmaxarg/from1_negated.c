// isax: vmaxarg
// like: vmaxarg
// style: counter from 1 to 16 indexing v[i-1], condition written as !(x <= best), best starts at INT32_MIN with an index 0
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = -2147483647 - 1;
    uint32_t idx = 0;
    for (uint32_t i = 1; i <= 16; i++) {
        int32_t x = v[i - 1];
        if (!(x <= best)) {
            best = x;
            idx = i - 1;
        }
    }
    *out = best;
    return idx;
}
