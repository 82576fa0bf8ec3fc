// isax: modmul_q
// like: modmul_q
// style: Barrett reduction exactly as in the spec (64-bit x, t = (x*1290167)>>32, ternary conditional subtract)
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint64_t x = (uint64_t)(a & 0xffff) * (uint64_t)(b & 0xffff);
    uint64_t t = (x * 1290167) >> 32;
    uint64_t r = x - t * 3329;
    uint64_t red = r >= 3329 ? r - 3329 : r;
    return (uint32_t)red;
}
