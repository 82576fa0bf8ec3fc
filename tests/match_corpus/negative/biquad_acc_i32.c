// isax: none
// like: biquad
// style: accumulates in int32, which wraps for large coefficients and samples
#include <stdint.h>

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    for (int i = 0; i < 16; i++) {
        int16_t x = s[4 + i];
        int32_t acc = k[0] * x + k[1] * s[0] + k[2] * s[1] - k[3] * s[2] - k[4] * s[3];
        int32_t q = (acc + 8192) >> 14;
        int16_t y = q > 32767 ? 32767 : (q < -32768 ? -32768 : (int16_t)q);
        s[1] = s[0];
        s[0] = x;
        s[3] = s[2];
        s[2] = y;
        s[4 + i] = y;
    }
}
