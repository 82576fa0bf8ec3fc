/* LLM int8 case study: 4 tokens through 2 quantised MLP blocks (dense W1, bitmask-sparse
 * W2). Built for the host with -DHOST_REFERENCE, every layer is also evaluated with the
 * dense W2 by separate, straightforward code and the outputs are compared; the SoC build
 * prints the same checksum without spending its cycles on the reference. */
#include <stdint.h>

#include "aquas_rt.h"
#include "mlp.h"

#define TOKENS 4
#define LAYERS 2
#define SPARSE_BYTES (D_FF / SPARSE_BLOCK * (4 + SPARSE_BLOCK))

static mlp_weights layer[LAYERS];
static int8_t w2_dense[LAYERS][D_MODEL][D_FF];
static uint8_t w2_store[LAYERS][D_MODEL][SPARSE_BYTES] __attribute__((aligned(4)));
static int8_t tokens[TOKENS][D_MODEL], out[TOKENS][D_MODEL];
#ifdef HOST_REFERENCE
static int8_t ref[TOKENS][D_MODEL];
#endif

static uint32_t seed = 0x12345678u;

static uint32_t next(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

static int8_t small_weight(void)
{
    return (int8_t)((int)(next() % 61) - 30);
}

/* the offline export: dense row -> bitmask blocks */
static uint32_t encode_row(const int8_t *dense, uint8_t *dst)
{
    uint32_t n = 0;
    for (int b = 0; b < D_FF / SPARSE_BLOCK; b++) {
        uint32_t mask = 0;
        uint8_t *m = &dst[n];
        n += 4;
        int used = 0;
        for (int k = 0; k < SPARSE_BLOCK; k++) {
            int8_t v = dense[b * SPARSE_BLOCK + k];
            if (v != 0) {
                mask |= 1u << k;
                dst[n + used++] = (uint8_t)v;
            }
        }
        while (used & 3)
            dst[n + used++] = 0;
        n += used;
        m[0] = (uint8_t)mask;
        m[1] = (uint8_t)(mask >> 8);
        m[2] = (uint8_t)(mask >> 16);
        m[3] = (uint8_t)(mask >> 24);
    }
    return n;
}

static void make_layer(int l)
{
    mlp_weights *w = &layer[l];
    for (int o = 0; o < D_FF; o++) {
        for (int i = 0; i < D_MODEL; i++)
            w->w1[o][i] = small_weight();
        w->b1[o] = (int32_t)(next() % 2001) - 1000;
    }
    for (int o = 0; o < D_MODEL; o++) {
        for (int i = 0; i < D_FF; i++) /* about 70 % zeros, as after magnitude pruning */
            w2_dense[l][o][i] = (next() % 10 < 7) ? 0 : small_weight();
        w->w2[o].data = w2_store[l][o];
        w->w2[o].bytes = encode_row(w2_dense[l][o], w2_store[l][o]);
        w->b2[o] = (int32_t)(next() % 2001) - 1000;
    }
    w->mult1 = 1 << 14;
    w->shift1 = 22;
    w->mult2 = 3 << 13;
    w->shift2 = 22;
}

#ifdef HOST_REFERENCE
/* the same block with the dense W2: straightforward and separate from mlp.c */
static void reference(const mlp_weights *w, const int8_t (*w2)[D_FF], const int8_t *x, int8_t *y)
{
    int32_t h[D_FF];
    for (int o = 0; o < D_FF; o++) {
        int64_t acc = w->b1[o];
        for (int i = 0; i < D_MODEL; i++)
            acc += w->w1[o][i] * x[i];
        int64_t v = (acc * w->mult1 + (1 << (w->shift1 - 1))) >> w->shift1;
        h[o] = v < 0 ? 0 : v > 127 ? 127 : (int32_t)v;
    }
    for (int o = 0; o < D_MODEL; o++) {
        int64_t acc = w->b2[o];
        for (int i = 0; i < D_FF; i++)
            acc += w2[o][i] * h[i];
        int64_t v = x[o] + ((acc * w->mult2 + (1 << (w->shift2 - 1))) >> w->shift2);
        y[o] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
    }
}
#endif

int main(void)
{
    for (int l = 0; l < LAYERS; l++)
        make_layer(l);
    for (int t = 0; t < TOKENS; t++)
        for (int i = 0; i < D_MODEL; i++)
            tokens[t][i] = (int8_t)((int)(next() % 201) - 100);

    int bad = 0;
    uint32_t check = 0;
    for (int t = 0; t < TOKENS; t++) {
        int8_t x[D_MODEL], r[D_MODEL];
        for (int i = 0; i < D_MODEL; i++)
            x[i] = r[i] = tokens[t][i];
        (void)r;
        for (int l = 0; l < LAYERS; l++) {
            AQUAS_REGION_BEGIN(1);
            mlp_forward(&layer[l], x, out[t]);
            AQUAS_REGION_END(1);
#ifdef HOST_REFERENCE
            reference(&layer[l], w2_dense[l], r, ref[t]);
            for (int i = 0; i < D_MODEL; i++) {
                bad += out[t][i] != ref[t][i];
                r[i] = ref[t][i];
            }
#endif
            for (int i = 0; i < D_MODEL; i++)
                x[i] = out[t][i];
        }
        for (int i = 0; i < D_MODEL; i++)
            check = check * 33u + (uint8_t)out[t][i];
    }
    printf("llm mlp: %d tokens x %d layers, checksum %08x\n", TOKENS, LAYERS, (unsigned)check);
#ifdef HOST_REFERENCE
    printf("host reference: %d mismatches\n", bad);
#endif
    printf("token 0: %d %d %d %d\n", out[0][0], out[0][1], out[0][2], out[0][3]);
    return bad != 0;
}
