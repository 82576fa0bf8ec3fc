/* An int8 quantised MLP block (the feed-forward half of a transformer layer): per token,
 * h = relu(W1 x + b1) with dense int8 W1, y = x + W2 h + b2 with W2 stored bitmask-sparse,
 * int32 accumulation, per-layer requantisation by a multiplier and shift. */
#ifndef LLM_MLP_H
#define LLM_MLP_H

#include <stdint.h>

#define D_MODEL 64
#define D_FF 128
#define SPARSE_BLOCK 32 /* dense weights per bitmask block */

/* A row of W2 in bitmask-sparse form: per block of 32 weights, a 32-bit mask (bit k set:
 * weight k is non-zero) followed by the non-zero int8 values in order, blocks back to back
 * (each block padded to a 4-byte boundary). */
typedef struct {
    const uint8_t *data;
    uint32_t bytes;
} sparse_row;

typedef struct {
    int8_t w1[D_FF][D_MODEL];
    int32_t b1[D_FF];
    sparse_row w2[D_MODEL]; /* D_MODEL rows of D_FF weights */
    int32_t b2[D_MODEL];
    int32_t mult1, mult2; /* requantisation: (acc * mult) >> shift */
    int shift1, shift2;
} mlp_weights;

void mlp_forward(const mlp_weights *w, const int8_t *x, int8_t *y);
int sparse_expand(const uint8_t *restrict blk, int8_t *restrict dense);

#endif
