// isax: vmaxarg
// like: vmaxarg
// style: textbook running max from v[0], strict > keeps the first occurrence, if-statement update
#include <stdint.h>

uint32_t kernel(const int32_t *restrict v, int32_t *restrict out)
{
    int32_t best = v[0];
    uint32_t idx = 0;
    for (int i = 1; i < 16; i++) {
        if (v[i] > best) {
            best = v[i];
            idx = i;
        }
    }
    *out = best;
    return idx;
}
