/* Cycles per dynamic instruction class on a reference SoC, for the software cost model
 * ([cost] in the target descriptors). Each region runs ITER iterations of 16 copies of one
 * instruction (inline assembly, so the compiler cannot change the count); region 1 is the
 * same loop with an empty body. benchmarks/bench_cost.py turns the regions into cycles per
 * instruction: (region - empty) / (16 * ITER). */
#include "aquas_rt.h"

#define ITER 64
#define R4(x) x x x x
#define R16(x) R4(R4(x))

static volatile uint32_t cell[8] __attribute__((aligned(32)));

#define MEASURE(id, body)                                                                  \
    do {                                                                                   \
        AQUAS_REGION_BEGIN(id);                                                            \
        for (int i = 0; i < ITER; i++)                                                     \
            __asm__ __volatile__(R16(body) : : "r"(cell), "r"(7) : "t0", "t1", "memory");  \
        AQUAS_REGION_END(id);                                                              \
    } while (0)

int main(void)
{
    cell[0] = 5;
    (void)cell[0]; /* the line is cached from here on (where there is a cache) */
    AQUAS_REGION_BEGIN(1);
    for (int i = 0; i < ITER; i++)
        __asm__ __volatile__("" : : "r"(cell), "r"(7) : "t0", "t1", "memory");
    AQUAS_REGION_END(1);
    MEASURE(2, "add t0, t0, %1\n\t");     /* alu */
    MEASURE(3, "mul t0, t0, %1\n\t");     /* mul */
    MEASURE(4, "div t0, t0, %1\n\t");     /* div */
    MEASURE(5, "lw t0, 0(%0)\n\t");       /* load (cache hit where cached) */
    MEASURE(6, "sw %1, 4(%0)\n\t");       /* store */
    MEASURE(7, "beq x0, x0, 1f\n1:\n\t"); /* taken branch */
    printf("done\n");
    return 0;
}
