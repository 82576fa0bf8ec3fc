/* A fixed-point filter chain: a 32-tap FIR low-pass (Q15) followed by a cascade of
 * Direct-Form-I biquads (Q2.14 coefficients), on blocks of Q15 samples. */
#ifndef DSP_FILTERS_H
#define DSP_FILTERS_H

#include <stdint.h>

#define FIR_TAPS 32
#define BQ_SECTIONS 2

typedef struct {
    const int16_t *coef;         /* FIR_TAPS Q15 taps */
    int16_t delay[2 * FIR_TAPS]; /* circular delay line, every sample stored twice */
    unsigned pos;
} fir_state;

typedef struct {
    int16_t b0, b1, b2, a1, a2; /* Q2.14 */
} biquad_coef;

typedef struct {
    int16_t x1, x2, y1, y2;
} biquad_state;

void fir_init(fir_state *f, const int16_t *coef);
void fir_process(fir_state *f, const int16_t *in, int16_t *out, int n);
void biquad_cascade(const biquad_coef *c, biquad_state *s, int sections, int16_t *buf, int n);

#endif
