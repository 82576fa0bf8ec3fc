#include <stdint.h>

#include "mlp.h"

static int8_t clamp_i8(int32_t v)
{
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

static int32_t requant(int32_t acc, int32_t mult, int shift)
{
    int64_t p = (int64_t)acc * mult;
    return (int32_t)((p + ((int64_t)1 << (shift - 1))) >> shift);
}

/* int32 dot product of two int8 vectors */
static int32_t dot_i8(const int8_t *a, const int8_t *b, int n)
{
    int32_t acc = 0;
    for (int i = 0; i < n; i++)
        acc += (int32_t)a[i] * (int32_t)b[i];
    return acc;
}

/* One bitmask block to 32 dense weights; returns how many packed values it used. */
int sparse_expand(const uint8_t *restrict blk, int8_t *restrict dense)
{
    uint32_t mask = (uint32_t)blk[0] | (uint32_t)blk[1] << 8 | (uint32_t)blk[2] << 16 |
                    (uint32_t)blk[3] << 24;
    const int8_t *vals = (const int8_t *)(blk + 4);
    int used = 0;
    for (int k = 0; k < SPARSE_BLOCK; k++) {
        if (mask & (1u << k)) {
            dense[k] = vals[used];
            used++;
        } else {
            dense[k] = 0;
        }
    }
    return used;
}

void mlp_forward(const mlp_weights *w, const int8_t *x, int8_t *y)
{
    int8_t h[D_FF];
    int8_t row[D_FF];

    for (int o = 0; o < D_FF; o++) {
        int32_t acc = w->b1[o] + dot_i8(w->w1[o], x, D_MODEL);
        int32_t v = requant(acc, w->mult1, w->shift1);
        h[o] = clamp_i8(v < 0 ? 0 : v); /* ReLU */
    }
    for (int o = 0; o < D_MODEL; o++) {
        const uint8_t *p = w->w2[o].data;
        for (int blk = 0; blk < D_FF / SPARSE_BLOCK; blk++) {
            int used = sparse_expand(p, &row[blk * SPARSE_BLOCK]);
            p += 4 + ((used + 3) & ~3);
        }
        int32_t acc = w->b2[o] + dot_i8(row, h, D_FF);
        y[o] = clamp_i8(x[o] + requant(acc, w->mult2, w->shift2)); /* residual */
    }
}
