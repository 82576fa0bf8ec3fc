// isax: ntt_bfly
// like: ntt_bfly
// style: Barrett with the multiply-shift split into separate statements, operands of zeta*b swapped, diff computed as q - t + a
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint64_t b = ab >> 16;
    uint64_t z = zeta & 0xffff;
    uint64_t prod = b * z;
    uint64_t est = prod * 1290167;
    est = est >> 32;
    uint64_t t = prod - est * 3329;
    if (t >= 3329)
        t = t - 3329;
    uint64_t a = ab & 0xffff;
    uint64_t ea = (a * 1290167) >> 32;
    a = a - ea * 3329;
    if (a >= 3329)
        a = a - 3329;
    uint64_t s = t + a;
    if (s >= 3329)
        s = s - 3329;
    uint64_t d = 3329 - t + a;
    if (d >= 3329)
        d = d - 3329;
    return (uint32_t)(d << 16) | (uint32_t)s;
}
