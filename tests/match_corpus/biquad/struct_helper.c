// isax: biquad
// like: biquad
// style: coefficient and channel structs over the buffers, a static inline saturation helper
// realistic: yes
#include <stdint.h>

typedef struct {
    int16_t b0, b1, b2, a1, a2; /* Q2.14 */
} biquad_coef;

typedef struct {
    int16_t x1, x2, y1, y2;
    int16_t buf[16];
} channel;

static inline int16_t sat16(int32_t v)
{
    if (v > 32767)
        return 32767;
    if (v < -32768)
        return -32768;
    return (int16_t)v;
}

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    const biquad_coef *c = (const biquad_coef *)k;
    channel *ch = (channel *)s;
    for (int i = 0; i < 16; i++) {
        int16_t x = ch->buf[i];
        int64_t acc = (int64_t)c->b0 * x + (int64_t)c->b1 * ch->x1 + (int64_t)c->b2 * ch->x2
                      - (int64_t)c->a1 * ch->y1 - (int64_t)c->a2 * ch->y2;
        int16_t y = sat16((int32_t)((acc + (1 << 13)) >> 14));
        ch->x2 = ch->x1;
        ch->x1 = x;
        ch->y2 = ch->y1;
        ch->y1 = y;
        ch->buf[i] = y;
    }
}
