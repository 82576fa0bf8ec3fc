// isax: vmaxarg
// like: vmaxarg
// style: unrolled by 2: each pair is reduced first (left wins ties), then merged into the running max with strict >
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = v[0];
    int idx = 0;
    for (int i = 0; i < 16; i += 2) {
        int32_t pv = v[i];
        int pi = i;
        if (v[i + 1] > pv) {
            pv = v[i + 1];
            pi = i + 1;
        }
        if (pv > best) {
            best = pv;
            idx = pi;
        }
    }
    *out = best;
    return idx;
}
