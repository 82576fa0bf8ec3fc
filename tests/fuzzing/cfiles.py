"""Random C applications for ``aquas match``: realistic kernels and hostile mutations.

The kernels are the shapes the example ISAXs compute (dot products, modular multiply,
3-D distances, small matrix products, arg-max), written the many ways people write them:
macros for sizes, helper functions, structs, 2-D arrays, outer loops around the kernel,
GNU C attributes. Mutations break them: syntax errors, huge arrays and trip counts, deep
expressions, recursion, non-UTF-8 bytes, loops that never end.
"""

from __future__ import annotations

import random

from fuzzing.cases import Case, case_rng
from fuzzing.specs import mutate_tokens

INTS = ("int8_t", "int16_t", "int32_t", "uint8_t", "uint16_t", "uint32_t", "int", "short")
ATTRS = (
    "",
    "static ",
    "static inline ",
    "__attribute__((noinline)) ",
    "__attribute__((always_inline)) static inline ",
    "__attribute__((aligned(16))) ",
)


def _acc_loop(r: random.Random, n: str, a: str, b: str, acc: str, elem: str) -> list[str]:
    """A dot-product loop over ``n`` elements in one of several styles."""
    i = r.choice(["i", "k", "j"])
    style = r.randrange(6)
    if style == 0:
        return [
            f"    for (int {i} = 0; {i} < {n}; {i}++)",
            f"        {acc} += {a}[{i}] * {b}[{i}];",
        ]
    if style == 1:
        return [
            f"    for (int {i} = 0; {i} < {n}; {i} += 2) {{",
            f"        {acc} += {a}[{i}] * {b}[{i}];",
            f"        {acc} += {a}[{i} + 1] * {b}[{i} + 1];",
            "    }",
        ]
    if style == 2:
        return [
            f"    int {i} = 0;",
            f"    while ({i} < {n}) {{",
            f"        {acc} += ({elem})({a}[{i}] * {b}[{i}]);",
            f"        {i}++;",
            "    }",
        ]
    if style == 3:
        return [
            f"    const {elem} *pa = {a};",
            f"    for (int {i} = 0; {i} < {n}; {i}++) {{",
            f"        {acc} += pa[{i}] * *({b} + {i});",
            "    }",
        ]
    if style == 4:
        return [
            f"    for (unsigned {i} = 0; {i} <= {n} - 1; ++{i}) {{",
            f"        int32_t p = {a}[{i}] * {b}[{i}];",
            f"        {acc} = {acc} + p;",
            "    }",
        ]
    return [
        f"    for (int {i} = {n} - 1; {i} >= 0; {i}--)",
        f"        {acc} += {a}[{i}] * {b}[{i}];",
    ]


C_SOUP = (
    "int unsigned short char long void const static inline restrict struct for while do if "
    "else return break goto sizeof __attribute__ # #define #pragma ( ) [ ] { } ; , + - * / % "
    "<< >> < <= == != && || ! ~ ? : = += ++ -- -> . 0 1 0x7fffffff 4294967296 'a' \"s\""
).split()


def kernel(r: random.Random, name: str) -> list[str]:
    """One function in the C subset (or just outside it: structs, calls, 2-D arrays)."""
    pick = r.randrange(10)
    # GNU attributes are common in real code but outside pycparser's C99: keep them to a
    # fifth of the kernels so the rest reach the matcher
    attr = r.choice(ATTRS[2:]) if r.random() < 0.2 else r.choice(ATTRS[:3])
    n = r.choice(["16", "N", "LEN", "n", "32", "8", "4"])
    elem = r.choice(["int16_t", "int8_t", "int32_t", "uint16_t", "short"])
    if pick <= 2:  # dot product
        head = f"{attr}int32_t {name}(const {elem} *restrict a, const {elem} *restrict b, int n)"
        body = ["    int32_t acc = 0;", *_acc_loop(r, n, "a", "b", "acc", elem), "    return acc;"]
        return [head, "{", *body, "}"]
    if pick == 3:  # modular multiply, Barrett or %
        q = r.choice(["3329", "Q", "3328", "7681"])
        ty = r.choice(["uint32_t", "int32_t", "uint16_t"])
        wide = r.choice(["uint64_t", "int64_t", "uint32_t"])
        if r.random() < 0.5:
            body = [f"    return ({ty})((({wide})a * b) % {q});"]
        else:
            body = [
                f"    {wide} t = ({wide})a * b;",
                f"    {wide} m = (t * 5039) >> 24;",
                f"    {wide} rr = t - m * {q};",
                f"    if (rr >= {q}) rr -= {q};",
                f"    return ({ty})rr;",
            ]
        return [f"{attr}{ty} {name}({ty} a, {ty} b)", "{", *body, "}"]
    if pick == 4:  # squared 3-D distances, an outer loop over points
        return [
            f"{attr}uint32_t {name}(const int32_t *pa, const int32_t *pb, uint32_t *dist)",
            "{",
            "    uint32_t total = 0;",
            f"    for (int i = 0; i < {r.choice(['16', 'NPTS', '8'])}; i++) {{",
            "        int32_t dx = pa[3 * i] - pb[3 * i];",
            "        int32_t dy = pa[3 * i + 1] - pb[3 * i + 1];",
            "        int32_t dz = pa[3 * i + 2] - pb[3 * i + 2];",
            "        uint32_t d = (uint32_t)(dx * dx + dy * dy + dz * dz);",
            "        dist[i] = d;",
            "        total += d;",
            "    }",
            "    return total;",
            "}",
        ]
    if pick == 5:  # 4x4 matrix product, flat or 2-D
        if r.random() < 0.5:
            return [
                f"{attr}void {name}(const int16_t *a, const int16_t *b, int32_t *c)",
                "{",
                "    for (int i = 0; i < 4; i++)",
                "        for (int j = 0; j < 4; j++) {",
                "            int32_t s = 0;",
                "            for (int k = 0; k < 4; k++)",
                "                s += a[4 * i + k] * b[4 * k + j];",
                "            c[4 * i + j] = s;",
                "        }",
                "}",
            ]
        return [
            f"{attr}void {name}(const int16_t a[4][4], const int16_t b[4][4], int32_t c[4][4])",
            "{",
            "    for (int i = 0; i < 4; i++)",
            "        for (int j = 0; j < 4; j++) {",
            "            int32_t s = 0;",
            "            for (int k = 0; k < 4; k++) s += a[i][k] * b[k][j];",
            "            c[i][j] = s;",
            "        }",
            "}",
        ]
    if pick == 6:  # struct of arrays
        return [
            "struct vec { int16_t x[16]; int16_t y[16]; };",
            f"{attr}int32_t {name}(const struct vec *v)",
            "{",
            "    int32_t acc = 0;",
            "    for (int i = 0; i < 16; i++) acc += v->x[i] * v->y[i];",
            "    return acc;",
            "}",
        ]
    if pick == 7:  # a helper called from the kernel
        return [
            f"static inline int32_t {name}_mac(int32_t acc, int16_t x, int16_t y) {{ return acc + x * y; }}",
            f"{attr}int32_t {name}(const int16_t *a, const int16_t *b)",
            "{",
            "    int32_t acc = 0;",
            f"    for (int i = 0; i < 16; i++) acc = {name}_mac(acc, a[i], b[i]);",
            "    return acc;",
            "}",
        ]
    if pick == 8:  # arg-max
        return [
            f"{attr}uint32_t {name}(const int32_t *d, int n)",
            "{",
            "    int32_t best = d[0];",
            "    uint32_t arg = 0;",
            f"    for (int i = 1; i < {n}; i++) {{",
            "        if (d[i] > best) { best = d[i]; arg = (uint32_t)i; }",
            "    }",
            "    return arg;",
            "}",
        ]
    # outer loop around dot products of 16-element chunks
    return [
        f"{attr}void {name}(const int16_t *a, const int16_t *b, int32_t *out, int rows)",
        "{",
        "    for (int r = 0; r < rows; r++) {",
        "        int32_t acc = 0;",
        "        for (int i = 0; i < 16; i++)",
        "            acc += a[16 * r + i] * b[i];",
        "        out[r] = acc;",
        "    }",
        "}",
    ]


def program(r: random.Random) -> str:
    lines = ["// generated application", "#include <stdint.h>", "#include <stddef.h>"]
    for m, v in (("N", r.choice([16, 32, 64])), ("LEN", 16), ("Q", 3329), ("NPTS", 16)):
        if r.random() < 0.9:
            lines.append(f"#define {m} {v}")
    if r.random() < 0.3:
        lines.append(f"static const int16_t table[{r.choice([4, 16])}] = {{1, -2, 3}};")
    names = [f"kern{k}" for k in range(r.randint(1, 4))]
    for name in names:
        if r.random() < 0.3:
            lines.append("#pragma aquas match")
        lines += kernel(r, name)
        lines.append("")
    return "\n".join(lines) + "\n"


def hostile(r: random.Random) -> tuple[str, bytes]:
    pick = r.randrange(16)
    pre = "#include <stdint.h>\n"
    if pick == 0:
        size = r.choice(["1 << 30", "1073741824", "0x7fffffff", "4294967295u"])
        src = (
            pre + f"static int32_t big[{size}];\n"
            "int32_t f(int n) {\n    int32_t s = 0;\n"
            "    for (int i = 0; i < 16; i++) s += big[i];\n    return s;\n}\n"
        )
        return "huge_array", src.encode()
    if pick == 1:
        trip = r.choice(["1 << 30", "2147483647", "0xffffffffu", "4294967296ll", "1000000000"])
        ty = r.choice(["int", "unsigned", "long long", "uint64_t"])
        src = (
            pre + f"int32_t f(const int16_t *a, const int16_t *b) {{\n    int32_t s = 0;\n"
            f"    for ({ty} i = 0; i < {trip}; i++) s += a[i] * b[i];\n    return s;\n}}\n"
        )
        return "huge_trip_count", src.encode()
    if pick == 2:
        terms = r.choice([1000, 5000, 20000])
        expr = " + ".join(f"a[{k % 16}]" for k in range(terms))
        return "deep_expression", (
            pre + f"int32_t f(const int32_t *a) {{ return {expr}; }}\n"
        ).encode()
    if pick == 3:
        d = r.choice([100, 1000, 20000])
        return "deep_parens", (
            pre + f"int32_t f(int x) {{ return {'(' * d}x{')' * d}; }}\n"
        ).encode()
    if pick == 4:
        return "recursion", (
            pre + "int32_t f(const int16_t *a, int n) {\n"
            "    if (n == 0) return 0;\n    return a[0] * a[0] + f(a + 1, n - 1);\n}\n"
        ).encode()
    if pick == 5:
        raw = program(r).encode()
        pos = r.randrange(len(raw))
        return "non_utf8", raw[:pos] + r.choice(
            [b"\xff", b"\xc3(", b"\x80\x80", b"\xed\xa0\x80"]
        ) + raw[pos:]
    if pick == 6:
        loop = r.choice(["while (1)", "for (;;)", "while (x != 0)", "do", "while (x == x)"])
        body = "{ s += a[0]; }" if loop != "do" else "{ s += a[0]; } while (1);"
        return "endless_loop", (
            pre + f"int32_t f(const int16_t *a, int x) {{\n    int32_t s = 0;\n    {loop} {body}\n"
            "    return s;\n}\n"
        ).encode()
    if pick == 7:
        d = r.choice([20, 60, 200])
        heads = "".join(f"for (int i{k} = 0; i{k} < 2; i{k}++)\n" for k in range(d))
        return "deep_loops", (
            pre + f"int32_t f(const int16_t *a) {{\n    int32_t s = 0;\n{heads}    s += a[0];\n"
            "    return s;\n}\n"
        ).encode()
    if pick == 8:
        d = r.choice([50, 500, 3000])
        return "deep_ifs", (
            pre
            + "int32_t f(int x) {\n    int32_t s = 0;\n"
            + "if (x > 0) {\n" * d
            + "s += 1;\n"
            + "}\n" * d
            + "    return s;\n}\n"
        ).encode()
    if pick == 9:
        return "preprocessor", (
            pre
            + r.choice(
                [
                    "#define SQ(x) ((x) * (x))\nint f(int a) { return SQ(a); }\n",
                    "#if 1\nint f(int a) { return a; }\n#endif\n",
                    "#define A B\n#define B A\nint f(int x) { return A; }\n",
                    "#define N (1 << 40)\nint f(const int *a) { int s = 0; for (int i = 0; i < N; i++) s += a[i]; return s; }\n",
                    '#include "/dev/zero"\nint f(int x) { return x; }\n',
                    "#define N\nint f(int x) { return x + N; }\n",
                ]
            )
        ).encode()
    if pick == 10:
        return "duplicate_function", (
            pre + "int f(int x) { return x; }\nint f(int x) { return x + 1; }\n"
        ).encode()
    if pick == 11:
        return "empty", r.choice(
            [b"", b"\n", b"/* open", b"int", b"\xef\xbb\xbf", b"}", b"#pragma aquas match\n"]
        )
    if pick == 12:
        big = r.choice(
            ["99999999999999999999999", "0x1ffffffffffffffff", "1e9", "'\\777'", '"str"']
        )
        return "bad_literal", (pre + f"int f(int x) {{ return x * {big}; }}\n").encode()
    if pick == 13:
        return "long_name", (
            pre + f"int {'f' * r.choice([251, 300, 5000])}(int x) {{ return x; }}\n"
        ).encode()
    if pick == 14:
        return "unsupported", (
            pre
            + r.choice(
                [
                    "float f(float x) { return x * 2.0f; }\n",
                    "int f(int *a) { switch (a[0]) { case 1: return 2; default: return 0; } }\n",
                    "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { if (a[i]) break; s++; } return s; }\n",
                    "int f(int n) { int v[n]; v[0] = 1; return v[0]; }\n",
                    "int f(int **p) { return p[0][0]; }\n",
                    "int f(a, b) int a; int b; { return a + b; }\n",
                    "int f(int x, ...) { return x; }\n",
                ]
            )
        ).encode()
    base = program(r)
    return "unicode", (
        base
        + f"// {r.choice(['é', '变量', chr(0x202E), chr(0x1F600)])}\nint f\u00e9(int x) {{ return x; }}\n"
    ).encode()


def generate(seed: int, index: int) -> Case:
    """Case ``index`` of the C stream ``seed``: 60% programs, 20% token mutants, 20% hostile."""
    r = case_rng("c", seed, index)
    roll = r.random()
    valid = False
    if roll < 0.6:
        family, data, valid = "program", program(r).encode(), True
    elif roll < 0.8:
        how = r.choice(["delete", "duplicate", "insert", "swap"])
        family, data = f"mutant_{how}", mutate_tokens(r, program(r), how, C_SOUP).encode()
    else:
        family, data = hostile(r)
    return Case("c", family, seed, index, "app.c", {"app.c": data}, valid=valid)


__all__ = ["generate", "hostile", "kernel", "program"]
