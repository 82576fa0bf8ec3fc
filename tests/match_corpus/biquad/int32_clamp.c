// isax: biquad
// like: biquad
// style: products in int32 (each fits), sum in int64, the shifted result clamped as int32
#include <stdint.h>

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    for (int i = 0; i < 16; i++) {
        int32_t x = s[4 + i];
        int64_t acc = (int64_t)(k[0] * x) + (int64_t)(k[1] * s[0]) + (int64_t)(k[2] * s[1]);
        acc -= (int64_t)(k[3] * s[2]);
        acc -= (int64_t)(k[4] * s[3]);
        int32_t y = (int32_t)((acc + 8192) >> 14);
        if (y > 32767)
            y = 32767;
        if (y < -32768)
            y = -32768;
        s[1] = s[0];
        s[0] = (int16_t)x;
        s[3] = s[2];
        s[2] = (int16_t)y;
        s[4 + i] = (int16_t)y;
    }
}
