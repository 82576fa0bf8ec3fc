// isax: ntt_bfly
// like: ntt_bfly
// style: Barrett in 32-bit remainders with if-statement subtracts, b extracted with a mask after the shift, result assembled with +
#include <stdint.h>

#define Q 3329u
#define BARRETT 1290167u

uint32_t kernel(uint32_t ab, uint32_t zeta)
{
    uint32_t a = ab & 0xffffu;
    uint32_t qa = (uint32_t)(((uint64_t)a * BARRETT) >> 32);
    a = a - qa * Q;
    if (a >= Q)
        a -= Q;
    uint32_t b = (ab >> 16) & 0xffffu;
    uint32_t x = (zeta & 0xffffu) * b;
    uint32_t qx = (uint32_t)(((uint64_t)x * BARRETT) >> 32);
    uint32_t t = x - qx * Q;
    if (t >= Q)
        t -= Q;
    uint32_t sum = a + t;
    if (sum >= Q)
        sum -= Q;
    uint32_t diff = a + Q - t;
    if (diff >= Q)
        diff -= Q;
    return diff * 65536u + sum;
}
