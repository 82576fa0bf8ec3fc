/* Insertion sort of signed 32-bit and unsigned 16-bit arrays from an LCG. */
#include "aquas_rt.h"

#define N 200

static int a[N];
static unsigned short h[N];

static void isort_int(int *v, int n)
{
    for (int i = 1; i < n; i++) {
        int x = v[i], j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

static void isort_u16(unsigned short *v, int n)
{
    for (int i = 1; i < n; i++) {
        unsigned short x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

int main(void)
{
    unsigned s = 0x2545F491u;
    int errors = 0;
    for (int i = 0; i < N; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        a[i] = (int)s >> 8; /* negative and positive values */
        h[i] = (unsigned short)(s & 0xFFFF);
    }
    long sum_before = 0;
    for (int i = 0; i < N; i++)
        sum_before += a[i] >> 4;
    AQUAS_REGION_BEGIN(1);
    isort_int(a, N);
    AQUAS_REGION_END(1);
    isort_u16(h, N);
    long sum_after = 0;
    for (int i = 0; i < N; i++)
        sum_after += a[i] >> 4;
    for (int i = 1; i < N; i++) {
        if (a[i - 1] > a[i])
            errors++;
        if (h[i - 1] > h[i])
            errors++;
    }
    printf("int32 min=%d max=%d median=%d sum>>4 before=%ld after=%ld\n", a[0], a[N - 1], a[N / 2],
           sum_before, sum_after);
    for (int i = 0; i < N; i += 25)
        printf("a[%3d]=%11d  h[%3d]=%5u\n", i, a[i], i, (unsigned)h[i]);
    printf("errors=%d\n", errors);
    return errors;
}
