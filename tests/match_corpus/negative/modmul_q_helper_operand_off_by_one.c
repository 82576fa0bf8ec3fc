// isax: none
// like: modmul_q
// realistic: yes
// style: the operand reduced at the call adds q - 1 instead of q, so the product is of y - 1 (mod q); modmul_q may only be used on that computed operand
#include <stdint.h>

#define KYBER_Q 3329

static inline uint16_t fqmul(uint16_t a, uint16_t b)
{
    return (uint16_t)(((uint32_t)a * b) % KYBER_Q);
}

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint16_t x = (uint16_t)a;
    uint16_t y = (uint16_t)b;
    return fqmul(x, (uint16_t)((y + KYBER_Q - 1) % KYBER_Q));
}
