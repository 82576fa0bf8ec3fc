// isax: modmul_q
// like: modmul_q
// style: % with uint16_t locals, the low half extracted by shifts ((a << 16) >> 16), product cast to uint32_t
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint16_t x = (uint16_t)((a << 16) >> 16);
    uint16_t y = (uint16_t)((b << 16) >> 16);
    uint32_t p = (uint32_t)x * (uint32_t)y;
    uint32_t r = p % 3329u;
    return r;
}
