// isax: none
// like: ntt_bfly
// style: result packed as {sum, diff} (sum in the high half) instead of {diff, sum}
#include <stdint.h>

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint32_t a = (ab & 0xffff) % 3329;
    uint32_t t = ((ab >> 16) * (zeta & 0xffff)) % 3329;
    uint32_t sum = (a + t) % 3329;
    uint32_t diff = (a + 3329 - t) % 3329;
    return (sum << 16) | diff;
}
