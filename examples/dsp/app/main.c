/* DSP case study: a test signal (two tones and noise) through a 32-tap FIR low-pass and a
 * 4th-order Butterworth low-pass (two biquads), in blocks of 256 samples. */
#include <stdint.h>

#include "aquas_rt.h"
#include "filters.h"

#define NSAMPLES 2048
#define BLOCK 256

/* Hamming-windowed sinc, cutoff 0.1 fs, unity DC gain, Q15 */
static const int16_t lowpass[FIR_TAPS] = {
    -17,  20,   73,   135,  164,  91,   -129, -466, -783, -850, -435,
    588,  2141, 3927, 5501, 6424, 6424, 5501, 3927, 2141, 588,  -435,
    -850, -783, -466, -129, 91,   164,  135,  73,   20,   -17,
};

/* Butterworth, cutoff 0.05 fs, RBJ cookbook sections (Q = 0.541, 1.307), Q2.14 */
static const biquad_coef butter[BQ_SECTIONS] = {
    {312, 624, 312, -24243, 9107},
    {359, 717, 359, -27869, 12919},
};

static int16_t input[NSAMPLES], stage1[NSAMPLES], output[NSAMPLES];
static fir_state fir;
static biquad_state bq[BQ_SECTIONS];

static int16_t test_signal(int n, uint32_t *seed)
{
    /* a slow triangle (period 200), a fast square wave (period 6) and uniform noise */
    int t = n % 200;
    int tri = (t < 100 ? t : 200 - t) * 160 - 8000;
    int sq = (n % 6) < 3 ? 3000 : -3000;
    *seed = *seed * 1664525u + 1013904223u;
    int noise = (int)((*seed >> 20) & 0x7ff) - 1024;
    return (int16_t)(tri + sq + noise);
}

int main(void)
{
    uint32_t seed = 1;
    for (int n = 0; n < NSAMPLES; n++)
        input[n] = test_signal(n, &seed);
    fir_init(&fir, lowpass);

    for (int blk = 0; blk < NSAMPLES; blk += BLOCK) {
        AQUAS_REGION_BEGIN(1);
        fir_process(&fir, &input[blk], &stage1[blk], BLOCK);
        AQUAS_REGION_END(1);
        for (int i = 0; i < BLOCK; i++)
            output[blk + i] = stage1[blk + i];
        AQUAS_REGION_BEGIN(2);
        biquad_cascade(butter, bq, BQ_SECTIONS, &output[blk], BLOCK);
        AQUAS_REGION_END(2);
    }

#ifdef HOST_REFERENCE
    /* The same chain written out directly over the whole signal (no blocks, no circular
     * delay line, no structs): y[n] = sum_k h[k] x[n-k] with zero history, then each
     * section's recursion in turn. Block processing with carried state must equal it. */
    static int16_t ref1[NSAMPLES], ref2[NSAMPLES];
    for (int n = 0; n < NSAMPLES; n++) {
        int64_t acc = 0;
        for (int k = 0; k < FIR_TAPS && k <= n; k++)
            acc += (int64_t)lowpass[k] * input[n - k];
        int64_t y = (acc + (1 << 14)) >> 15;
        ref1[n] = (int16_t)(y > 32767 ? 32767 : y < -32768 ? -32768 : y);
    }
    for (int n = 0; n < NSAMPLES; n++)
        ref2[n] = ref1[n];
    for (int s = 0; s < BQ_SECTIONS; s++) {
        int64_t x1 = 0, x2 = 0, y1 = 0, y2 = 0;
        for (int n = 0; n < NSAMPLES; n++) {
            int64_t x = ref2[n];
            int64_t acc = butter[s].b0 * x + butter[s].b1 * x1 + butter[s].b2 * x2 -
                          butter[s].a1 * y1 - butter[s].a2 * y2;
            int64_t y = (acc + (1 << 13)) >> 14;
            y = y > 32767 ? 32767 : y < -32768 ? -32768 : y;
            x2 = x1, x1 = x, y2 = y1, y1 = y;
            ref2[n] = (int16_t)y;
        }
    }
    int wrong = 0;
    for (int n = 0; n < NSAMPLES; n++)
        wrong += (ref1[n] != stage1[n]) + (ref2[n] != output[n]);
    printf("host reference: %d mismatches\n", wrong);
#endif

    uint32_t check = 0;
    int64_t energy_in = 0, energy_out = 0;
    for (int n = 0; n < NSAMPLES; n++) {
        check = (check << 5 | check >> 27) ^ (uint16_t)output[n];
        energy_in += (int32_t)input[n] * input[n];
        energy_out += (int32_t)output[n] * output[n];
    }
    printf("dsp chain: %d samples, checksum %08x, energy in %u out %u (x2^-16)\n", NSAMPLES,
           (unsigned)check, (unsigned)(energy_in >> 16), (unsigned)(energy_out >> 16));
    for (int n = 1000; n < 1008; n++)
        printf("y[%d] = %d\n", n, output[n]);
    return 0;
}
