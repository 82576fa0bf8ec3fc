// isax: vmaxarg
// like: vmaxarg
// style: while loop with a pre-incremented index declared before it, running max kept in locals
// realistic: yes
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = v[0];
    uint32_t idx = 0;
    int i = 1;
    while (i < 16) {
        if (v[i] > best) {
            best = v[i];
            idx = (uint32_t)i;
        }
        ++i;
    }
    *out = best;
    return idx;
}
