/* Host shim for the aquas runtime API: lets the test programs compile natively with
 * `gcc -O2 -I tests/sim/programs/host`, so their output can be compared byte for byte
 * with the RISC-V run.  Timing calls are no-ops (programs never print cycle counts). */
#ifndef AQUAS_RT_H
#define AQUAS_RT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AQUAS_HOST 1
#define AQUAS_BARRIER() __asm__ __volatile__("" ::: "memory")
/* A value in a register at this point: an empty asm that takes and gives it (site markers
 * of aquas run keep a measured region's arithmetic between them with it). */
#define AQUAS_PIN(x) __asm__ __volatile__("" : "+r"(x))

static inline uint32_t aquas_cycles(void) { return 0; }
static inline uint64_t aquas_cycles64(void) { return 0; }
#define AQUAS_REGION_BEGIN(id) ((void)(id))
#define AQUAS_REGION_END(id) ((void)(id))

#endif
