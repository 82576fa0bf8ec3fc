#include <stdint.h>

uint32_t mulmod(uint32_t a, uint32_t b);
uint32_t butterfly(uint32_t ab, uint32_t zeta);
