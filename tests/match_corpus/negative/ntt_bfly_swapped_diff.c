// isax: none
// like: ntt_bfly
// style: difference computed as t - a instead of a - t (operand order matters outside a square)
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint32_t a = (ab & 0xffff) % 3329;
    uint32_t t = ((ab >> 16) * (zeta & 0xffff)) % 3329;
    uint32_t sum = (a + t) % 3329;
    uint32_t diff = (t + 3329 - a) % 3329;
    return (diff << 16) | sum;
}
