// isax: modmul_q
// like: modmul_q
// style: Barrett with operands narrowed by uint16_t casts, operands of the product swapped, split statements
#include <stdint.h>

uint32_t kernel(uint32_t a, uint32_t b)
{
    uint16_t lo_a = (uint16_t)a;
    uint16_t lo_b = (uint16_t)b;
    uint64_t x = lo_b;
    x = x * lo_a;
    uint64_t q_est = x * 1290167;
    q_est = q_est >> 32;
    uint64_t r = x - 3329 * q_est;
    if (r >= 3329) {
        r = r - 3329;
    }
    return (uint32_t)r;
}
