// isax: vcovmat3d
// like: vcovmat3d
// style: the six sums kept in a local int64_t s[6], differences in a local d[3] filled by an axis loop, halves written by a loop over k
#include <stdint.h>

uint32_t kernel(const int32_t *restrict p, int32_t *restrict c)
{
    int64_t s[6];
    int64_t d[3];
    for (int k = 0; k < 6; k++)
        s[k] = 0;
    for (int i = 0; i < 16; i++) {
        for (int a = 0; a < 3; a++)
            d[a] = (int64_t)p[3 * i + a] - (int64_t)c[a];
        s[0] += d[0] * d[0];
        s[1] += d[0] * d[1];
        s[2] += d[0] * d[2];
        s[3] += d[1] * d[1];
        s[4] += d[1] * d[2];
        s[5] += d[2] * d[2];
    }
    for (int k = 0; k < 6; k++) {
        c[4 + 2 * k] = (int32_t)s[k];
        c[5 + 2 * k] = (int32_t)(s[k] >> 32);
    }
    return (uint32_t)(s[0] + s[3] + s[5]);
}
