/* String and memory routines, and printf/snprintf formatting. */
#include "aquas_rt.h"

static char buf[256];
static char words[] = "the quick brown fox jumps over the lazy dog";

static void reverse(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n / 2; i++) {
        char t = s[i];
        s[i] = s[n - 1 - i];
        s[n - 1 - i] = t;
    }
}

static int sign(int v) { return v < 0 ? -1 : v > 0 ? 1 : 0; }

int main(void)
{
    int errors = 0;
    printf("strlen=%d\n", (int)strlen(words));
    int count = 0, in_word = 0, letters[26] = {0};
    for (const char *p = words; *p; p++) {
        if (*p == ' ') {
            in_word = 0;
        } else {
            if (!in_word)
                count++;
            in_word = 1;
            letters[*p - 'a']++;
        }
    }
    printf("words=%d\n", count);
    for (int i = 0; i < 26; i++)
        if (letters[i] != 1)
            printf("%c:%d ", 'a' + i, letters[i]);
    printf("\n");

    strcpy(buf, words);
    reverse(buf);
    printf("reversed: %s\n", buf);
    reverse(buf);
    printf("roundtrip equal: %d\n", strcmp(buf, words) == 0);
    printf("cmp: %d %d %d %d\n", sign(strcmp("abc", "abd")), sign(strcmp("abd", "abc")), sign(strcmp("ab", "abc")),
           sign(strcmp("", "")));
    printf("ncmp: %d %d\n", sign(strncmp("abcdef", "abcxyz", 3)), sign(strncmp("abcdef", "abcxyz", 4)));
    const char *f = strchr(words, 'f');
    printf("strchr f at %d, z at %d, none=%d\n", (int)(f - words), (int)(strchr(words, 'z') - words),
           strchr(words, 'Q') == NULL);

    memset(buf, 'x', 10);
    buf[10] = 0;
    printf("memset: %s\n", buf);
    memcpy(buf, "0123456789abcdef", 17);
    memmove(buf + 2, buf, 8);
    printf("memmove: %s\n", buf);
    printf("memcmp: %d %d\n", sign(memcmp("abc", "abd", 3)), memcmp("abc", "abd", 2));
    /* unaligned copies of every length/offset combination */
    static unsigned char src[64], dst[80];
    for (int i = 0; i < 64; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    unsigned sum = 0;
    for (int off = 0; off < 4; off++)
        for (int n = 0; n < 40; n += 3) {
            memset(dst, 0xEE, sizeof dst);
            memcpy(dst + off, src + (3 - off), (size_t)n);
            if (memcmp(dst + off, src + (3 - off), (size_t)n) != 0 || dst[off + n] != 0xEE)
                errors++;
            for (int i = 0; i < 80; i++)
                sum = sum * 31 + dst[i];
        }
    printf("copy checksum=%08x\n", sum);

    printf("[%5d][%-5d][%05d][%5s][%-5s][%c][%%][%x][%X][%08x]\n", 42, 42, -42, "ab", "ab", 'Q', 0xbeefu,
           0xbeefu, 0x1234u);
    printf("[%ld][%lu][%lx][%u][%d][%d]\n", -123456789L, 4000000000UL, 0xdeadbeefUL, 4294967295u,
           -2147483647 - 1, 0);
    printf("[%*d][%-*d][%.3s][%10.2s]\n", 6, 7, 6, 7, "abcdef", "xyz");
    volatile size_t cap = 12; /* truncates on purpose */
    int n = snprintf(buf, cap, "%s-%d-%x", "snprintf", 12345, 255u);
    printf("snprintf n=%d buf=%s\n", n, buf);
    printf("errors=%d\n", errors);
    return errors;
}
