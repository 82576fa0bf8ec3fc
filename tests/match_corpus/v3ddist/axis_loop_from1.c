// isax: v3ddist
// like: v3ddist
// style: point loop counting from 1 with i-1, inner loop over the three coordinates accumulating the distance
#include <stdint.h>

#define NPTS 16

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t total = 0;
    for (int i = 1; i <= NPTS; i++) {
        int32_t d = 0;
        for (int c = 0; c < 3; c++) {
            int32_t t = a[3 * (i - 1) + c] - b[3 * (i - 1) + c];
            d += t * t;
        }
        b[NPTS * 3 + i - 1] = d;
        total += d;
    }
    return total;
}
