/* Fixed-point FIR filter: 16 Q15 taps (a windowed low-pass), Q15 samples, 64-bit
 * accumulation, round-half-up and saturation to int16. */
#include "aquas_rt.h"

#define TAPS 16
#define NS 160

static const short taps[TAPS] = {
    -120, -210, 0, 850, 2100, 3600, 4850, 5500, 5500, 4850, 3600, 2100, 850, 0, -210, -120,
};
static short x[NS + TAPS - 1];
static short y[NS];

static short sat16(long long v)
{
    if (v > 32767)
        return 32767;
    if (v < -32768)
        return -32768;
    return (short)v;
}

static void fir(const short *in, short *out, int n)
{
    for (int i = 0; i < n; i++) {
        long long acc = 0;
        for (int k = 0; k < TAPS; k++)
            acc += (int)taps[k] * (int)in[i + TAPS - 1 - k];
        out[i] = sat16((acc + (1 << 14)) >> 15);
    }
}

int main(void)
{
    unsigned s = 777;
    for (int i = 0; i < NS + TAPS - 1; i++) {
        s = s * 1103515245u + 12345u;
        int noise = (int)((s >> 16) & 0x1FFF) - 0x1000;
        int square = (i / 10) % 2 ? 24000 : -24000;
        int v = square + noise;
        x[i] = (short)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
    }
    AQUAS_REGION_BEGIN(1);
    fir(x, y, NS);
    AQUAS_REGION_END(1);
    int sum = 0, sat = 0;
    unsigned h = 2166136261u;
    for (int i = 0; i < NS; i++) {
        sum += y[i];
        sat += y[i] == 32767 || y[i] == -32768;
        h = (h ^ (unsigned short)y[i]) * 16777619u;
    }
    for (int i = 0; i < NS; i += 10)
        printf("y[%3d]=%6d\n", i, y[i]);
    printf("sum=%d saturated=%d fnv=%08x\n", sum, sat, h);
    return 0;
}
