/* Kyber's number-theoretic transform with plain modular arithmetic (no Montgomery or
 * Barrett tricks): 7 Cooley-Tukey layers forward, 7 Gentleman-Sande layers inverse, and
 * the products of the 128 degree-1 residues mod (x^2 - zeta^(2 brv(i) + 1)) in between. */
#include <stdint.h>

#include "poly.h"

static uint16_t zetas[128];     /* zeta^brv7(k) */
static uint16_t zetas_inv[128]; /* their inverses */

static inline uint16_t fqmul(uint16_t a, uint16_t b)
{
    return (uint16_t)(((uint32_t)a * b) % KYBER_Q);
}

static uint16_t fqpow(uint16_t base, unsigned e)
{
    uint16_t r = 1;
    while (e) {
        if (e & 1)
            r = fqmul(r, base);
        base = fqmul(base, base);
        e >>= 1;
    }
    return r;
}

static unsigned brv7(unsigned k)
{
    unsigned r = 0;
    for (int i = 0; i < 7; i++)
        r |= ((k >> i) & 1) << (6 - i);
    return r;
}

void ntt_init(void)
{
    for (unsigned k = 0; k < 128; k++) {
        zetas[k] = fqpow(KYBER_ROOT, brv7(k));
        zetas_inv[k] = fqpow(zetas[k], KYBER_Q - 2);
    }
}

/* Forward NTT, in place: standard order in, bit-reversed order out. */
void poly_ntt(poly *p)
{
    unsigned k = 1;
    for (unsigned len = 128; len >= 2; len >>= 1) {
        for (unsigned start = 0; start < KYBER_N; start += 2 * len) {
            uint16_t zeta = zetas[k++];
            for (unsigned j = start; j < start + len; j++) {
                uint16_t t = fqmul(zeta, p->coeffs[j + len]);
                uint16_t a = p->coeffs[j];
                p->coeffs[j + len] = (uint16_t)((a + KYBER_Q - t) % KYBER_Q);
                p->coeffs[j] = (uint16_t)((a + t) % KYBER_Q);
            }
        }
    }
}

/* Inverse NTT, in place, including the final scaling by 1/128. */
void poly_invntt(poly *p)
{
    for (unsigned len = 2; len <= 128; len <<= 1) {
        unsigned k = 128 / len;
        for (unsigned start = 0; start < KYBER_N; start += 2 * len) {
            uint16_t zinv = zetas_inv[k++];
            for (unsigned j = start; j < start + len; j++) {
                uint16_t a = p->coeffs[j];
                uint16_t b = p->coeffs[j + len];
                p->coeffs[j] = (uint16_t)((a + b) % KYBER_Q);
                p->coeffs[j + len] = fqmul(zinv, (uint16_t)((a + KYBER_Q - b) % KYBER_Q));
            }
        }
    }
    for (unsigned j = 0; j < KYBER_N; j++)
        p->coeffs[j] = fqmul(p->coeffs[j], KYBER_NINV);
}

/* (a0 + a1 x)(b0 + b1 x) mod (x^2 - zeta) */
static void basemul(uint16_t r[2], const uint16_t a[2], const uint16_t b[2], uint16_t zeta)
{
    r[0] = (uint16_t)((fqmul(fqmul(a[1], b[1]), zeta) + fqmul(a[0], b[0])) % KYBER_Q);
    r[1] = (uint16_t)((fqmul(a[0], b[1]) + fqmul(a[1], b[0])) % KYBER_Q);
}

/* Pointwise product in the NTT domain. */
void poly_basemul(poly *r, const poly *a, const poly *b)
{
    for (unsigned i = 0; i < KYBER_N / 4; i++) {
        uint16_t zeta = zetas[64 + i];
        basemul(&r->coeffs[4 * i], &a->coeffs[4 * i], &b->coeffs[4 * i], zeta);
        basemul(&r->coeffs[4 * i + 2], &a->coeffs[4 * i + 2], &b->coeffs[4 * i + 2],
                (uint16_t)(KYBER_Q - zeta));
    }
}
