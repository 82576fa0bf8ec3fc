/* aquas bare-metal runtime API (RV32IM, freestanding).
 *
 *   console : putchar, puts, printf (%d %i %u %x %X %s %c %p %ld %lu %lx %%, flags '-' '0',
 *             width, '*' width, precision for %s), vprintf, snprintf, vsnprintf
 *   memory  : memcpy memmove memset memcmp strlen strcmp strncmp strcpy strchr
 *   control : exit(code) -- also what returning from main does
 *   timing  : aquas_cycles() (32 bit), aquas_cycles64(),
 *             AQUAS_REGION_BEGIN(id) / AQUAS_REGION_END(id)
 *
 * Addresses come from aquas_platform.h, generated per platform by aquas.runtime.build.
 * tests/sim/programs/host/aquas_rt.h maps the same API onto the host's stdio.
 */
#ifndef AQUAS_RT_H
#define AQUAS_RT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "aquas_platform.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AQUAS_MMIO32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* ---- console and control ---------------------------------------------------------- */
int putchar(int c);
int puts(const char *s);
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
void exit(int code) __attribute__((noreturn));
void _exit(int code) __attribute__((noreturn));

/* ---- memory and strings ----------------------------------------------------------- */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strcpy(char *dst, const char *src);
char *strchr(const char *s, int c);

/* ---- timing ------------------------------------------------------------------------ */
/* Compiler barrier: keeps memory accesses from moving across a measurement point. */
#define AQUAS_BARRIER() __asm__ __volatile__("" ::: "memory")
/* A value in a register at this point: an empty asm that takes and gives it (site markers
 * of aquas run keep a measured region's arithmetic between them with it). */
#define AQUAS_PIN(x) __asm__ __volatile__("" : "+r"(x))

static inline uint32_t aquas_cycles(void)
{
    uint32_t lo;
#if AQUAS_HAS_RDCYCLE
    __asm__ __volatile__("rdcycle %0" : "=r"(lo));
#else
    lo = AQUAS_MMIO32(AQUAS_CYCLE_LO_ADDR);
#endif
    return lo;
}

static inline uint64_t aquas_cycles64(void)
{
    uint32_t hi, lo, hi2;
    do {
#if AQUAS_HAS_RDCYCLE
        __asm__ __volatile__("rdcycleh %0" : "=r"(hi));
        __asm__ __volatile__("rdcycle %0" : "=r"(lo));
        __asm__ __volatile__("rdcycleh %0" : "=r"(hi2));
#else
        hi = AQUAS_MMIO32(AQUAS_CYCLE_HI_ADDR);
        lo = AQUAS_MMIO32(AQUAS_CYCLE_LO_ADDR);
        hi2 = AQUAS_MMIO32(AQUAS_CYCLE_HI_ADDR);
#endif
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
}

/* Region markers: the simulator records the cycle at which the marker store reaches the
 * bus; SimResult.regions maps id -> cycles between BEGIN and END.  The barriers keep the
 * compiler from moving work across the markers. */
static inline void aquas_region_begin(uint32_t id)
{
    AQUAS_BARRIER();
    AQUAS_MMIO32(AQUAS_REGION_BEGIN_ADDR) = id;
    AQUAS_BARRIER();
}

static inline void aquas_region_end(uint32_t id)
{
    AQUAS_BARRIER();
    AQUAS_MMIO32(AQUAS_REGION_END_ADDR) = id;
    AQUAS_BARRIER();
}

#define AQUAS_REGION_BEGIN(id) aquas_region_begin((uint32_t)(id))
#define AQUAS_REGION_END(id) aquas_region_end((uint32_t)(id))

#ifdef __cplusplus
}
#endif

#endif /* AQUAS_RT_H */
