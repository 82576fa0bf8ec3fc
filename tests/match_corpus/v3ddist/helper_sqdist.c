// isax: v3ddist
// like: v3ddist
// realistic: yes
// style: a static helper computes the squared distance of two point structs (itself through a square helper)
#include <stdint.h>

typedef struct {
    int32_t x, y, z;
} vec3;

static inline int32_t square(int32_t v)
{
    return v * v;
}

static int32_t sqdist(const vec3 *p, const vec3 *q)
{
    int32_t dx = p->x - q->x;
    int32_t dy = p->y - q->y;
    int32_t dz = p->z - q->z;
    return square(dx) + square(dy) + square(dz);
}

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const vec3 *pa = (const vec3 *)a;
    const vec3 *pb = (const vec3 *)b;
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t d = sqdist(pa + i, pb + i);
        b[48 + i] = d;
        total += (uint32_t)d;
    }
    return total;
}
