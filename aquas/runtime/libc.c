/* aquas freestanding libc subset: memory, strings, console, trap report.
 * Compiled with -fno-tree-loop-distribute-patterns so GCC cannot turn these loops back
 * into calls to themselves. */
#include "aquas_rt.h"

void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if ((((uintptr_t)d | (uintptr_t)s) & 3) == 0) {
        uint32_t *dw = (uint32_t *)d;
        const uint32_t *sw = (const uint32_t *)s;
        for (; n >= 4; n -= 4)
            *dw++ = *sw++;
        d = (unsigned char *)dw;
        s = (const unsigned char *)sw;
    }
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d == s || n == 0)
        return dst;
    if (d < s || d >= s + n)
        return memcpy(dst, src, n);
    while (n--)
        d[n] = s[n];
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    unsigned char b = (unsigned char)c;
    if (((uintptr_t)d & 3) == 0) {
        uint32_t w = 0x01010101u * b;
        uint32_t *dw = (uint32_t *)d;
        for (; n >= 4; n -= 4)
            *dw++ = w;
        d = (unsigned char *)dw;
    }
    while (n--)
        *d++ = b;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

size_t strlen(const char *s)
{
    const char *p = s;
    while (*p)
        p++;
    return (size_t)(p - s);
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b || !*a)
            return (unsigned char)*a - (unsigned char)*b;
    }
    return 0;
}

char *strcpy(char *dst, const char *src)
{
    char *d = dst;
    while ((*d++ = *src++))
        ;
    return dst;
}

char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (!*s)
            return NULL;
    }
}

int putchar(int c)
{
    AQUAS_MMIO32(AQUAS_CONSOLE_ADDR) = (uint32_t)(unsigned char)c;
    return (unsigned char)c;
}

int puts(const char *s)
{
    while (*s)
        putchar(*s++);
    putchar('\n');
    return 0;
}

#if AQUAS_HAS_MTVEC
/* Called by crt0's trap entry; kept free of printf so programs that never print stay small. */
static void trap_field(const char *name, uint32_t v)
{
    while (*name)
        putchar(*name++);
    for (int sh = 28; sh >= 0; sh -= 4)
        putchar("0123456789abcdef"[(v >> sh) & 15]);
}

void __aquas_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval)
{
    trap_field("\n*** TRAP mcause=", mcause);
    trap_field(" mepc=", mepc);
    trap_field(" mtval=", mtval);
    putchar('\n');
}
#endif
