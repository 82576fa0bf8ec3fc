// isax: none
// like: vmaxarg
// alias: yes
// style: no restrict, running max kept in *out: when out points into v (e.g. out == v + 5) the initial *out = v[0] overwrites an element before it is compared
#include <stdint.h>

uint32_t kernel(const int32_t *v, int32_t *out)
{
    uint32_t idx = 0;
    *out = v[0];
    for (int i = 1; i < 16; i++) {
        if (v[i] > *out) {
            *out = v[i];
            idx = i;
        }
    }
    return idx;
}
