// isax: v3ddist
// like: v3ddist
// style: squares computed in long long and truncated with an explicit cast (equal modulo 2^32), total as int with a final cast
#include <stdint.h>

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    int total = 0;
    int i = 0;
    for (; i < 16; ++i) {
        long long dx = (long long)a[i * 3] - b[i * 3];
        long long dy = (long long)a[i * 3 + 1] - b[i * 3 + 1];
        long long dz = (long long)a[i * 3 + 2] - b[i * 3 + 2];
        int d = (int)(dx * dx + dy * dy + dz * dz);
        b[i + 48] = d;
        total += d;
    }
    return (uint32_t)total;
}
