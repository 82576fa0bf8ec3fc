// isax: ntt_bfly
// like: ntt_bfly
// style: % reductions on uint16_t fields taken by casts, 64-bit product, ternary on the sum, result packed with |
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint16_t a16 = (uint16_t)ab;
    uint16_t b16 = (uint16_t)(ab >> 16);
    uint16_t z16 = (uint16_t)zeta;
    uint32_t a = a16 % 3329u;
    uint32_t t = (uint32_t)(((uint64_t)z16 * b16) % 3329u);
    uint32_t s = a + t;
    s = s >= 3329u ? s - 3329u : s;
    uint32_t d = (a + 3329u - t) % 3329u;
    return (uint32_t)(uint16_t)d << 16 | (uint32_t)(uint16_t)s;
}
