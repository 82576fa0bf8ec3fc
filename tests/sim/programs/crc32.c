/* CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320): bitwise and table-driven. */
#include "aquas_rt.h"

static unsigned table[256];

static void make_table(void)
{
    for (unsigned i = 0; i < 256; i++) {
        unsigned c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
}

static unsigned crc32_bitwise(const unsigned char *p, unsigned n)
{
    unsigned c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
    }
    return ~c;
}

static unsigned crc32_table(const unsigned char *p, unsigned n)
{
    unsigned c = 0xFFFFFFFFu;
    while (n--)
        c = table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

static unsigned char buf[1024];

int main(void)
{
    const char *check = "123456789";
    int errors = 0;
    make_table();
    printf("table[1]=%08x table[128]=%08x table[255]=%08x\n", table[1], table[128], table[255]);

    unsigned a = crc32_bitwise((const unsigned char *)check, (unsigned)strlen(check));
    unsigned b = crc32_table((const unsigned char *)check, (unsigned)strlen(check));
    printf("crc32(\"%s\") bitwise=%08x table=%08x\n", check, a, b);
    if (a != 0xCBF43926u || b != 0xCBF43926u)
        errors++;

    unsigned seed = 12345;
    for (unsigned i = 0; i < sizeof buf; i++) {
        seed = seed * 1103515245u + 12345u;
        buf[i] = (unsigned char)(seed >> 16);
    }
    AQUAS_REGION_BEGIN(1);
    unsigned c1 = crc32_bitwise(buf, sizeof buf);
    AQUAS_REGION_END(1);
    AQUAS_REGION_BEGIN(2);
    unsigned c2 = crc32_table(buf, sizeof buf);
    AQUAS_REGION_END(2);
    printf("crc32(buf[1024]) bitwise=%08x table=%08x\n", c1, c2);
    if (c1 != c2)
        errors++;
    for (unsigned n = 1; n <= 64; n *= 2)
        printf("prefix %2u: %08x\n", n, crc32_table(buf, n));
    printf("errors=%d\n", errors);
    return errors;
}
