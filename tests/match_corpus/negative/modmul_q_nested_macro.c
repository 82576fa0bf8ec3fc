// isax: none
// like: modmul_q
// realistic: yes
// style: a product mod q multiplied by a constant twiddle mod q, written with a function-like macro: two nested modmul_q calls, not one
#include <stdint.h>

#define Q 3329
#define MULQ(x, y) ((uint32_t)(x) * (uint32_t)(y) % Q)

uint32_t kernel(uint32_t a, uint32_t b)
{
    return MULQ(MULQ(a & 0xffff, b & 0xffff), 17) + 1;
}
