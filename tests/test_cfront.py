"""C frontend: lowered kernels run on an exact IR evaluator and agree bit for bit with the
same C compiled by the host gcc; unsupported constructs give located diagnostics."""

from __future__ import annotations

import ctypes
import hashlib
import random
import re
import subprocess
from pathlib import Path

import pytest
from cfront_eval import Evaluator
from xdsl.dialects.builtin import FileLineColLoc

from aquas.diagnostics import AquasError
from aquas.egraph.cfront import CFunction, CProgram, CType, parse_c, parse_c_file, parse_mlir

from helpers import require_tool

BUILD = Path(__file__).resolve().parent.parent / "build" / "cfront-tests"
ARRAY_LEN = 48
TRIALS = 24

KERNELS = r"""
#include <stdint.h>
#define N 8
#define SHIFT (2 + 1)

static const int16_t coef[N] = {3, -5, 7, 0x7fff, -0x8000, 11, -13, 'a'};
int32_t bias = -77;

int32_t mul8(int8_t a, int8_t b) { return a * b; }

int32_t u16shift(uint16_t x, int s) { return (x << s) >> SHIFT; }

int32_t mixcmp(int a, unsigned b, int16_t c, uint16_t d) {
    return (a < b) + 2 * (c < d) + 4 * (a > (int32_t)b) + 8 * ((uint8_t)c >= (int8_t)d);
}

int32_t divs(int32_t x, int32_t d) { return x / d + 7 * (x % d) + (x >> 4) / 3; }

int32_t sar(int32_t x, int s) { return (x >> s) ^ ((uint32_t)x >> s); }

int64_t wide(int32_t x, uint32_t y, int64_t z) { return x * (int64_t)y + z / 3 - (y >> 1); }

int32_t signed_bytes(const uint8_t *buf, int n) {
    const int8_t *v = (const int8_t *)(buf + 1);
    int32_t s = 0;
    for (int i = 0; i + 1 < n; i++)
        s += v[i] * (int32_t)((const uint8_t *)v)[i];
    return s;
}

int32_t sum(const int32_t *a, int n) {
    int32_t s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}

void minmax(const int16_t *restrict a, int n, int32_t *restrict out) {
    int32_t lo = 32767, hi = -32768, sq = 0;
    for (int i = 0; i < n; ++i) {
        int32_t v = a[i];
        if (v < lo) lo = v;
        if (v > hi) { hi = v; } else { sq += v * v; }
    }
    out[0] = lo;
    out[1] = hi;
    out[2] = sq;
}

void matvec(const int32_t *m, const int32_t *x, int32_t *y) {
    for (int r = 0; r < 4; r++) {
        int32_t acc = 0;
        for (int c = 0; c < 4; c++)
            acc += m[4 * r + c] * x[c];
        y[r] = acc;
    }
}

int32_t popcount(uint32_t x) {
    int32_t c = 0;
    while (x) {
        c += x & 1;
        x >>= 1;
    }
    return c;
}

int32_t clamp(int32_t x, int32_t lo, int32_t hi) {
    int32_t r = x;
    if (r < lo)
        r = lo;
    else if (r > hi)
        r = hi;
    if (lo > hi) r = 0;
    return r;
}

uint32_t absdiff(uint8_t a, uint8_t b) { return a > b ? a - b : b - a; }

int32_t stencil(const int32_t *a, int n) {
    int32_t s = 0;
    for (int i = 0; i < n / 3; i++) {
        const int32_t *p = a + 3 * i;
        s += p[0] - 2 * p[1] + p[2];
    }
    return s;
}

int32_t walk(const int16_t *p, int n) {
    int32_t s = 0;
    while (n > 0) {
        s += *p * n;
        p++;
        n--;
    }
    return s;
}

void scale(const int32_t *a, int32_t *out, int n) {
    for (int i = 0; i < n; i++)
        *(out + i) = *(a + i) * 3 + *a;
}

int32_t fir(const int16_t *x, int n) {
    int32_t acc = bias;
    for (int i = 0; i + N <= n; i++)
        for (int k = 0; k < N; k++)
            acc += x[i + k] * coef[k];
    return acc;
}

int32_t inclusive(const int32_t *a, int n) {
    int32_t s = 0;
    for (int i = 1; i <= n; i += 2)
        s = s + a[i];
    return s;
}

int32_t evens(const uint8_t *a, int n) {
    uint32_t s = 1;
    for (int i = 0; i < n; i = i + 2) s *= a[i] | 1;
    return (int32_t)s;
}

int32_t dowhile(int32_t x) {
    int32_t steps = 0;
    do {
        x = x & 1 ? 3 * x + 1 : x / 2;
        steps++;
    } while (x > 1 && steps < 50);
    return steps * 1000 + x;
}

void satadd(const uint8_t *a, const uint8_t *b, uint8_t *out, int n) {
    for (int i = 0; i < n; i++) {
        uint32_t s = a[i] + b[i];
        out[i] = s > 255 ? 255 : s;
    }
}

int64_t dot64(const int32_t *a, const int32_t *b, int n) {
    long long acc = 0;
    for (int i = 0; i < n; i++) acc += (long long)a[i] * b[i];
    return acc;
}

int32_t lastindex(const int32_t *a, int n) {
    int i;
    int32_t s = 0;
    for (i = 0; i < n; i++) s ^= a[i];
    return i * 65536 + (s & 0xffff);
}

int32_t localarr(const int8_t *a) {
    int32_t t[N] = {1, 2};
    for (unsigned k = 0; k < 8; k++) t[k] += a[k];
    int32_t s = 0;
    for (int k = 0; k < N; k++) s = s * 3 + t[k];
    return s;
}

int32_t countdown(const int32_t *a, int n) {
    int32_t s = 0;
    for (int i = n - 1; i >= 0; i--) s = s * 2 + a[i];
    return s;
}

void update(int16_t *a, int n) {
    for (int i = 0; i < n; i++) {
        a[i] += 5;
        a[i] <<= 1;
        a[i]++;
        a[i] = -a[i];
    }
}

int32_t logic(int32_t x, int32_t y) {
    return (x && !y) + 2 * (x > 0 || y < 0) + 4 * !(x ^ y) + (~x & 0xff);
}

uint16_t narrow(uint16_t x, int16_t y) {
    uint16_t r = x * y;
    r -= (uint16_t)(y >> 2);
    r = r / 3 + r % 7;
    return r;
}

int32_t upd_index(const int16_t *a, int n) {
    unsigned k = 1;
    int32_t s = 0;
    for (int i = 0; i < 8; i++) {
        int16_t z = a[k++];
        s += z * a[++k] + (n & 1 ? 3 : -1);
        s ^= a[k--];
    }
    return s + (int32_t)k;
}

int32_t upd_value(int32_t a, int32_t b, uint8_t c) {
    int32_t x;
    int32_t y = (x = a * 3) + b;
    int32_t z = (x += b) - (y -= 1);
    int32_t t = (c += 200) * 2;
    t -= c--;
    int32_t w = (a++ > 0) + (b = b << 1);
    return x ^ y ^ z ^ t ^ (int32_t)(--c) ^ w ^ a ^ b;
}
"""


def _ctype_of(t: CType) -> type:
    return getattr(ctypes, f"c_{'' if t.signed else 'u'}int{t.width}")


def lowered_and_compiled(source: str, stem: str) -> tuple[CProgram, ctypes.CDLL]:
    """``source`` through the frontend, and compiled by gcc into a shared library (cached
    by content under build/cfront-tests): the two sides of a differential kernel test."""
    require_tool("gcc", "gcc")
    BUILD.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    c_file, so = BUILD / f"{stem}-{key}.c", BUILD / f"{stem}-{key}.so"
    if not so.exists():
        c_file.write_text(source)
        tmp = so.with_suffix(".tmp.so")
        subprocess.run(
            ["gcc", "-O1", "-fwrapv", "-shared", "-fPIC", "-o", str(tmp), str(c_file)],
            check=True,
        )
        tmp.rename(so)
    return parse_c(source, f"{stem}.c"), ctypes.CDLL(str(so))


@pytest.fixture(scope="module")
def kernels() -> tuple[CProgram, ctypes.CDLL]:
    return lowered_and_compiled(KERNELS, "kernels")


def _arg(rng: random.Random, name: str, t: CType) -> int:
    if name == "n":
        return rng.randint(0, 40)
    if name == "s":
        return rng.randint(0, 15 if t.width == 16 else 31)
    if name == "d":
        return rng.choice([-1, 1]) * rng.randint(2, 1000)
    lo, hi = (
        (-(1 << (t.width - 1)), (1 << (t.width - 1)) - 1) if t.signed else (0, (1 << t.width) - 1)
    )
    if rng.random() < 0.2:
        return rng.choice([lo, hi, 0, -1 if t.signed else 1])
    return rng.randint(lo, hi)


def _run_both(fn: CFunction, lib: ctypes.CDLL, ev: Evaluator, rng: random.Random) -> None:
    cfn = getattr(lib, fn.name)
    cfn.restype = None if fn.ret is None else _ctype_of(fn.ret)
    c_args: list[object] = []
    ir_args: list[int | list[int]] = []
    arrays: list[tuple[ctypes.Array[ctypes.c_int], list[int], CType]] = []
    for p in fn.params:
        elem = CType(p.ctype.width, p.ctype.signed)
        if p.ctype.pointer:
            values = [_arg(rng, "", elem) for _ in range(ARRAY_LEN)]
            arr = (_ctype_of(elem) * ARRAY_LEN)(*values)
            buf = [v & ((1 << elem.width) - 1) for v in values]
            c_args.append(arr)
            ir_args.append(buf)
            arrays.append((arr, buf, elem))
        else:
            v = _arg(rng, p.name, elem)
            c_args.append(_ctype_of(elem)(v))
            ir_args.append(v & ((1 << elem.width) - 1))
    got = ev.call(fn.name, ir_args)
    want = cfn(*c_args)
    if fn.ret is not None:
        assert got == want & ((1 << fn.ret.width) - 1), (fn.name, ir_args)
    for arr, buf, elem in arrays:
        assert buf == [v & ((1 << elem.width) - 1) for v in arr], fn.name


def test_every_kernel_is_lowered(kernels: tuple[CProgram, ctypes.CDLL]) -> None:
    prog, _ = kernels
    assert prog.diagnostics == []
    assert len(prog.functions) >= 25
    assert all(f.func is not None and f.selected for f in prog.functions)
    assert set(prog.globals) == {"coef", "bias"}


KERNEL_NAMES = re.findall(r"^\w+ (\w+)\(", KERNELS, re.M)


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_matches_gcc(kernels: tuple[CProgram, ctypes.CDLL], name: str) -> None:
    prog, lib = kernels
    ev = Evaluator(prog.module)
    fn = next(f for f in prog.functions if f.name == name)
    rng = random.Random(name)
    for _ in range(TRIALS):
        _run_both(fn, lib, ev, rng)


def _pos(src: str, marker: str, nth: int = 0) -> tuple[int, int]:
    at = -1
    for _ in range(nth + 1):
        at = src.index(marker, at + 1)
    line = src.count("\n", 0, at) + 1
    return line, at - (src.rfind("\n", 0, at) + 1) + 1


UNSUPPORTED = """#include <stdint.h>
struct P { int x; };
int g(int);
int ok1(int a) { return a + 1; }
int f_break(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i > 3) break;
        s += i;
    }
    return s;
}
int f_call(int n) { return g(n) + 1; }
int f_struct(int n) { struct P p, q; p.x = n; q = p; return q.x; }
float f_float(int n) { return n; }
int f_ptrcast(int32_t *a) { const int16_t *p = (const int16_t *)a; return p[0]; }
int f_early(int n) { for (int i = 0; i < n; i++) { if (i > 3) return 1; } return 0; }
int f_goto(int n) { goto out; out: return n; }
int f_switch(int n) { switch (n) { case 1: n = 2; } return n; }
int f_assignexpr(int n) { int x = 0; int y = (x = n) + x; return y; }
int f_condupd(int n) { int x = 0; int y = n && x++; return x + y; }
int f_loopupd(int n) { int s = 0; while (s < 9 && n--) s += n; return s; }
int f_memupd(int32_t *a) { return a[0]++ + 1; }
int f_ptrcmp(int32_t *a, int32_t *b) { return a < b; }
int f_continue(int n) { while (n) { n--; continue; } return n; }
int f_comma(int n) { int x = (n, 2); return x; }
int f_string(int n) { const char *s = "ab"; return n; }
int f_volatile(int n) { volatile int v = n; return v; }
int ok2(int a) { return a * 2; }
"""


@pytest.mark.parametrize(
    ("fn", "construct", "marker"),
    [
        ("f_break", "'break' statement", "break;"),
        ("f_call", "call of function 'g' inside an expression", "g(n)"),
        ("f_struct", "assignment of a whole struct", "q = p"),
        ("f_float", "floating-point type", "float"),
        ("f_ptrcast", "pointer cast from 'int32_t *' to 'const int16_t *'", "(const int16_t *)a"),
        ("f_early", "early 'return'", "return 1"),
        ("f_goto", "'goto' statement", "goto out"),
        ("f_switch", "'switch' statement", "switch ("),
        (
            "f_assignexpr",
            "'x' assigned and also read or assigned elsewhere in the same expression "
            "(unsequenced in C)",
            "x = n)",
        ),
        (
            "f_condupd",
            "'x' assigned in an operand evaluated only conditionally (&&, ||, ?:)",
            "x++",
        ),
        (
            "f_loopupd",
            "'n' assigned in an operand evaluated only conditionally (&&, ||, ?:)",
            "n--)",
        ),
        ("f_memupd", "assignment to memory inside an expression", "a[0]++"),
        ("f_ptrcmp", "pointer comparison", "a < b"),
        ("f_continue", "'continue' statement", "continue;"),
        ("f_comma", "comma operator", "n, 2"),
        ("f_string", "string literal", '"ab"'),
        ("f_volatile", "'volatile' qualifier", "v = n"),
    ],
)
def test_unsupported_construct_is_located(fn: str, construct: str, marker: str) -> None:
    prog = parse_c(UNSUPPORTED, "app.c")
    funcs = {f.name: f for f in prog.functions}
    assert funcs[fn].func is None
    assert funcs["ok1"].func is not None and funcs["ok2"].func is not None
    (diag,) = [d for d in prog.diagnostics if f"function '{fn}'" in d.message]
    assert (
        diag.message == f"unsupported C construct: {construct}; function '{fn}' is left untouched"
    )
    line, col = _pos(UNSUPPORTED, marker)
    assert diag.loc is not None and (diag.loc.line, diag.loc.column) == (line, col)
    assert diag.render().startswith(f"app.c:{line}:{col}: error: unsupported C construct")
    assert len(prog.diagnostics) == len(prog.functions) - 2
    names = {op.sym_name.data for op in prog.module.ops if hasattr(op, "sym_name")}
    assert names == {"ok1", "ok2"}


def test_syntax_error_has_location() -> None:
    with pytest.raises(AquasError) as e:
        parse_c("int f(int a) {\n  return a +;\n}\n", "bad.c")
    assert e.value.loc is not None
    assert (e.value.loc.filename, e.value.loc.line) == ("bad.c", 2)
    assert "syntax error" in e.value.message


def test_real_preprocessor_macros_conditionals_and_columns() -> None:
    """gcc -E expands function-like macros and conditionals; locations are the original
    file's lines and columns, also after a macro expansion earlier on the line."""
    src = (
        "#include <stdint.h>\n"
        "#define SQ(x) ((x) * (x))\n"
        "#ifdef NOPE\n"
        "int broken(\n"
        "#else\n"
        "int32_t f(int32_t a) { return SQ(a + 1) + INT8_MAX; }\n"
        "#endif\n"
        "int g(int a) {  /* c */  return SQ(a) + h(a); }\n"
    )
    prog = parse_c(src, "m.c")
    f = next(fn for fn in prog.functions if fn.name == "f")
    assert f.func is not None and (f.line, f.col) == (6, 9)
    assert [cs.kind for cs in f.stmts] == ["return"]
    assert src[f.stmts[0].span.start : f.stmts[0].span.end] == "return SQ(a + 1) + INT8_MAX;"
    assert Evaluator(prog.module).call("f", [2]) == 9 + 127  # SQ(a + 1) + INT8_MAX
    (diag,) = prog.diagnostics
    assert diag.loc is not None and (diag.loc.line, diag.loc.column) == (8, 41)
    assert "call of function 'h'" in diag.message


def test_preprocessor_errors_are_located(tmp_path: Path) -> None:
    with pytest.raises(AquasError, match="#error stop here") as e:
        parse_c("int a;\n  #error stop here\n", "m.c")
    assert e.value.loc is not None and (e.value.loc.filename, e.value.loc.line) == ("m.c", 2)
    with pytest.raises(AquasError, match=r"missing\.h") as e:
        parse_c('#include "missing.h"\nint a;\n', str(tmp_path / "m.c"))
    assert e.value.loc is not None and e.value.loc.line == 1


def test_include_path_and_dependencies(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "deep.h").write_text("#define K 3\n")
    (tmp_path / "local.h").write_text('#include "deep.h"\n#define M (K + 1)\n')
    src = tmp_path / "m.c"
    src.write_text(
        '#include <stdint.h>\n#include "local.h"\nint32_t f(int32_t a) { return a * M; }\n'
    )
    with pytest.raises(AquasError, match=r"deep\.h"):
        parse_c_file(src)
    prog = parse_c_file(src, include_dirs=[tmp_path / "inc"])
    assert prog.functions[0].func is not None
    assert prog.dependencies == [src.resolve(), (tmp_path / "local.h").resolve(),
                                 (tmp_path / "inc" / "deep.h").resolve()]  # fmt: skip


def test_gnu_extensions_are_removed() -> None:
    src = (
        "static __inline__ int __attribute__((always_inline)) f(int *__restrict p) {\n"
        "  return *p;\n"
        "}\n"
        'int g(int a) { __asm__ __volatile__("nop" ::: "memory"); return a; }\n'
        "__extension__ typedef long long i64;\n"
    )
    prog = parse_c(src, "m.c")
    f, g = prog.functions
    assert f.func is not None and f.params[0].ctype.restrict
    assert g.func is None
    (diag,) = prog.diagnostics
    assert "'__asm__'" in diag.message and diag.loc is not None and diag.loc.column == 16


def test_non_utf8_source_is_a_diagnostic(tmp_path: Path) -> None:
    src = tmp_path / "latin1.c"
    src.write_bytes(b"/* caf\xe9 */ int f(int a) { return a; }\n")
    with pytest.raises(AquasError, match="not UTF-8") as e:
        parse_c_file(src)
    assert e.value.loc is not None and (e.value.loc.line, e.value.loc.column) == (1, 7)
    assert "0xe9" in e.value.message


def test_missing_preprocessor_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AQUAS_CPP", "no-such-cpp-aquas")
    with pytest.raises(AquasError, match="needs a C preprocessor: 'no-such-cpp-aquas'") as e:
        parse_c("int a;\n", "m.c")
    assert e.value.hint is not None and "gcc" in e.value.hint


def test_garbage_never_crashes() -> None:
    for text in ["int", "}{", "int f( { return; }", "int f(void) { return 1 }", "\x00\x01"]:
        with pytest.raises(AquasError):
            parse_c(text)


SELECT = """#include <stdint.h>
int a(int x) { return x; }
#pragma aquas match
int b(int x) { return x + 1; }
int c(int x) { return x + 2; }
#pragma aquas match
int d(int x) { return x + 3; }
"""


def test_selection_by_pragma_and_by_name() -> None:
    prog = parse_c(SELECT)
    assert [(f.name, f.selected) for f in prog.functions] == [
        ("a", False), ("b", True), ("c", False), ("d", True),
    ]  # fmt: skip
    prog = parse_c(SELECT, functions=["a", "c"])
    assert [f.name for f in prog.functions if f.selected] == ["a", "c"]
    prog = parse_c(SELECT.replace("#pragma aquas match", ""))
    assert all(f.selected for f in prog.functions)
    with pytest.raises(AquasError, match="'zz'"):
        parse_c(SELECT, functions=["zz"])


SPANS = """#include <stdint.h>
/* a comment with ; and { */
int32_t k(const int32_t *a, int n) {
    int32_t s = 0, t; // trailing ; comment
    for (int i = 0; i < n; i++)
        s += a[i];
    if (s > 0) { t = 1; } else if (s < 0) t = -1; else { t = 0; }
    int j = 0;
    while (j < n)
        j += 2;
    do { s--; } while (s > 100);
    { int q = 2; s += q; }
    return s + t + j;
}
"""


def test_statement_spans() -> None:
    prog = parse_c(SPANS, "s.c")
    (fn,) = prog.functions
    texts = [(st.kind, st.depth, SPANS[st.span.start : st.span.end]) for st in fn.stmts]
    assert texts == [
        ("decl", 0, "int32_t s = 0, t;"),
        ("decl", 0, "int32_t s = 0, t;"),
        ("for", 0, "for (int i = 0; i < n; i++)\n        s += a[i];"),
        ("assign", 1, "s += a[i];"),
        ("if", 0, "if (s > 0) { t = 1; } else if (s < 0) t = -1; else { t = 0; }"),
        ("assign", 1, "t = 1;"),
        ("if", 1, "if (s < 0) t = -1; else { t = 0; }"),
        ("assign", 2, "t = -1;"),
        ("assign", 2, "t = 0;"),
        ("decl", 0, "int j = 0;"),
        ("while", 0, "while (j < n)\n        j += 2;"),
        ("assign", 1, "j += 2;"),
        ("do", 0, "do { s--; } while (s > 100);"),
        ("assign", 1, "s--;"),
        ("block", 0, "{ int q = 2; s += q; }"),
        ("decl", 1, "int q = 2;"),
        ("assign", 1, "s += q;"),
        ("return", 0, "return s + t + j;"),
    ]
    loop = fn.stmts[2]
    assert loop.iv == "i" and loop.op is not None and loop.op.name == "scf.for"
    assert loop.header_span is not None and loop.body_span is not None
    assert SPANS[loop.header_span.start : loop.header_span.end] == "(int i = 0; i < n; i++)"
    assert SPANS[loop.body_span.start : loop.body_span.end] == "s += a[i];"
    clauses = [loop.init_span, loop.cond_span, loop.step_span]
    assert [SPANS[c.start : c.end] for c in clauses if c] == ["int i = 0", "i < n", "i++"]
    assert set(loop.writes) == {"s"} and loop.writes["s"] is loop.op.results[0]
    assert fn.stmts[10].op is not None and fn.stmts[10].op.name == "scf.while"
    assert fn.stmts[4].op is not None and fn.stmts[4].op.name == "scf.if"
    assert SPANS[fn.span.start : fn.span.end].startswith("int32_t k(")
    assert SPANS[fn.span.start : fn.span.end].endswith("return s + t + j;\n}")
    assert (fn.stmts[2].line, fn.stmts[2].col) == (5, 5)
    assert set(fn.locals) == {"s", "t", "i", "j", "q"}
    assert fn.params[0].ctype.c_name() == "const int32_t *"


def test_ops_carry_c_locations(kernels: tuple[CProgram, ctypes.CDLL]) -> None:
    prog, _ = kernels
    fn = next(f for f in prog.functions if f.name == "sum")
    assert fn.func is not None
    for_op = next(op for op in fn.func.walk() if op.name == "scf.for")
    loc = for_op.location
    assert isinstance(loc, FileLineColLoc)
    assert (loc.filename.data, loc.line.data, loc.column.data) == (
        "kernels.c",
        *_pos(KERNELS, "for (int i = 0; i < n; i++)\n        s += a[i]"),
    )
    assert all(isinstance(op.location, FileLineColLoc) for op in fn.func.walk())


def test_mlir_round_trip(kernels: tuple[CProgram, ctypes.CDLL]) -> None:
    prog, _ = kernels
    text = str(prog.module)
    again = parse_mlir(text, "k.mlir")
    assert str(again) == text
    ev = Evaluator(again)
    assert ev.call("popcount", [0xF0F0_0001]) == 9
    with pytest.raises(AquasError, match="invalid MLIR"):
        parse_mlir("func.func @f() { %0 = arith.constant 1 : i32 }")


def test_parse_c_file(tmp_path: Path) -> None:
    f = tmp_path / "one.c"
    f.write_text("int one(void) { return 1; }\n")
    prog = parse_c_file(f)
    assert prog.filename == str(f) and prog.functions[0].func is not None
    assert Evaluator(prog.module).call("one", []) == 1
    with pytest.raises(AquasError, match="cannot read"):
        parse_c_file(tmp_path / "missing.c")


def test_ir_shape_of_a_canonical_loop() -> None:
    prog = parse_c(
        "int f(const unsigned char *a, int n) { int s = 0; unsigned k = 1;\n"
        " for (int i = 0; i <= n; i += 3) { s += a[i]; k <<= 1; } return s + k; }\n"
    )
    text = str(prog.module)
    assert "func.func @f(%0 : memref<?xi8>, %1 : i32) -> i32" in text.replace(
        "%0: ", "%0 : "
    ).replace("%1: ", "%1 : ")
    assert "iter_args(" in text and "-> (i32, i32) : i32" in text
    assert "arith.extui" in text and "arith.index_cast" in text


def test_loop_forms_and_bool() -> None:
    src = (
        "#include <stdbool.h>\n"
        "unsigned f(unsigned n) { unsigned s = 0;\n"
        "  for (unsigned k = 0; k < n; k++) s += k;\n"
        "  for (unsigned k = 0; k < 9; k++) s ^= k;\n"
        "  for (int i = 0; i < n; i++) s += 1;\n"
        "  return s; }\n"
        "int b(bool x) { return x; }\n"
    )
    prog = parse_c(src, "l.c")
    f, b = prog.functions
    assert [st.op.name for st in f.stmts if st.kind == "for" and st.op] == [
        "scf.while",  # unsigned IV, bound unknown: scf.for would compare signed
        "scf.for",
        "scf.while",  # `i < n` compares unsigned
    ]
    assert Evaluator(prog.module).call("f", [10]) == (45 ^ 0 ^ 1 ^ 2 ^ 3 ^ 4 ^ 5 ^ 6 ^ 7 ^ 8) + 10
    assert b.func is None
    assert prog.diagnostics[0].message.startswith("unsupported C construct: 'bool' type")


def test_mutated_sources_never_crash() -> None:
    rng = random.Random(7)
    for _ in range(300):
        src = rng.choice([KERNELS, UNSUPPORTED, SPANS])
        a = rng.randrange(len(src))
        text = (
            src[:a]
            + rng.choice(["", "(", "}", ";", "*", "++", ",", "x"])
            + src[a + rng.randrange(4) :]
        )
        try:
            prog = parse_c(text, "m.c")
        except AquasError as e:
            assert "internal error" not in e.message
            continue
        assert len(prog.diagnostics) == sum(f.func is None for f in prog.functions)
