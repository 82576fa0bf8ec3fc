// isax: ntt_bfly
// like: ntt_bfly
// style: % reductions, signed difference a - t fixed up with if (d < 0) d += q, conditional subtract for the sum
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    int32_t a = (int32_t)((ab & 0xffff) % 3329);
    int32_t t = (int32_t)(((ab >> 16) * (zeta & 0xffff)) % 3329);
    int32_t d = a - t;
    if (d < 0)
        d += 3329;
    int32_t s = a + t;
    if (s >= 3329)
        s -= 3329;
    return ((uint32_t)d << 16) | (uint32_t)s;
}
