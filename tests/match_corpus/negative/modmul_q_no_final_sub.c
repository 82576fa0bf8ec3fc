// isax: none
// like: modmul_q
// style: Barrett step without the final conditional subtraction: result lies in [0, 2q), not canonical
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint64_t x = (uint64_t)(a & 0xffff) * (uint64_t)(b & 0xffff);
    uint64_t t = (x * 1290167) >> 32;
    return (uint32_t)(x - t * 3329);
}
