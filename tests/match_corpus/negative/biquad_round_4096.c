// isax: none
// like: biquad
// style: rounds with 2^12 instead of 2^13
#include <stdint.h>

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    for (int i = 0; i < 16; i++) {
        int16_t x = s[4 + i];
        int64_t acc = (int64_t)k[0] * x + (int64_t)k[1] * s[0] + (int64_t)k[2] * s[1]
                      - (int64_t)k[3] * s[2] - (int64_t)k[4] * s[3];
        int64_t q = (acc + 4096) >> 14;
        int16_t y = q > 32767 ? 32767 : (q < -32768 ? -32768 : (int16_t)q);
        s[1] = s[0];
        s[0] = x;
        s[3] = s[2];
        s[2] = y;
        s[4 + i] = y;
    }
}
