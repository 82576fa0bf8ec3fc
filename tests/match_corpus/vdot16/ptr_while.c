// isax: vdot16
// like: vdot16
// n: 16
// style: while loop with walking pointers (pa++, pb++) and a down-counter
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    const int16_t *pa = a;
    const int16_t *pb = b;
    int32_t acc = 0;
    int n = 16;
    while (n != 0) {
        acc += *pa * *pb;
        pa++;
        pb++;
        n--;
    }
    return acc;
}
