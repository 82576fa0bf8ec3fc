#include <stdint.h>

#include "aquas_rt.h"
#include "kernels.h"

#define N 64

static uint32_t a[N], b[N], c[N];

int main(void)
{
    uint32_t seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        a[i] = (seed >> 8) % 3329;
        seed = seed * 1103515245u + 12345u;
        b[i] = (seed >> 8) % 3329;
    }
    AQUAS_REGION_BEGIN(1);
    for (int i = 0; i < N; i++)
        c[i] = mulmod(a[i], b[i]);
    AQUAS_REGION_END(1);
    AQUAS_REGION_BEGIN(2);
    for (int i = 0; i < N; i += 2) {
        uint32_t r = butterfly(c[i] | (c[i + 1] << 16), b[i]);
        c[i] = r & 0xffff;
        c[i + 1] = r >> 16;
    }
    AQUAS_REGION_END(2);
    uint32_t sum = 0;
    for (int i = 0; i < N; i++)
        sum = sum * 31u + c[i];
    printf("checksum %u\n", (unsigned)sum);
    return 0;
}
