/* Register-only ISAXs of examples/crypto/kyber.isax against a C reference. */
#include "aquas_rt.h"
#include "aquas_isax.h"

#define Q 3329

int main(void)
{
    int errors = 0;
    unsigned s = 2024, sum = 0;
    for (int i = 0; i < 64; i++) {
        s = s * 1664525u + 1013904223u;
        unsigned a = s, b = s * 2654435761u;
        unsigned r = aquas_modmul_q(a, b);
        unsigned want = (unsigned)(((unsigned long long)(a & 0xFFFF) * (b & 0xFFFF)) % Q);
        if (r != want) {
            printf("modmul_q(%08x, %08x)=%u want %u\n", a, b, r, want);
            errors++;
        }
        unsigned x = aquas_ntt_bfly(a, b);
        unsigned av = (a & 0xFFFF) % Q, t = ((a >> 16) * (b & 0xFFFF)) % Q;
        unsigned wb = ((av + Q - t) % Q) << 16 | (av + t) % Q;
        if (x != wb) {
            printf("ntt_bfly(%08x, %08x)=%08x want %08x\n", a, b, x, wb);
            errors++;
        }
        sum += r + x;
    }
    printf("sum=%08x errors=%d\n", sum, errors);
    return errors;
}
