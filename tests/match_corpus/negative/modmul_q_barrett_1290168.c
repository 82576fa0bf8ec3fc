// isax: none
// like: modmul_q
// style: Barrett constant 1290168 (rounded up) overestimates the quotient for large products, so r wraps below zero
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint64_t x = (uint64_t)(a & 0xffff) * (uint64_t)(b & 0xffff);
    uint64_t t = (x * 1290168) >> 32;
    uint64_t r = x - t * 3329;
    uint64_t red = r >= 3329 ? r - 3329 : r;
    return (uint32_t)red;
}
