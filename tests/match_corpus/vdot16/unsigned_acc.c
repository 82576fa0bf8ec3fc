// isax: vdot16
// like: vdot16
// n: 16
// style: uint32_t accumulator of products cast to uint32_t (equal modulo 2^32), operands loaded into short temporaries, cast back at the end
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    uint32_t acc = 0;
    for (unsigned i = 0; i < 16u; ++i) {
        short x = a[i];
        short y = b[i];
        acc += (uint32_t)((int)x * (int)y);
    }
    return (int32_t)acc;
}
