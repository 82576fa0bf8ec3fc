// isax: none
// like: v3ddist
// style: extra store into the operand array b (the reference point is moved onto a) inside the loop; the ISAX leaves b[0..47] intact
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t dx = a[3 * i] - b[3 * i];
        int32_t dy = a[3 * i + 1] - b[3 * i + 1];
        int32_t dz = a[3 * i + 2] - b[3 * i + 2];
        int32_t d = dx * dx + dy * dy + dz * dz;
        b[48 + i] = d;
        b[3 * i] = a[3 * i];
        total += d;
    }
    return total;
}
