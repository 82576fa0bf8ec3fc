#include <stdint.h>

#include "filters.h"

#define Q15_ROUND (1 << 14)

static inline int16_t sat16(int32_t v)
{
    if (v > 32767)
        return 32767;
    if (v < -32768)
        return -32768;
    return (int16_t)v;
}

void fir_init(fir_state *f, const int16_t *coef)
{
    f->coef = coef;
    f->pos = 0;
    for (int k = 0; k < 2 * FIR_TAPS; k++)
        f->delay[k] = 0;
}

/* y[n] = sum_k h[k] x[n - k]. The delay line keeps each sample at pos and pos + TAPS, so the
 * newest-first window delay[pos .. pos + TAPS) is always contiguous. */
void fir_process(fir_state *f, const int16_t *in, int16_t *out, int n)
{
    const int16_t *h = f->coef;
    for (int i = 0; i < n; i++) {
        f->pos = (f->pos == 0) ? FIR_TAPS - 1 : f->pos - 1;
        f->delay[f->pos] = in[i];
        f->delay[f->pos + FIR_TAPS] = in[i];
        const int16_t *x = &f->delay[f->pos];
        int32_t acc = 0;
        for (int k = 0; k < FIR_TAPS; k++)
            acc += h[k] * x[k];
        out[i] = sat16((acc + Q15_ROUND) >> 15);
    }
}

/* Direct form I, Q2.14 coefficients, one section after the other, in place. */
void biquad_cascade(const biquad_coef *c, biquad_state *s, int sections, int16_t *buf, int n)
{
    for (int sec = 0; sec < sections; sec++) {
        const biquad_coef *k = &c[sec];
        biquad_state *st = &s[sec];
        for (int i = 0; i < n; i++) {
            int16_t x = buf[i];
            int64_t acc = (int64_t)k->b0 * x + (int64_t)k->b1 * st->x1 + (int64_t)k->b2 * st->x2
                          - (int64_t)k->a1 * st->y1 - (int64_t)k->a2 * st->y2;
            int32_t y = (int32_t)((acc + (1 << 13)) >> 14);
            int16_t yq = sat16(y);
            st->x2 = st->x1;
            st->x1 = x;
            st->y2 = st->y1;
            st->y1 = yq;
            buf[i] = yq;
        }
    }
}
