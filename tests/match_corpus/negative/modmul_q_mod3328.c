// isax: none
// like: modmul_q
// style: reduces modulo 3328 instead of 3329
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    return ((a & 0xffff) * (b & 0xffff)) % 3328;
}
