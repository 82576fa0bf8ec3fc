/* aquas printf: %d %i %u %x %X %o %s %c %p %% with the 'l' (and 'z') length modifier (long
 * and size_t are 32 bits on ilp32), flags '-' and '0', a width (digits or '*') and a
 * precision for %s.  No floating point, no 'll'. */
#include "aquas_rt.h"

struct sink {
    int console;  /* nonzero: write to the console, else to buf */
    char *buf;
    size_t size;  /* capacity of buf including the terminating NUL */
    size_t count; /* characters produced so far */
};

static void emit(struct sink *s, char c)
{
    if (s->console)
        putchar(c);
    else if (s->count + 1 < s->size)
        s->buf[s->count] = c;
    s->count++;
}

static void emit_padded(struct sink *s, const char *str, size_t len, int width, int left,
                        char pad)
{
    int fill = width > (int)len ? width - (int)len : 0;
    if (!left) {
        /* zero padding goes after a sign */
        if (pad == '0' && len && *str == '-') {
            emit(s, '-');
            str++;
            len--;
        }
        while (fill--)
            emit(s, pad);
    }
    while (len--)
        emit(s, *str++);
    if (left)
        while (fill--)
            emit(s, ' ');
}

static int format(struct sink *s, const char *fmt, va_list ap)
{
    char tmp[12];
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            emit(s, *fmt);
            continue;
        }
        fmt++;
        int left = 0;
        char pad = ' ';
        for (;; fmt++) {
            if (*fmt == '-')
                left = 1;
            else if (*fmt == '0')
                pad = '0';
            else
                break;
        }
        int width = 0;
        if (*fmt == '*') {
            width = va_arg(ap, int);
            if (width < 0) {
                left = 1;
                width = -width;
            }
            fmt++;
        } else {
            while (*fmt >= '0' && *fmt <= '9')
                width = width * 10 + (*fmt++ - '0');
        }
        int prec = -1;
        if (*fmt == '.') {
            fmt++;
            prec = 0;
            if (*fmt == '*') {
                prec = va_arg(ap, int);
                fmt++;
            } else {
                while (*fmt >= '0' && *fmt <= '9')
                    prec = prec * 10 + (*fmt++ - '0');
            }
        }
        while (*fmt == 'l' || *fmt == 'z' || *fmt == 'h')
            fmt++;
        if (left)
            pad = ' ';
        char c = *fmt;
        switch (c) {
        case 'd':
        case 'i':
        case 'u':
        case 'x':
        case 'X':
        case 'o':
        case 'p': {
            uint32_t v = va_arg(ap, uint32_t);
            int neg = 0;
            unsigned base = (c == 'x' || c == 'X' || c == 'p') ? 16 : c == 'o' ? 8 : 10;
            if ((c == 'd' || c == 'i') && (int32_t)v < 0) {
                neg = 1;
                v = -v;
            }
            const char *digits = c == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
            char *p = tmp + sizeof tmp;
            do {
                *--p = digits[v % base];
                v /= base;
            } while (v);
            if (c == 'p') {
                *--p = 'x';
                *--p = '0';
            }
            if (neg)
                *--p = '-';
            emit_padded(s, p, (size_t)(tmp + sizeof tmp - p), width, left, pad);
            break;
        }
        case 's': {
            const char *str = va_arg(ap, const char *);
            if (!str)
                str = "(null)";
            size_t len = 0;
            while (str[len] && (prec < 0 || (int)len < prec))
                len++;
            emit_padded(s, str, len, width, left, ' ');
            break;
        }
        case 'c':
            tmp[0] = (char)va_arg(ap, int);
            emit_padded(s, tmp, 1, width, left, ' ');
            break;
        case '%':
            emit(s, '%');
            break;
        case '\0':
            return (int)s->count;
        default: /* unknown conversion: print it verbatim */
            emit(s, '%');
            emit(s, c);
            break;
        }
    }
    return (int)s->count;
}

int vprintf(const char *fmt, va_list ap)
{
    struct sink s = {1, NULL, 0, 0};
    return format(&s, fmt, ap);
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct sink s = {0, buf, size, 0};
    int n = format(&s, fmt, ap);
    if (size)
        buf[s.count < size ? s.count : size - 1] = '\0';
    return n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
