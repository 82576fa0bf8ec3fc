#include <stdint.h>

#include "kernels.h"

/* (a * b) mod q for 16-bit coefficients: the modmul_q ISAX */
uint32_t mulmod(uint32_t a, uint32_t b)
{
    uint32_t x = (a & 0xffff) * (b & 0xffff);
    return x % 3329;
}

/* one Cooley-Tukey butterfly on packed halves: the ntt_bfly ISAX */
uint32_t butterfly(uint32_t ab, uint32_t zeta)
{
    uint32_t a = (ab & 0xffff) % 3329;
    uint32_t t = ((ab >> 16) * (zeta & 0xffff)) % 3329;
    uint32_t sum = (a + t) % 3329;
    uint32_t diff = (a + 3329 - t) % 3329;
    return (diff << 16) | sum;
}
