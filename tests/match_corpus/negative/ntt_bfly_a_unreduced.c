// isax: none
// like: ntt_bfly
// style: a is not reduced mod q before the butterfly, so sum/diff are wrong (non-canonical) whenever a >= q
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint32_t a = ab & 0xffff;
    uint32_t t = ((ab >> 16) * (zeta & 0xffff)) % 3329;
    uint32_t s = a + t;
    uint32_t sum = s >= 3329 ? s - 3329 : s;
    uint32_t d = a + 3329 - t;
    uint32_t diff = d >= 3329 ? d - 3329 : d;
    return (diff << 16) | sum;
}
