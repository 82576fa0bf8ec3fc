// isax: v3ddist
// like: v3ddist
// realistic: yes
// style: array of point structs cast from the buffers, the distances in a struct member array
#include <stdint.h>

typedef struct {
    int32_t x, y, z;
} point;

typedef struct {
    point pts[16];
    int32_t dist[16];
} block;

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const point *p = (const point *)a;
    block *q = (block *)b;
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t dx = p[i].x - q->pts[i].x;
        int32_t dy = p[i].y - q->pts[i].y;
        int32_t dz = p[i].z - q->pts[i].z;
        int32_t d = dx * dx + dy * dy + dz * dz;
        q->dist[i] = d;
        total += d;
    }
    return total;
}
