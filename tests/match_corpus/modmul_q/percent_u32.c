// isax: modmul_q
// like: modmul_q
// style: plain % 3329 on the 32-bit product of the masked operands
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    return ((a & 0xffff) * (b & 0xffff)) % 3329;
}
