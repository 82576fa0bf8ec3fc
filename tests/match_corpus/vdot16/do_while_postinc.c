// isax: vdot16
// like: vdot16
// n: 16
// style: do-while with a pre-decremented counter, operands read through post-incremented pointers
// realistic: yes
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t acc = 0;
    int n = 16;
    do {
        acc += (int32_t)*a++ * *b++;
    } while (--n);
    return acc;
}
