/* Coherence between the core and an ISAX's memory traffic, through the generated
 * aquas_isax.h of memtest.isax (the test ISAX unit tests/sim/fixtures/aquastest_isax_unit.v).
 *   - data the core stores immediately before an ISAX reads it (posted-store drain);
 *   - lines the core has cached immediately before an ISAX overwrites them (invalidation or
 *     eviction of the written lines), also when the written range straddles three lines.
 * Prints "errors=N" (exit code N) and, for measurement, the mean cycles per call of a
 * register-only, a memory-reading and a memory-writing ISAX (regions 1, 2, 3), a cached
 * load (4) and 32 writing ISAXs without invalidation followed by one flush (5). */
#include "aquas_rt.h"
#include "aquas_isax.h"

#define ADDR(p) ((uint32_t)(uintptr_t)(p))

static volatile unsigned src[16] __attribute__((aligned(64)));
static volatile unsigned dst[16] __attribute__((aligned(64)));
static volatile unsigned word[4] __attribute__((aligned(16)));
static volatile unsigned wide[32] __attribute__((aligned(64)));
static int errors;

static void check(const char *what, int i, unsigned got, unsigned want)
{
    if (got != want) {
        if (errors < 10)
            printf("%s[%d]: got %08x want %08x\n", what, i, got, want);
        errors++;
    }
}

int main(void)
{
    for (unsigned i = 0; i < 8; i++)
        check("add", (int)i, aquas_add(0x1000u * i, i + 7), 0x1000u * i + i + 7);

    /* store, then the ISAX reads it right away */
    for (unsigned i = 0; i < 16; i++) {
        word[i & 3] = 0xC0DE0000u + i;
        check("load-after-store", (int)i, aquas_load(ADDR(&word[i & 3])), 0xC0DE0000u + i);
    }

    /* the ISAX writes a word the core has cached */
    for (unsigned i = 0; i < 16; i++) {
        word[1] = 0x11110000u + i;
        unsigned before = word[1]; /* now cached */
        aquas_store(0x5EED0000u + i, ADDR(&word[1]));
        check("cached-before", (int)i, before, 0x11110000u + i);
        check("store-then-load", (int)i, word[1], 0x5EED0000u + i);
    }

    /* burst copy: fresh source stores, destination lines cached */
    for (unsigned round = 0; round < 4; round++) {
        unsigned sum = 0;
        for (unsigned k = 0; k < 16; k++)
            sum += dst[k]; /* cache the destination */
        for (unsigned k = 0; k < 16; k++)
            src[k] = 0x01010101u * k ^ (round << 24) ^ 0x5A5u;
        (void)sum;
        check("copy16 rd", (int)round, aquas_copy16(ADDR(src), ADDR(dst)), 0);
        for (unsigned k = 0; k < 16; k++)
            check("copy16", (int)(round * 16 + k), dst[k], 0x01010101u * k ^ (round << 24) ^ 0x5A5u);
    }

    /* burst copy to a destination 20 bytes into a line: 64 bytes over three cached lines */
    for (unsigned round = 0; round < 4; round++) {
        unsigned sum = 0;
        for (unsigned k = 0; k < 32; k++)
            sum += wide[k]; /* cache all four lines */
        for (unsigned k = 0; k < 16; k++)
            src[k] = 0x02020202u * k ^ (round << 20) ^ 0xA5Au;
        (void)sum;
        aquas_copy16(ADDR(src), ADDR(&wide[5]));
        for (unsigned k = 0; k < 16; k++)
            check("copy16-straddle", (int)(round * 16 + k), wide[5 + k],
                  0x02020202u * k ^ (round << 20) ^ 0xA5Au);
        for (unsigned k = 0; k < 32; k++)
            if (k < 5 || k >= 21)
                check("copy16-neighbour", (int)k, wide[k], round ? 0x77u : 0u);
        for (unsigned k = 0; k < 32; k++)
            if (k < 5 || k >= 21)
                wide[k] = 0x77u; /* neighbours the ISAX must not disturb, via the cache */
    }

    /* cost per call (not compared with anything: printed for the report) */
    enum { N = 32 };
    unsigned acc = 0;
    AQUAS_REGION_BEGIN(1);
    for (unsigned i = 0; i < N; i++)
        acc += aquas_add(acc, i);
    AQUAS_REGION_END(1);
    AQUAS_REGION_BEGIN(2);
    for (unsigned i = 0; i < N; i++)
        acc += aquas_load(ADDR(&word[2]));
    AQUAS_REGION_END(2);
    AQUAS_REGION_BEGIN(3);
    for (unsigned i = 0; i < N; i++)
        aquas_store(i, ADDR(&word[3]));
    AQUAS_REGION_END(3);
    AQUAS_REGION_BEGIN(4);
    for (unsigned i = 0; i < N; i++)
        acc += word[2] + i; /* baseline loop: a cached load */
    AQUAS_REGION_END(4);
    /* many writing ISAXs, one invalidation at the end */
    for (unsigned k = 0; k < 16; k++)
        acc += dst[k]; /* cached */
    AQUAS_REGION_BEGIN(5);
    for (unsigned i = 0; i < N; i++)
        aquas_store_noflush(0xB0000000u + i, ADDR(&dst[i & 15]));
    aquas_dcache_flush();
    AQUAS_REGION_END(5);
    for (unsigned k = 0; k < 16; k++)
        check("noflush+flush", (int)k, dst[k], 0xB0000010u + k);
    printf("acc=%08x\n", acc);
    printf("errors=%d\n", errors);
    return errors;
}
