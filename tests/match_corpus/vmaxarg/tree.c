// isax: vmaxarg
// like: vmaxarg
// style: pairwise tree reduction in local arrays (left wins ties with >=), like the hardware datapath
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t mv[16];
    int32_t mi[16];
    for (int k = 0; k < 16; k++) {
        mv[k] = v[k];
        mi[k] = k;
    }
    for (int n = 8; n >= 1; n = n >> 1) {
        for (int k = 0; k < n; k++) {
            int32_t l = mv[2 * k];
            int32_t r = mv[2 * k + 1];
            if (l >= r) {
                mv[k] = l;
                mi[k] = mi[2 * k];
            } else {
                mv[k] = r;
                mi[k] = mi[2 * k + 1];
            }
        }
    }
    *out = mv[0];
    return (uint32_t)mi[0];
}
