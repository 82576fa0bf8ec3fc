// isax: biquad
// like: biquad
// style: history read into local scalars before the loop, shifted in locals per sample, written back after it
// realistic: yes
#include <stdint.h>

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    int16_t x1 = s[0], x2 = s[1], y1 = s[2], y2 = s[3];
    int16_t *buf = s + 4;
    for (int i = 0; i < 16; i++) {
        int16_t x = buf[i];
        int64_t acc = (int64_t)k[0] * x + (int64_t)k[1] * x1 + (int64_t)k[2] * x2
                      - (int64_t)k[3] * y1 - (int64_t)k[4] * y2;
        int64_t q = (acc + 8192) >> 14;
        int16_t y = q > 32767 ? 32767 : (q < -32768 ? -32768 : (int16_t)q);
        x2 = x1;
        x1 = x;
        y2 = y1;
        y1 = y;
        buf[i] = y;
    }
    s[0] = x1;
    s[1] = x2;
    s[2] = y1;
    s[3] = y2;
}
