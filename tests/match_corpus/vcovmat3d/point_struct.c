// isax: vcovmat3d
// like: vcovmat3d
// realistic: yes
// style: points as an array of structs, centroid and scatter matrix as struct members of the output block
#include <stdint.h>

typedef struct {
    int32_t x, y, z;
} point;

typedef struct {
    int32_t cx, cy, cz, pad;
    int32_t s[6][2];
} cov;

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
{
    const point *pts = (const point *)p;
    cov *out = (cov *)c;
    int64_t cx = out->cx, cy = out->cy, cz = out->cz;
    int64_t sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0;
    for (int i = 0; i < 16; i++) {
        int64_t dx = pts[i].x - cx;
        int64_t dy = pts[i].y - cy;
        int64_t dz = pts[i].z - cz;
        sxx += dx * dx;
        sxy += dx * dy;
        sxz += dx * dz;
        syy += dy * dy;
        syz += dy * dz;
        szz += dz * dz;
    }
    out->s[0][0] = (int32_t)sxx;
    out->s[0][1] = (int32_t)(sxx >> 32);
    out->s[1][0] = (int32_t)sxy;
    out->s[1][1] = (int32_t)(sxy >> 32);
    out->s[2][0] = (int32_t)sxz;
    out->s[2][1] = (int32_t)(sxz >> 32);
    out->s[3][0] = (int32_t)syy;
    out->s[3][1] = (int32_t)(syy >> 32);
    out->s[4][0] = (int32_t)syz;
    out->s[4][1] = (int32_t)(syz >> 32);
    out->s[5][0] = (int32_t)szz;
    out->s[5][1] = (int32_t)(szz >> 32);
    return (uint32_t)(sxx + syy + szz);
}
