// isax: biquad
// like: biquad
// style: feed-forward and feedback sums apart, rounding constant written as 1 << 13
#include <stdint.h>

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    for (int i = 0; i < 16; i++) {
        int16_t x = s[4 + i];
        int64_t ff = (int64_t)k[0] * x + (int64_t)k[1] * s[0] + (int64_t)k[2] * s[1];
        int64_t fb = (int64_t)k[3] * s[2] + (int64_t)k[4] * s[3];
        int64_t q = (ff - fb + (1 << 13)) >> 14;
        int16_t y;
        if (q > 32767)
            y = 32767;
        else if (q < -32768)
            y = -32768;
        else
            y = (int16_t)q;
        s[1] = s[0];
        s[0] = x;
        s[3] = s[2];
        s[2] = y;
        s[4 + i] = y;
    }
}
