// isax: biquad
// like: biquad
// style: samples through a pointer local past the history, coefficients in named locals
#include <stdint.h>

void kernel(const int16_t *restrict k, int16_t *restrict s)
{
    int16_t *io = s + 4;
    int64_t b0 = k[0];
    int64_t b1 = k[1];
    int64_t b2 = k[2];
    int64_t a1 = k[3];
    int64_t a2 = k[4];
    for (int i = 0; i < 16; i++) {
        int64_t x = io[i];
        int64_t acc = b0 * x + b1 * s[0] + b2 * s[1] - a1 * s[2] - a2 * s[3];
        int64_t q = (acc + 8192) >> 14;
        int64_t y = q > 32767 ? 32767 : q;
        y = y < -32768 ? -32768 : y;
        s[1] = s[0];
        s[0] = (int16_t)x;
        s[3] = s[2];
        s[2] = (int16_t)y;
        io[i] = (int16_t)y;
    }
}
