// isax: none
// like: modmul_q
// style: operands masked with 0xfff (12 bits) instead of 0xffff
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    return ((a & 0xfff) * (b & 0xfff)) % 3329;
}
