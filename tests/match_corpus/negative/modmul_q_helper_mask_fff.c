// isax: none
// like: modmul_q
// realistic: yes
// style: the field helper keeps 12 bits instead of 16
#include <stdint.h>

static inline uint32_t low_bits(uint32_t x)
{
    return x & 0xfffu;
}

uint32_t kernel(uint32_t a, uint32_t b)
{
    return (low_bits(a) * low_bits(b)) % 3329u;
}
