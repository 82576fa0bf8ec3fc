// isax: vgemv4
// like: vgemv4
// style: row pointer advanced with row += 4, vector read via *(m + (4<<2) + c), product in a temporary, acc = prod + acc
#include <stdint.h>

void kernel(const int32_t *restrict m, int32_t *restrict y)
{
    const int32_t *row = m;
    for (int r = 0; r < 4; r++) {
        int32_t acc = 0;
        for (int c = 0; c < 4; c++) {
            int32_t prod = row[c] * *(m + (4 << 2) + c);
            acc = prod + acc;
        }
        *(y + r) = acc;
        row += 4;
    }
}
