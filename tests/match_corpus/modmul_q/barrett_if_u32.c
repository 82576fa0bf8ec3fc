// isax: modmul_q
// like: modmul_q
// style: Barrett with the product in uint32_t, the remainder computed in 32 bits (equal since r < 2q) and an if-statement subtract
#include <stdint.h>

#define KYBER_Q 3329

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint32_t x = (a & 0xFFFFu) * (b & 0xFFFFu);
    uint32_t t = (uint32_t)(((uint64_t)x * 1290167u) >> 32);
    uint32_t r = x - t * KYBER_Q;
    if (r >= KYBER_Q)
        r -= KYBER_Q;
    return r;
}
