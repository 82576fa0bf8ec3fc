// isax: none
// like: ntt_bfly
// style: only the sum (a + zeta*b mod q) mod q is returned, in bits 15..0; bits 31..16 stay 0 instead of holding the difference
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint32_t a = ab & 0xffff;
    uint32_t t = ((ab >> 16) * (zeta & 0xffff)) % 3329;
    return (a % 3329 + t) % 3329;
}
