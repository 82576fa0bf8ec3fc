// isax: none
// like: modmul_q
// realistic: yes
// style: two products mod q summed and reduced again (Kyber's basemul), through a helper: modmul_q computes each product, not the value
#include <stdint.h>

#define KYBER_Q 3329

static inline uint16_t fqmul(uint16_t x, uint16_t y)
{
    return (uint16_t)(((uint32_t)x * y) % KYBER_Q);
}

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint16_t a0 = (uint16_t)a, a1 = (uint16_t)(a >> 16);
    uint16_t b0 = (uint16_t)b, b1 = (uint16_t)(b >> 16);
    return (uint16_t)((fqmul(a0, b1) + fqmul(a1, b0)) % KYBER_Q);
}
