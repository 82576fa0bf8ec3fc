/* Calls every ISAX of examples/llm/llm.isax through the generated aquas_isax.h and checks
 * each result against a plain C reference.  Data the core wrote just before an ISAX reads
 * it (store drain) and output buffers the core read (cached) just before an ISAX writes
 * them (invalidation) exercise the header's cache maintenance. */
#include "aquas_rt.h"
#include "aquas_isax.h"

static int errors;

static void expect(const char *what, unsigned got, unsigned want)
{
    printf("%-24s %08x", what, got);
    if (got != want) {
        printf("  MISMATCH want %08x", want);
        errors++;
    }
    printf("\n");
}

static int dot4_ref(unsigned a, unsigned b)
{
    int s = 0;
    for (int k = 0; k < 4; k++)
        s += (int)(signed char)(a >> (8 * k)) * (int)(signed char)(b >> (8 * k));
    return s;
}

static short ab[32] __attribute__((aligned(4)));        /* A (4x4) then B (4x4), i16 */
static int cmat[16] __attribute__((aligned(4)));
static unsigned blk[9] __attribute__((aligned(4)));     /* mask + 32 packed int8 */
static signed char dense[32] __attribute__((aligned(4)));

int main(void)
{
    /* dot4_i8 / dot4_clr: state dacc */
    unsigned xs[4] = {0x01020304u, 0xFF80007Fu, 0x80808080u, 0x7F7F7F7Fu};
    unsigned ws[4] = {0x05060708u, 0x7F7F8081u, 0x80808080u, 0x81818181u};
    expect("dot4_clr(0) old", aquas_dot4_clr(0), 0);
    int acc = 0;
    for (int i = 0; i < 4; i++) {
        acc += dot4_ref(xs[i], ws[i]);
        expect("dot4_i8", aquas_dot4_i8(xs[i], ws[i]), (unsigned)acc);
    }
    expect("dot4_clr(100) old", aquas_dot4_clr(100), (unsigned)acc);
    expect("dot4_i8 after bias", aquas_dot4_i8(0x01010101u, 0x01010101u), 104);

    /* gemm4x4_i16: burst read A,B; burst write C; rd = trace */
    unsigned s = 99;
    for (int i = 0; i < 32; i++) {
        s = s * 1103515245u + 12345u;
        ab[i] = (short)(s >> 16);
    }
    unsigned pre = 0;
    for (int i = 0; i < 16; i++) {
        cmat[i] = -1;          /* the core caches C before the ISAX overwrites it */
        pre += (unsigned)cmat[i];
    }
    unsigned trace = aquas_gemm4x4_i16((unsigned)(uintptr_t)ab, (unsigned)(uintptr_t)cmat);
    int want_trace = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int c = 0;
            for (int k = 0; k < 4; k++)
                c += ab[4 * i + k] * ab[16 + 4 * k + j];
            if (cmat[4 * i + j] != c) {
                printf("C[%d][%d]=%d want %d\n", i, j, cmat[4 * i + j], c);
                errors++;
            }
            if (i == j)
                want_trace += c;
        }
    expect("gemm4x4_i16 trace", trace, (unsigned)want_trace);
    expect("C before (cached)", pre, 0xFFFFFFF0u);

    /* sparse_decomp_i8: single-shot load + burst read + burst write */
    blk[0] = 0x8000F00Du;
    for (int i = 1; i < 9; i++)
        blk[i] = 0x11111111u * (unsigned)i + 0x80706050u;
    for (int i = 0; i < 32; i++)
        dense[i] = 0x55;
    unsigned used = aquas_sparse_decomp_i8((unsigned)(uintptr_t)blk, (unsigned)(uintptr_t)dense);
    const signed char *packed = (const signed char *)&blk[1];
    int j = 0;
    for (int k = 0; k < 32; k++) {
        signed char want = (blk[0] >> k) & 1 ? packed[j++] : 0;
        if (dense[k] != want) {
            printf("dense[%d]=%d want %d\n", k, dense[k], want);
            errors++;
        }
    }
    expect("sparse_decomp_i8 used", used, (unsigned)j);
    printf("errors=%d\n", errors);
    return errors;
}
