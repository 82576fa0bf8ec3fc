// isax: modmul_q
// like: modmul_q
// style: % in 64-bit (unsigned long long) with the mask written as 65535, result cast back
#include <stdint.h>

#define Q 3329ULL

uint32_t kernel(uint32_t a, uint32_t b)
{
    unsigned long long x = (unsigned long long)(a & 65535u);
    unsigned long long y = (unsigned long long)(b & 65535u);
    unsigned long long r = (y * x) % Q;
    return (uint32_t)r;
}
