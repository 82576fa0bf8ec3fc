// isax: vdot16
// like: vdot16
// n: 64
// style: 64-element dot product already blocked by hand into 16-element chunks with per-chunk partial sums
#include <stdint.h>

int32_t kernel(const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t total = 0;
    for (int blk = 0; blk < 64; blk += 16) {
        int32_t part = 0;
        for (int i = 0; i < 16; i++)
            part += a[blk + i] * b[blk + i];
        total += part;
    }
    return total;
}
