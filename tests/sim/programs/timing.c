/* Cycle counters and region markers: rdcycle (or the counter device), the memory-mapped
 * counter and the harness's region accounting must agree.  Prints raw cycle numbers, so
 * its output is checked by the test, not compared with a host run. */
#include "aquas_rt.h"

static volatile unsigned sink;

static void busy(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sink += i;
}

int main(void)
{
    uint32_t c0 = aquas_cycles();
    uint32_t m0 = AQUAS_MMIO32(AQUAS_CYCLE_LO_ADDR);
    AQUAS_REGION_BEGIN(7);
    busy(1000);
    AQUAS_REGION_END(7);
    uint32_t m1 = AQUAS_MMIO32(AQUAS_CYCLE_LO_ADDR);
    uint32_t c1 = aquas_cycles();
    for (int k = 0; k < 3; k++) {
        AQUAS_REGION_BEGIN(8);
        busy(100);
        AQUAS_REGION_END(8);
    }
    uint64_t w = aquas_cycles64();
    printf("csr_delta=%u mmio_delta=%u\n", (unsigned)(c1 - c0), (unsigned)(m1 - m0));
    printf("cycles64_hi=%u cycles64_lo_nonzero=%d\n", (unsigned)(w >> 32), (unsigned)w != 0);
    return 0;
}
