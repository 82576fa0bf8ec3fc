// isax: none
// like: v3ddist
// realistic: yes
// style: the distance helper sums absolute differences (Manhattan), not squares
#include <stdint.h>

typedef struct {
    int32_t x, y, z;
} vec3;

static inline int32_t absdiff(int32_t u, int32_t v)
{
    if (u > v)
        return u - v;
    return v - u;
}

static int32_t dist1(const vec3 *p, const vec3 *q)
{
    return absdiff(p->x, q->x) + absdiff(p->y, q->y) + absdiff(p->z, q->z);
}

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const vec3 *pa = (const vec3 *)a;
    const vec3 *pb = (const vec3 *)b;
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t d = dist1(&pa[i], &pb[i]);
        b[48 + i] = d;
        total += (uint32_t)d;
    }
    return total;
}
