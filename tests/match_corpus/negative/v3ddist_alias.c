// isax: none
// like: v3ddist
// alias: yes
// style: no restrict on a or b: when the distance block b+48.. overlaps a (e.g. b + 48 == a + 4), d[i] overwrites coordinates of later points before they are read
#include <stdint.h>

uint32_t kernel(const int32_t *a, int32_t *b)
{
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t dx = a[3 * i] - b[3 * i];
        int32_t dy = a[3 * i + 1] - b[3 * i + 1];
        int32_t dz = a[3 * i + 2] - b[3 * i + 2];
        int32_t d = dx * dx + dy * dy + dz * dz;
        b[48 + i] = d;
        total += d;
    }
    return total;
}
