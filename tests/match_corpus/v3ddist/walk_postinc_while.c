// isax: v3ddist
// like: v3ddist
// style: while (n--) down-counter walking both point arrays and the output with post-increments inside the expressions (*d++ = ..., *p++ - *q++)
// realistic: yes
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const int32_t *q = b;
    int32_t *d = b + 48;
    uint32_t total = 0;
    unsigned n = 16;
    while (n--) {
        int32_t dx = *a++ - *q++;
        int32_t dy = *a++ - *q++;
        int32_t dz = *a++ - *q++;
        uint32_t dd = (uint32_t)(dx * dx + dy * dy + dz * dz);
        *d++ = (int32_t)dd;
        total += dd;
    }
    return total;
}
