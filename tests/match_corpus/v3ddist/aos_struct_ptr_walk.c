// isax: v3ddist
// like: v3ddist
// realistic: yes
// style: tagged point structs walked with pointers (p++, q++), distance through a struct member array of the output block
#include <stdint.h>

#define NPTS 16

struct point {
    int32_t x;
    int32_t y;
    int32_t z;
};

struct result {
    struct point ref[NPTS];
    int32_t d[NPTS];
};

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const struct point *p = (const struct point *)a;
    struct result *res = (struct result *)b;
    const struct point *q = res->ref;
    uint32_t total = 0;
    for (int i = 0; i < NPTS; i++) {
        int32_t dx = q->x - p->x;
        int32_t dy = q->y - p->y;
        int32_t dz = q->z - p->z;
        res->d[i] = dx * dx + dy * dy + dz * dz;
        total += (uint32_t)res->d[i];
        p++;
        q++;
    }
    return total;
}
