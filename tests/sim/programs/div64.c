/* 64-bit arithmetic through libgcc helpers (__udivdi3, __divdi3, __umoddi3, __moddi3)
 * and 64-bit multiplication. */
#include "aquas_rt.h"

static void show(const char *name, unsigned long long v)
{
    printf("%s=%08x%08x\n", name, (unsigned)(v >> 32), (unsigned)v);
}

int main(void)
{
    volatile unsigned long long a = 0xFEDCBA9876543210ull, b = 0x123456789ull, c = 7;
    volatile long long sa = -0x0123456789ABCDEFll, sb = 1000003;
    show("a/b", a / b);
    show("a%b", a % b);
    show("a/c", a / c);
    show("a%c", a % c);
    show("sa/sb", (unsigned long long)(sa / sb));
    show("sa%sb", (unsigned long long)(sa % sb));
    show("a*b", a * b);
    show("sa*sb", (unsigned long long)(sa * sb));
    show("a>>37", a >> 37);
    show("sa>>9", (unsigned long long)(sa >> 9));
    unsigned long long f = 1;
    for (unsigned i = 1; i <= 20; i++)
        f *= i;
    show("20!", f);
    unsigned long long q = f;
    int digits = 0;
    while (q) {
        q /= 10;
        digits++;
    }
    printf("digits(20!)=%d\n", digits);
    return 0;
}
