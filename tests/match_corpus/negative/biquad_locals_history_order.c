// isax: none
// like: biquad
// style: history in local scalars shifted in the wrong order: x2 receives the new sample instead of the old x1
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
        x1 = x;
        x2 = x1;
        y2 = y1;
        y1 = y;
        buf[i] = y;
    }
    s[0] = x1;
    s[1] = x2;
    s[2] = y1;
    s[3] = y2;
}
