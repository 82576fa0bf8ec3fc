// isax: vgemv4
// like: vgemv4
// style: while loops, unsigned accumulator and unsigned products (equal modulo 2^32), index (r<<2)+c
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    unsigned r = 0;
    while (r < 4) {
        uint32_t acc = 0;
        unsigned c = 0;
        while (c < 4) {
            acc += (uint32_t)m[(r << 2) + c] * (uint32_t)m[16 + c];
            c++;
        }
        y[r] = (int32_t)acc;
        r++;
    }
}
