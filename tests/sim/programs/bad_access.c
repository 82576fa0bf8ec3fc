/* Accesses to unmapped addresses, for tests/sim/test_bad_access.py. CASE selects one; the
   SoC must end the run with bad_access at it, so "after" is never printed. RAM_BASE and
   RAM_SIZE are passed by the test (from the platform file). The instruction under test
   carries the global label bad_insn, so the test can find its pc. */
#include "aquas_rt.h"

static volatile unsigned x = 0x1234;
static unsigned buf[16];

int main(void)
{
    const unsigned end = (unsigned)RAM_BASE + (unsigned)RAM_SIZE;
    unsigned v = 0;
    printf("before\n");
#if CASE == 1 /* core store one RAM size past x: used to alias into RAM and overwrite x */
    __asm__ volatile(".globl bad_insn\nbad_insn: sw %0, 0(%1)"
                     : : "r"(0xdeadu), "r"((unsigned)&x + (unsigned)RAM_SIZE) : "memory");
#elif CASE == 2 /* core load from an I/O address where no device is */
    __asm__ volatile(".globl bad_insn\nbad_insn: lw %0, 0(%1)"
                     : "=r"(v) : "r"(0xF0000040u) : "memory");
#elif CASE == 3 /* core jump to the end of RAM: the instruction fetch is unmapped */
    ((void (*)(void))end)();
#elif CASE == 4 /* ISAX unit single-word read from 0x90000000 (used to return RAM[0]) */
    __asm__ volatile(".globl bad_insn\nbad_insn: .insn r 0x0B, 0, 2, %0, %1, x0"
                     : "=r"(v) : "r"(0x90000000u) : "memory");
#elif CASE == 5 /* ISAX unit 16-word burst read whose second half lies past the end of RAM */
    __asm__ volatile(".globl bad_insn\nbad_insn: .insn r 0x0B, 0, 1, %0, %1, %2"
                     : "=r"(v) : "r"(end - 32u), "r"(buf) : "memory");
#elif CASE == 6 /* ISAX unit 16-word burst write that runs 12 words past the end of RAM */
    __asm__ volatile(".globl bad_insn\nbad_insn: .insn r 0x0B, 0, 1, %0, %1, %2"
                     : "=r"(v) : "r"(buf), "r"(end - 16u) : "memory");
#elif CASE == 7 /* mapped: the last RAM word, read by the core and by the unit, and a unit
                   burst that ends exactly at the end of RAM */
    unsigned last = *(volatile unsigned *)(end - 4u), w;
    __asm__ volatile(".insn r 0x0B, 0, 1, %0, %1, %2" : "=r"(v) : "r"(end - 64u), "r"(buf) : "memory");
    __asm__ volatile(".insn r 0x0B, 0, 2, %0, %1, x0" : "=r"(w) : "r"(end - 4u) : "memory");
    v = (w == last);
#endif
    printf("after %x %x\n", x, v);
    return 0;
}
