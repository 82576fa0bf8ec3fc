// isax: biquad
// like: biquad
// style: the history read into locals at the start of the sample, written back at its end
#include <stdint.h>

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    for (int n = 0; n < 16; n++) {
        int16_t x1 = s[0];
        int16_t x2 = s[1];
        int16_t y1 = s[2];
        int16_t y2 = s[3];
        int16_t x = s[4 + n];
        int64_t acc = (int64_t)k[4] * -y2 + (int64_t)k[3] * -y1 + (int64_t)k[2] * x2
                      + (int64_t)k[1] * x1 + (int64_t)k[0] * x;
        int64_t q = (acc + 8192) >> 14;
        int16_t y = q > 32767 ? 32767 : (q < -32768 ? -32768 : (int16_t)q);
        s[0] = x;
        s[1] = x1;
        s[2] = y;
        s[3] = y1;
        s[4 + n] = y;
    }
}
