// isax: vdot16
// like: vdot16
// n: 16
// style: counter from 1 with i-1 and *(a + i - 1), operands swapped (b * a), acc = prod + acc
#include <stdint.h>

#define LEN 16

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    for (int i = 1; i <= LEN; i++) {
        int32_t prod = *(b + i - 1) * *(a + i - 1);
        acc = prod + acc;
    }
    return acc;
}
