// isax: ntt_bfly
// like: ntt_bfly
// style: Barrett reductions exactly as in the spec (a reduced first, t = zeta*b mod q), ternary conditional subtracts, packed {diff, sum}
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint64_t xa = ab & 0xffff;
    uint64_t ta = xa - ((xa * 1290167) >> 32) * 3329;
    uint32_t a = (uint32_t)(ta >= 3329 ? ta - 3329 : ta);
    uint64_t xt = (uint64_t)(ab >> 16) * (uint64_t)(zeta & 0xffff);
    uint64_t tt = xt - ((xt * 1290167) >> 32) * 3329;
    uint32_t t = (uint32_t)(tt >= 3329 ? tt - 3329 : tt);
    uint32_t s = a + t;
    uint32_t sum = s >= 3329 ? s - 3329 : s;
    uint32_t d = a + 3329 - t;
    uint32_t diff = d >= 3329 ? d - 3329 : d;
    return (diff << 16) | sum;
}
