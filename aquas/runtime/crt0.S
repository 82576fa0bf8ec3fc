/* aquas bare-metal start-up code (RV32, ilp32).
 *
 * The simulator loads the whole image (text, rodata, data) at the RAM base and starts the
 * core there, so .data normally needs no copy; the copy loop runs only when the linker put
 * .data's load address elsewhere.  Then: clear .bss, call main(0, 0), write main's return
 * value to the exit device (exit()).  On VexRiscv the CFU port (custom-0 ISAXs) is
 * enabled first.  On cores with a machine trap vector (VexRiscv) a trap
 * prints its cause and exits with AQUAS_TRAP_EXIT_CODE.
 */
#include "aquas_platform.h"

#define AQUAS_TRAP_EXIT_CODE 254

    .section .text.init, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack_top
#if AQUAS_HAS_MTVEC
    la      t0, __aquas_trap_entry
    csrw    mtvec, t0
#endif
#ifdef AQUAS_CLEAR_MCOUNTINHIBIT
    /* CV32E40X: the cycle and instret counters are inhibited after reset */
    csrw    0x320, zero         /* mcountinhibit */
#endif
#ifdef AQUAS_CFU_ENABLE_CSR
    /* enable the custom-instruction port (VexRiscv CfuPlugin: bit 31 of CSR 0xBC0) */
    li      t0, 0x80000000
    csrs    AQUAS_CFU_ENABLE_CSR, t0
#endif
    /* copy .data from its load address if it differs from its run address */
    la      a0, __data_load
    la      a1, __data_start
    la      a2, __data_end
    beq     a0, a1, 2f
1:  bgeu    a1, a2, 2f
    lw      t0, 0(a0)
    sw      t0, 0(a1)
    addi    a0, a0, 4
    addi    a1, a1, 4
    j       1b
2:  /* clear .bss (word aligned by link.ld) */
    la      a0, __bss_start
    la      a1, __bss_end
3:  bgeu    a0, a1, 4f
    sw      zero, 0(a0)
    addi    a0, a0, 4
    j       3b
4:  li      a0, 0
    li      a1, 0
    call    main
    tail    exit                /* exit(main's return value) */
    .size _start, . - _start

    .section .text.exit, "ax", @progbits
    .globl exit
    .globl _exit
    .type exit, @function
    .type _exit, @function
exit:
_exit:
    li      t0, AQUAS_EXIT_ADDR
    sw      a0, 0(t0)
5:  j       5b
    .size exit, . - exit

#if AQUAS_HAS_MTVEC
    .section .text.trap, "ax", @progbits
    /* CV32E40X keeps mtvec[31:7] only: the handler must be 128-byte aligned */
    .balign 128
    .globl __aquas_trap_entry
__aquas_trap_entry:
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    la      sp, __stack_top
    call    __aquas_trap
    li      a0, AQUAS_TRAP_EXIT_CODE
    j       exit
#endif
