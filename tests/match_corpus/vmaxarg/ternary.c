// isax: vmaxarg
// like: vmaxarg
// style: branch-free update with ternaries on a precomputed comparison, loop starting at 0 (self-compare is harmless)
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = v[0];
    int idx = 0;
    for (int i = 0; i < 16; i++) {
        int gt = v[i] > best;
        idx = gt ? i : idx;
        best = gt ? v[i] : best;
    }
    out[0] = best;
    return (uint32_t)idx;
}
