// isax: modmul_q
// like: modmul_q
// realistic: yes
// style: static inline helpers for the 16-bit field and the reduction, as a library would write them
#include <stdint.h>

#define KYBER_Q 3329

static inline uint32_t low16(uint32_t x)
{
    return x & 0xffffu;
}

static inline uint32_t reduce(uint32_t x)
{
    return x % KYBER_Q;
}

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint32_t p = low16(a) * low16(b);
    return reduce(p);
}
