// isax: none
// like: vdot16
// n: 16
// style: while loop whose counter is also moved in the body: the element after a negative b is skipped
// realistic: yes
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    int i = 0;
    while (i < 16) {
        acc += a[i] * b[i];
        if (b[i] < 0)
            i++;
        i++;
    }
    return acc;
}
