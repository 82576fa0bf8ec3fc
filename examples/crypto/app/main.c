/* Kyber polynomial multiplication in R_q = Z_3329[x]/(x^256 + 1) through the NTT.
 * Built for the host with -DHOST_REFERENCE, it also multiplies by the definition (schoolbook,
 * negacyclic) and counts the coefficients that differ; the SoC build prints the same
 * checksum without spending its cycles on the reference. */
#include <stdint.h>

#include "aquas_rt.h"
#include "poly.h"

#define TRIALS 2

static poly a, b, c;
#ifdef HOST_REFERENCE
static poly ref;
#endif

static uint32_t rng = 0x2545f491u;

static uint16_t uniform_q(void)
{
    uint32_t x;
    do {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        x = rng & 0xfff;
    } while (x >= KYBER_Q); /* rejection sampling, as Kyber's parse does */
    return (uint16_t)x;
}

#ifdef HOST_REFERENCE
/* c = a * b in Z_q[x]/(x^n + 1), the definition */
static void schoolbook(poly *r, const poly *x, const poly *y)
{
    static uint32_t acc[2 * KYBER_N];
    for (int i = 0; i < 2 * KYBER_N; i++)
        acc[i] = 0;
    /* 256 products below q^2 each: the sums stay below 2^32, reduce once at the end */
    for (int i = 0; i < KYBER_N; i++)
        for (int j = 0; j < KYBER_N; j++)
            acc[i + j] += (uint32_t)x->coeffs[i] * y->coeffs[j];
    for (int i = 0; i < KYBER_N; i++)
        r->coeffs[i] = (uint16_t)((acc[i] % KYBER_Q + KYBER_Q - acc[i + KYBER_N] % KYBER_Q) % KYBER_Q);
}
#endif

int main(void)
{
    uint32_t check = 0;
    int bad = 0;
    ntt_init();
    for (int trial = 0; trial < TRIALS; trial++) {
        for (int i = 0; i < KYBER_N; i++) {
            a.coeffs[i] = uniform_q();
            b.coeffs[i] = uniform_q();
        }
#ifdef HOST_REFERENCE
        schoolbook(&ref, &a, &b);
#endif

        AQUAS_REGION_BEGIN(1);
        poly_ntt(&a);
        poly_ntt(&b);
        AQUAS_REGION_END(1);
        AQUAS_REGION_BEGIN(2);
        poly_basemul(&c, &a, &b);
        AQUAS_REGION_END(2);
        AQUAS_REGION_BEGIN(3);
        poly_invntt(&c);
        AQUAS_REGION_END(3);

        for (int i = 0; i < KYBER_N; i++) {
#ifdef HOST_REFERENCE
            bad += c.coeffs[i] != ref.coeffs[i];
#endif
            check = check * 31u + c.coeffs[i];
        }
    }
    printf("kyber polymul: %d trials, checksum %08x\n", TRIALS, (unsigned)check);
#ifdef HOST_REFERENCE
    printf("host reference: %d wrong coefficients\n", bad);
#endif
    return bad != 0;
}
