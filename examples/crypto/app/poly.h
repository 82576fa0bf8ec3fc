/* Polynomials of Kyber's ring R_q = Z_q[x]/(x^256 + 1), q = 3329, and their NTT.
 * Coefficients are kept canonical, in [0, q), as uint16_t. */
#ifndef KYBER_POLY_H
#define KYBER_POLY_H

#include <stdint.h>

#define KYBER_N 256
#define KYBER_Q 3329
#define KYBER_ROOT 17   /* a primitive 256-th root of unity mod q */
#define KYBER_NINV 3303 /* 128^-1 mod q: the inverse NTT has 7 layers */

typedef struct {
    uint16_t coeffs[KYBER_N];
} poly;

void ntt_init(void);
void poly_ntt(poly *p);
void poly_invntt(poly *p);
void poly_basemul(poly *r, const poly *a, const poly *b);

#endif
