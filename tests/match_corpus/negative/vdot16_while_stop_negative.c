// isax: none
// like: vdot16
// n: 16
// style: while loop that stops at the first negative sample of a: the exit depends on the data
// realistic: yes
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    int i = 0;
    while (i < 16 && a[i] >= 0) {
        acc += a[i] * b[i];
        i++;
    }
    return acc;
}
