"""Findings of a held-out probe of the matcher: application C written without the corpus in
view (structs, enums, externs, kernels applied per row). Each test is the smallest form of
one finding: plain ``char`` (unsigned on RISC-V), ``sizeof`` of a file-scope object, an
extern array used by another function, enumeration constants, and a kernel inside an outer
loop whose operands name the outer loop's index."""

from __future__ import annotations

import functools
from pathlib import Path

from cfront_eval import Evaluator

from aquas.egraph import cfront
from aquas.egraph.driver import MatchResult, load_patterns, match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import Options

from helpers import iss_outputs
from reference_models import biquad_step

ROOT = Path(__file__).resolve().parents[1]
LLM = ROOT / "examples/llm/llm.isax"
KYBER = ROOT / "examples/crypto/kyber.isax"
DSP = ROOT / "examples/dsp/dsp.isax"
POINTCLOUD = ROOT / "examples/pointcloud/pointcloud.isax"
M32 = 0xFFFFFFFF
# the drivers' generator; _lcg is its Python model
RNG_C = """static uint32_t seed = 12345u;
static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; return seed ^ (seed >> 13); }
"""


@functools.cache
def _patterns(spec: Path):  # type: ignore[no-untyped-def]
    return load_patterns(spec, soc="picorv32")


def _match(tmp_path: Path, text: str, spec: Path) -> MatchResult:
    app = tmp_path / "app.c"
    app.write_text(text)
    return match_file(
        app, spec, patterns=_patterns(spec), options=Options(core="picorv32", check_profit=False)
    )


def _matched(res: MatchResult, function: str, isax: str) -> bool:
    return any(d.function == function and d.isax == isax for d in res.matched)


def _checked(res: MatchResult) -> str:
    new = rewrite_c(res)
    assert res.matched
    for d in res.matched:
        assert d.binding is not None and "final check: same outputs and memory" in d.binding.proof
    return new


DOT_BYTES = """#include <stdint.h>
int32_t dot_bytes(const {t} *a, const {t} *b, int n)
{{
    int32_t acc = 0;
    for (int i = 0; i < n; i++)
        acc += a[i] * b[i];
    return acc;
}}
"""


def test_plain_char_is_unsigned_as_on_riscv(tmp_path: Path) -> None:
    """riscv gcc loads a plain char with lbu: a byte dot product over plain char is not
    dot4_i8 (signed bytes), one over signed char is. Before, the frontend and the final
    check's host compiler both took char as signed and the rewrite was wrong on the core
    (a = {0xff, 0x80, 1, 2}, b = {1, 1, 1, 1}: 386 in C, -126 from dot4_i8)."""
    plain = _match(tmp_path, DOT_BYTES.format(t="char"), LLM)
    assert not _matched(plain, "dot_bytes", "dot4_i8")
    (tmp_path / "s").mkdir()
    signed = _match(tmp_path / "s", DOT_BYTES.format(t="signed char"), LLM)
    assert _matched(signed, "dot_bytes", "dot4_i8")
    _checked(signed)

    text = """#include <limits.h>
int cmin(void) { return CHAR_MIN; }
int cmax(void) { return CHAR_MAX; }
int widen(void) { char c = (char)0xff; return c; }
#ifdef __CHAR_UNSIGNED__
int flag(void) { return 1; }
#endif
"""
    prog = cfront.parse_c(text, "t.c")
    assert not prog.diagnostics
    ev = Evaluator(prog.module)
    assert [ev.call(f, []) for f in ("cmin", "cmax", "widen", "flag")] == [0, 255, 255, 1]


def test_sizeof_a_file_scope_object_is_its_storage(tmp_path: Path) -> None:
    """``sizeof`` of a file-scope array or struct was 4 (a pointer's); a loop bounded by
    ``sizeof(g_w)`` then looked like 4 iterations."""
    text = """#include <stdint.h>
struct pt { int32_t x, y, z; };
struct pad { int16_t a; int32_t b; };
struct pt gp[4];
struct pt one;
struct pad gpad[3];
int8_t g_w[64];
int16_t g2[3][5];
unsigned s_gp(void) { return sizeof(gp); }
unsigned s_one(void) { return sizeof one; }
unsigned s_pad(void) { return sizeof(gpad); }
unsigned s_w(void) { return sizeof(g_w); }
unsigned s_2d(void) { return sizeof(g2); }
unsigned s_row(void) { return sizeof(g2[1]); }
"""
    prog = cfront.parse_c(text, "t.c")
    assert not prog.diagnostics
    ev = Evaluator(prog.module)
    # the RV32 (ILP32) sizes: 4 x 12, 12, 3 x 8 (a = 2 bytes + 2 of padding, b = 4), 64,
    # 3 x 5 x 2, 5 x 2
    got = [ev.call(f, []) for f in ("s_gp", "s_one", "s_pad", "s_w", "s_2d", "s_row")]
    assert got == [48, 12, 24, 64, 30, 10]

    score = """#include <stdint.h>
int8_t g_w[64];
int32_t score(const int8_t *x)
{
    int32_t acc = 0;
    for (unsigned i = 0; i < sizeof(g_w); i++)
        acc += g_w[i] * x[i];
    return acc;
}
"""
    res = _match(tmp_path, score, LLM)
    assert _matched(res, "score", "dot4_i8")
    new = _checked(res)
    assert new.count("aquas_dot4_i8(") >= 1


def test_an_extern_array_of_another_function_does_not_stop_the_final_check(
    tmp_path: Path,
) -> None:
    """The final check compiles the whole file: an extern array that only another
    function uses needs storage too, or the library does not load and every rewrite of
    the file is refused ("completed only 0 of 16 random inputs")."""
    text = """#include <stdint.h>
extern const uint16_t tbl[4];
uint16_t mulq(uint16_t a, uint16_t b) { return (uint16_t)(((uint32_t)a * b) % 3329); }
uint16_t first(void) { return tbl[0]; }
"""
    res = _match(tmp_path, text, KYBER)
    assert _matched(res, "mulq", "modmul_q")
    _checked(res)


def test_enumeration_constants(tmp_path: Path) -> None:
    """``enum { N = 16 }`` as a loop bound and an array length, typedef'd enums, implicit
    values, and a function-local enum; an enumerator whose value is not a constant is
    refused where it is used, with the reason."""
    text = """#include <stdint.h>
typedef enum { RED, GREEN = 5, BLUE } color_t;
enum dims { DIM = 3, NPTS = 4 * DIM };
static int32_t tab[NPTS];
int32_t f(color_t c, int32_t x) {
    enum { LOCAL_K = 7 };
    color_t d = BLUE;
    return x * LOCAL_K + d + (int32_t)sizeof(tab) + c + tab[DIM];
}
"""
    prog = cfront.parse_c(text, "t.c")
    assert not prog.diagnostics
    ev = Evaluator(prog.module)
    assert ev.call("f", [2, 10]) == 10 * 7 + 6 + 48 + 2 + 0

    vdot = """#include <stdint.h>
enum { N = 16 };
int32_t vdot16_enum(const int16_t *a, const int16_t *b)
{
    int32_t acc = 0;
    for (int i = 0; i < N; i++)
        acc += a[i] * b[i];
    return acc;
}
"""
    res = _match(tmp_path, vdot, DSP)
    assert _matched(res, "vdot16_enum", "vdot16")
    _checked(res)

    bad = "int g(int n); enum { K = sizeof(int[n]) };\nint h(void) { return K; }\n"
    prog = cfront.parse_c(bad, "b.c")
    [diag] = prog.diagnostics
    assert "enumeration constant" in str(diag) and "b.c:2" in str(diag)


ROWS = """#include <stdint.h>
void argmax_rows(const int32_t (*__restrict s)[16], int32_t *__restrict peak,
                 int32_t *__restrict label, int rows)
{
    for (int f = 0; f < rows; f++) {
        int best = 0;
        int32_t m = s[f][0];
        for (int c = 1; c < 16; c++)
            if (s[f][c] > m) { m = s[f][c]; best = c; }
        peak[f] = m;
        label[f] = best;
    }
}
"""

ROWS_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void argmax_rows(const int32_t (*s)[16], int32_t *peak, int32_t *label, int rows);
"""
    + RNG_C
    + """static int32_t s[5][16], peak[5], label[5];
int main(void)
{
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 16; c++)
            s[r][c] = (int32_t)(rnd() % 64u) - 32;
    argmax_rows(s, peak, label, 5);
    for (int r = 0; r < 5; r++)
        printf("%d %d\\n", (int)peak[r], (int)label[r]);
    return 0;
}
"""
)


def _lcg(n: int, seed: int = 12345) -> list[int]:
    out = []
    for _ in range(n):
        seed = (seed * 1664525 + 1013904223) & M32
        out.append(seed ^ (seed >> 13))
    return out


def test_a_kernel_per_row_names_the_outer_loop_index(tmp_path: Path) -> None:
    """The arg-max of each row inside a loop over rows: vmaxarg's operands are
    ``s + 64 * f`` and ``peak + 4 * f``, in terms of the outer loop's index ``f``, which
    the call site inside the loop names (before, only parameters and globals could be
    named). Run on the ISS against the original and a Python model."""
    res = _match(tmp_path, ROWS, POINTCLOUD)
    assert _matched(res, "argmax_rows", "vmaxarg")
    new = _checked(res)
    assert "aquas_vmaxarg(" in new and "(uint32_t)f" in new
    vals = [(v % 64) - 32 for v in _lcg(80)]
    rows = [vals[16 * r : 16 * r + 16] for r in range(5)]
    expected = "".join(f"{max(r)} {r.index(max(r))}\n" for r in rows)
    assert iss_outputs(res, ROWS, new, ROWS_MAIN, tmp_path) == [expected, expected]


EQ = """#include <stdint.h>
struct { int16_t b0, b1, b2, a1, a2; } g_coef;
struct { int16_t x1, x2, y1, y2; } g_hist;
void eq(int16_t *buf, int n)
{
    for (int i = 0; i < n; i++) {
        int16_t x = buf[i];
        int64_t acc = (int64_t)g_coef.b0 * x + (int64_t)g_coef.b1 * g_hist.x1
                    + (int64_t)g_coef.b2 * g_hist.x2 - (int64_t)g_coef.a1 * g_hist.y1
                    - (int64_t)g_coef.a2 * g_hist.y2;
        int32_t q = (int32_t)((acc + 8192) >> 14);
        int16_t y = q > 32767 ? 32767 : (q < -32768 ? -32768 : (int16_t)q);
        g_hist.x2 = g_hist.x1; g_hist.x1 = x; g_hist.y2 = g_hist.y1; g_hist.y1 = y;
        buf[i] = y;
    }
}
"""

EQ_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
extern struct { int16_t b0, b1, b2, a1, a2; } g_coef;
extern struct { int16_t x1, x2, y1, y2; } g_hist;
void eq(int16_t *buf, int n);
"""
    + RNG_C
    + """static int16_t buf[24];
int main(void)
{
    g_coef.b0 = 4096; g_coef.b1 = 8192; g_coef.b2 = 4096; g_coef.a1 = -12000; g_coef.a2 = 5000;
    for (int i = 0; i < 24; i++)
        buf[i] = (int16_t)(rnd() % 65536u);
    eq(buf, 24);
    for (int i = 0; i < 24; i++)
        printf("%d ", (int)buf[i]);
    printf("%d %d %d %d\\n", (int)g_hist.x1, (int)g_hist.x2, (int)g_hist.y1, (int)g_hist.y2);
    return 0;
}
"""
)


def test_a_filter_whose_state_is_a_global_struct_is_emitted(tmp_path: Path) -> None:
    """A biquad whose coefficients and history are global struct objects: the overlap
    guard compares the end of each struct, one past it, which the emitter refused to
    spell ("an offset past the struct g_hist"), so a reported match was never written.
    Run on the ISS against the original and the Python model."""
    res = _match(tmp_path, EQ, DSP)
    assert _matched(res, "eq", "biquad")
    new = _checked(res)
    assert "aquas_biquad_save(" in new and "(&g_hist)[1]" in new
    coef = dict(b0=4096, b1=8192, b2=4096, a1=-12000, a2=5000)
    hist = dict(x1=0, x2=0, y1=0, y2=0)
    ys = [biquad_step(coef, hist, (v % 65536) - (65536 if v % 65536 >= 32768 else 0))
          for v in _lcg(24)]  # fmt: skip
    expected = " ".join(map(str, ys)) + f" {hist['x1']} {hist['x2']} {hist['y1']} {hist['y2']}\n"
    assert iss_outputs(res, EQ, new, EQ_MAIN, tmp_path) == [expected, expected]


def test_do_while_0_is_a_block(tmp_path: Path) -> None:
    """``do { ... } while (0)``, the statement macros' idiom, runs its body once as a block
    of its own: a statement in it is matched like any other, and one written by a macro is
    explained instead of silently skipped (before, its statement had the span of the loop
    around it and was never considered)."""
    prog = cfront.parse_c(
        "int f(int x) { int y = 1; do { int t = x + 2; y = t * 3; } while (0); return y; }\n",
        "t.c",
    )
    assert not prog.diagnostics
    assert Evaluator(prog.module).call("f", [5]) == 21
    body = "do { r[i] = (uint16_t)(((uint32_t)a[i] * b[i]) % 3329); } while (0);"
    text = f"""#include <stdint.h>
void pw(uint16_t *restrict r, const uint16_t *restrict a, const uint16_t *restrict b)
{{
    for (int i = 0; i < 16; i++)
        {body}
}}
"""
    res = _match(tmp_path, text, KYBER)
    assert _matched(res, "pw", "modmul_q")
    _checked(res)

    macro = text.replace(body, "MULQ(r[i], a[i], b[i]);").replace(
        "#include <stdint.h>\n",
        "#include <stdint.h>\n#define MULQ(r, a, b) "
        "do { (r) = (uint16_t)(((uint32_t)(a) * (b)) % 3329); } while (0)\n",
    )
    (tmp_path / "m").mkdir()
    res = _match(tmp_path / "m", macro, KYBER)
    assert [d.isax for d in res.matched if d.function == "pw"] == ["modmul_q"]


DIST = """#include <stdint.h>
#define NPTS 16
/* squared distances of 16 points to 16 others; the distances go after the points of b */
uint32_t dist_block(const int32_t *a, int32_t *buf)
{
    uint32_t *out = (uint32_t *)(buf + 3 * NPTS);
    uint32_t acc = 0;
    for (int i = 0; i < NPTS; i++) {
        int32_t dx = a[3 * i] - buf[3 * i];
        int32_t dy = a[3 * i + 1] - buf[3 * i + 1];
        int32_t dz = a[3 * i + 2] - buf[3 * i + 2];
        uint32_t d = (uint32_t)(dx * dx + dy * dy + dz * dz);
        out[i] = d;
        acc += d;
    }
    return acc;
}
"""

DIST_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
uint32_t dist_block(const int32_t *a, int32_t *buf);
"""
    + RNG_C
    + """static int32_t mem[160];
int main(void)
{
    for (int i = 0; i < 160; i++)
        mem[i] = (int32_t)(rnd() % 2001u) - 1000;
    /* apart: a = mem[0..48), buf = mem[64..128) */
    printf("%x", (unsigned)dist_block(mem, mem + 64));
    /* overlapping: the distances written over the points a reads */
    printf(" %x", (unsigned)dist_block(mem + 100, mem + 56));
    for (int i = 0; i < 160; i++)
        printf(" %x", (unsigned)mem[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_pointers_that_may_alias_get_a_run_time_guard(tmp_path: Path) -> None:
    """Without ``restrict``, ``a`` and ``buf`` may overlap: the region's writes to ``buf``
    would then feed its reads of ``a``, which the ISAX does not do. The rewrite calls
    v3ddist only when the byte ranges the region touches (a: 0..192, buf: 0..256) are
    disjoint at run time and keeps the original loop otherwise. On the ISS, a call on
    separate buffers runs the ISAX and one on overlapping buffers runs the loop; both
    give the original program's output, which a Python model of the loop gives too."""
    res = _match(tmp_path, DIST, POINTCLOUD)
    [d] = [d for d in res.matched if d.isax == "v3ddist"]
    assert d.binding is not None and len(d.binding.guard) == 1
    new = _checked(res)
    assert "<= ((uint32_t)(uintptr_t)a)" in new and "} else {" in new
    calls: list[int] = []
    outs = iss_outputs(res, DIST, new, DIST_MAIN, tmp_path, calls=calls)
    assert len(calls) == 1  # the first call only: the second falls back to the loop

    mem = [(v % 2001) - 1000 for v in _lcg(160)]

    def dist_block(a: int, b: int) -> int:
        acc = 0
        for i in range(16):
            d = sum((mem[a + 3 * i + k] - mem[b + 3 * i + k]) ** 2 for k in range(3)) & M32
            mem[b + 48 + i] = d - (1 << 32) if d >> 31 else d
            acc = (acc + d) & M32
        return acc

    r1 = dist_block(0, 64)
    r2 = dist_block(100, 56)
    expected = f"{r1:x} {r2:x} " + " ".join(f"{v & M32:x}" for v in mem) + "\n"
    assert outs == [expected, expected]


SPARSE = """#include <stdint.h>
int decode_sparse32(const uint8_t *src, int8_t *dst)
{
    uint32_t mask = (uint32_t)src[0] | ((uint32_t)src[1] << 8)
                  | ((uint32_t)src[2] << 16) | ((uint32_t)src[3] << 24);
    const int8_t *v = (const int8_t *)(src + 4);
    int n = 0;
    for (int k = 0; k < 32; k++) {
        int8_t e = 0;
        if ((mask >> k) & 1) {
            e = v[n];
            n++;
        }
        dst[k] = e;
    }
    return n;
}
"""

SPARSE_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
int decode_sparse32(const uint8_t *src, int8_t *dst);
"""
    + RNG_C
    + """static uint8_t mem[128];
int main(void)
{
    for (int i = 0; i < 128; i++)
        mem[i] = (uint8_t)rnd();
    /* apart: src = mem[0..36), dst = mem[64..96) */
    printf("%d", decode_sparse32(mem, (int8_t *)mem + 64));
    /* overlapping: dst starts 8 bytes into the values the loop still reads */
    printf(" %d", decode_sparse32(mem + 40, (int8_t *)mem + 52));
    for (int i = 0; i < 128; i++)
        printf(" %d", (int)(int8_t)mem[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_a_data_dependent_address_is_guarded_by_its_index_range(tmp_path: Path) -> None:
    """``v[n]``, with ``n`` counted from the mask, depends on loaded data, but its range
    is known (n <= 31): the guard compares src's bytes 0..36 (the mask, and the values
    the ISAX's burst reads) with dst's 0..32. On the ISS a call on separate buffers runs
    sparse_decomp_i8 and one whose output overlaps the values runs the loop; both give
    the original's output and a Python model's. An address with two pointers, a variable
    index or an index range too wide has no range the guard could state."""
    res = _match(tmp_path, SPARSE, LLM)
    [d] = [d for d in res.matched if d.isax == "sparse_decomp_i8"]
    assert d.binding is not None and len(d.binding.guard) == 1
    new = _checked(res)
    assert "(uint32_t)(uintptr_t)src + 36u)" in new and "(uint32_t)(uintptr_t)dst + 32u)" in new
    calls: list[int] = []
    outs = iss_outputs(res, SPARSE, new, SPARSE_MAIN, tmp_path, calls=calls)
    assert len(calls) == 1  # the first call only: the second falls back to the loop

    mem = [v & 0xFF for v in _lcg(128)]

    def decode(src: int, dst: int) -> int:
        mask = int.from_bytes(bytes(mem[src : src + 4]), "little")
        n = 0
        for k in range(32):
            e = 0
            if mask >> k & 1:
                e = mem[src + 4 + n]
                n += 1
            mem[dst + k] = e
        return n

    r1, r2 = decode(0, 64), decode(40, 52)
    sb = [v - 256 if v > 127 else v for v in mem]
    expected = f"{r1} {r2} " + " ".join(map(str, sb)) + "\n"
    assert outs == [expected, expected]

    # the ranges the guard can state, and those it cannot
    from aquas.egraph.binding import byte_range
    from aquas.egraph.semantics import ADDR_W
    from aquas.egraph.soundness import access_of
    from aquas.egraph.terms import binop, cast, const, load, var

    src, dst = var("src", ADDR_W), var("dst", ADDR_W)
    bit = cast("zext", ADDR_W, cast("trunc", 1, load(32, src)))
    n = binop("add", bit, binop("add", bit, bit))  # 0..3
    assert byte_range(access_of(binop("add", binop("add", src, n), const(32, 4)), 8)) == (
        src, 4, 8)  # fmt: skip
    loaded = cast("zext", ADDR_W, load(16, src))  # 0..65535 elements of 4 bytes: too wide
    wide = binop("add", src, binop("mul", loaded, const(32, 4096)))
    assert byte_range(access_of(wide, 32)) is None
    assert byte_range(access_of(binop("add", src, dst), 8)) is None  # two pointers
    assert byte_range(access_of(binop("add", src, var("i", ADDR_W)), 8)) is None


HIST = """#include <stdint.h>
struct hist16 {
    int32_t bin[16];
    int32_t peak;
};
static inline int is_better(int32_t cand, int32_t cur) { return cand > cur; }
uint32_t hist_peak(struct hist16 *h)
{
    uint32_t idx = 0;
    int32_t best = h->bin[0];
    const int32_t *p = &h->bin[1];
    for (uint32_t i = 1; i < 16; i++, p++) {
        int32_t v = *p;
        if (is_better(v, best)) {
            best = v;
            idx = i;
        }
    }
    h->peak = best;
    return idx;
}
"""

HIST_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
struct hist16 { int32_t bin[16]; int32_t peak; };
uint32_t hist_peak(struct hist16 *h);
"""
    + RNG_C
    + """static struct hist16 hs[4];
int main(void)
{
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 16; i++)
            hs[k].bin[i] = (int32_t)(rnd() % 64u) - 32;
        uint32_t idx = hist_peak(&hs[k]);
        printf("%u %d\\n", (unsigned)idx, (int)hs[k].peak);
    }
    return 0;
}
"""
)


def test_comma_step_and_a_result_stored_beside_the_array(tmp_path: Path) -> None:
    """A histogram's peak: the loop steps ``i++, p++`` (the comma operator, which refused
    the whole function) over a pointer into a struct member, and the maximum goes to the
    member after the array. vmaxarg's rs2 is ``&h->peak``, aligned with the region's only
    store rather than with the lowest access on ``h`` (which gave ``h + 0`` and a footprint
    mismatch). Run on the ISS against the original and a Python model."""
    res = _match(tmp_path, HIST, POINTCLOUD)
    assert _matched(res, "hist_peak", "vmaxarg")
    new = _checked(res)
    assert "&h->peak" in new
    vals = [(v % 64) - 32 for v in _lcg(64)]
    rows = [vals[16 * k : 16 * k + 16] for k in range(4)]
    expected = "".join(f"{r.index(max(r))} {max(r)}\n" for r in rows)
    calls: list[int] = []
    assert iss_outputs(res, HIST, new, HIST_MAIN, tmp_path, calls=calls) == [expected] * 2
    assert len(calls) == 4


def test_the_comma_operator_as_a_statement(tmp_path: Path) -> None:
    """Comma expressions where C evaluates them for their effects: an expression
    statement, a for-loop's initialiser and its step. A step of two pointers and a counter
    stays a counted loop (the other operands run after the body); with an operand after
    the counter's step that reads it, the loop runs as written. A comma used as a value is still refused, with its position."""
    text = """#include <stdint.h>
int32_t walk(const int32_t *a, int32_t *b, int n) {
    int32_t s, t, i;
    const int32_t *p = a + 1;
    int32_t *q = b + 2;
    s = 0, t = 1;
    for (p = a, i = 0, q = b; i < n; i++, p++, q++)
        *q = *p + s, s += *p;
    return s * 1000 + t;
}
int32_t reread(int n) {
    int32_t s = 0, j = 0;
    for (int i = 0; i < n; i++, j = i * 2)
        s += j;
    return s;
}
int32_t steps(const int32_t *a, int n) {
    int32_t s = 0;
    const int32_t *p = a;
    for (int i = 0; i < n; i++, p += 2)
        s += *p;
    return s;
}
"""
    prog = cfront.parse_c(text, "t.c")
    assert not prog.diagnostics
    ev = Evaluator(prog.module)
    a = [3, -4, 5, 7, -1, 2]
    mem = [x & M32 for x in a]
    out = [0] * 6
    assert ev.call("walk", [mem, out, 6]) == sum(a) * 1000 + 1
    assert out == [(a[k] + sum(a[:k])) & M32 for k in range(6)]
    assert ev.call("reread", [5]) == sum(2 * i for i in range(5))  # j = 0, 2, 4, 6, 8
    assert ev.call("steps", [mem, 3]) == a[0] + a[2] + a[4]

    bad = "int f(int a, int b) { int x = (a, b); return x; }\n"
    [diag] = cfront.parse_c(bad, "b.c").diagnostics
    assert "comma operator" in str(diag) and "b.c:1" in str(diag)


SEEDED = """#include <stdint.h>
uint32_t closest_of_64(const int32_t *restrict q, const int32_t *restrict cand)
{
    uint32_t dx0 = (uint32_t)cand[0] - (uint32_t)q[0];
    uint32_t dy0 = (uint32_t)cand[1] - (uint32_t)q[1];
    uint32_t dz0 = (uint32_t)cand[2] - (uint32_t)q[2];
    uint32_t best = dx0 * dx0 + dy0 * dy0 + dz0 * dz0;
    uint32_t which = 0;
    for (uint32_t j = 1; j < 64; j++) {
        const int32_t *c = cand + 3 * j;
        uint32_t dx = (uint32_t)c[0] - (uint32_t)q[0];
        uint32_t dy = (uint32_t)c[1] - (uint32_t)q[1];
        uint32_t dz = (uint32_t)c[2] - (uint32_t)q[2];
        uint32_t d = dx * dx + dy * dy + dz * dz;
        if (d < best) {
            best = d;
            which = j;
        }
    }
    return which;
}
"""

SEEDED_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
uint32_t closest_of_64(const int32_t *q, const int32_t *cand);
"""
    + RNG_C
    + """static int32_t q[3], cand[3 * 64];
int main(void)
{
    for (int t = 0; t < 3; t++) {
        for (int i = 0; i < 3; i++)
            q[i] = (int32_t)(rnd() % 256u) - 128;
        for (int i = 0; i < 3 * 64; i++)
            cand[i] = (int32_t)(rnd() % 256u) - 128;
        printf("%u\\n", (unsigned)closest_of_64(q, cand));
    }
    return 0;
}
"""
)


def test_a_running_minimum_seeded_with_the_first_element(tmp_path: Path) -> None:
    """A nearest neighbour seeded with candidate 0's distance and scanning from 1 is
    vnearest, which seeds with UINT32_MAX and scans from 0: its first step
    ``d0 < UINT32_MAX ? d0 : UINT32_MAX`` is ``d0`` (on equality both arms are the same),
    a simplification of the term constructor ("missing rule" before). Run on the ISS
    against the original and a Python model."""
    res = _match(tmp_path, SEEDED, POINTCLOUD)
    assert _matched(res, "closest_of_64", "vnearest")
    new = _checked(res)
    vals = [(v % 256) - 128 for v in _lcg(3 * 195)]
    expected = ""
    for t in range(3):
        qq, cc = vals[195 * t : 195 * t + 3], vals[195 * t + 3 : 195 * t + 195]
        d = [sum(((cc[3 * j + i] - qq[i]) ** 2) for i in range(3)) & M32 for j in range(64)]
        expected += f"{d.index(min(d))}\n"
    assert iss_outputs(res, SEEDED, new, SEEDED_MAIN, tmp_path) == [expected] * 2


def test_select_of_a_comparison_with_its_arms_is_exact() -> None:
    """The constructor's simplification of ``c ? x : K`` (the test above) agrees with a
    direct evaluation for every 8-bit x, every predicate, both operand orders of the
    comparison and both orders of the arms, at the extremes of both orders and elsewhere."""
    from aquas.egraph.terms import cmp, const, evaluate, select, var

    def holds(pred: str, a: int, b: int) -> bool:
        if pred[0] == "s":
            a, b = (a - 256 if a > 127 else a), (b - 256 if b > 127 else b)
        op = pred if pred in ("eq", "ne") else pred[1:]
        return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b,
                "gt": a > b, "ge": a >= b}[op]  # fmt: skip

    x = var("x", 8)
    preds = ["eq", "ne"] + [s + p for s in "us" for p in ("lt", "le", "gt", "ge")]
    simplified = 0
    for k in (0, 1, 5, 127, 128, 255):
        kk = const(8, k)
        for pred in preds:
            for lhs, rhs in ((x, kk), (kk, x)):
                for one, other in ((x, kk), (kk, x)):
                    t = select(cmp(pred, lhs, rhs), one, other)
                    simplified += t.op != "select"
                    for v in range(256):
                        a, b = (v, k) if lhs is x else (k, v)
                        want = (v if one is x else k) if holds(pred, a, b) else (
                            v if other is x else k)  # fmt: skip
                        assert evaluate(t, {"x": v}, lambda a, w: 0) == want, (pred, k, v)
    # == and != always (6 constants x 2 x 2 orders x 2 arm orders); per extreme of each
    # order (0, 255 unsigned, 127, 128 signed) 2 predicates in each operand order
    assert simplified == 6 * 2 * 2 * 2 + 4 * 4 * 2


SCALE = """#include <stdint.h>
void scale(uint16_t *p, uint16_t s, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t prod = (uint32_t)p[i] * s;
        p[i] = (uint16_t)(prod % 3329);
    }
}
void scale_store_between(uint16_t *p, uint16_t *o, uint16_t s, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t prod = (uint32_t)p[i] * s;
        o[i] = 7;
        p[i] = (uint16_t)(prod % 3329);
    }
}
"""

SCALE_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void scale(uint16_t *p, uint16_t s, int n);
"""
    + RNG_C
    + """static uint16_t p[20];
int main(void)
{
    for (int i = 0; i < 20; i++)
        p[i] = (uint16_t)(rnd() % 65536u);
    scale(p, 2285, 20);
    for (int i = 0; i < 20; i++)
        printf("%u ", (unsigned)p[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_a_product_held_in_a_local_reads_its_load_again(tmp_path: Path) -> None:
    """``prod = p[i] * s; p[i] = prod % q``: modmul_q's operand is ``p[i]``, loaded by the
    statement before, which no variable holds ("not offered" before). The call reads it
    again; with a store between the two (``o[i] = 7``, which may be ``p[i]``) it does not.
    Run on the ISS against the original and a Python model."""
    res = _match(tmp_path, SCALE, KYBER)
    assert _matched(res, "scale", "modmul_q")
    assert not _matched(res, "scale_store_between", "modmul_q")
    new = _checked(res)
    expected = " ".join(str((v % 65536) * 2285 % 3329) for v in _lcg(20)) + " \n"
    assert iss_outputs(res, SCALE, new, SCALE_MAIN, tmp_path) == [expected] * 2


BFLY = """#include <stdint.h>
#define Q 3329
#define BFLY(x, y, z) do {                                   \\
        uint32_t t_ = ((uint32_t)(z) * (y)) % Q;              \\
        uint16_t a_ = (x);                                    \\
        (y) = (uint16_t)((a_ + Q - t_) % Q);                  \\
        (x) = (uint16_t)((a_ + t_) % Q);                      \\
    } while (0)
#define MULQ(r, a, b) do { (r) = (uint16_t)(((uint32_t)(a) * (b)) % Q); (b) = 0; } while (0)

void ntt_layer64(uint16_t *r, uint16_t zeta)
{
    for (int j = 0; j < 64; j++)
        BFLY(r[j], r[j + 64], zeta);
}

void mul_clear(uint16_t *r, const uint16_t *a, uint16_t *b)
{
    for (int j = 0; j < 4; j++)
        MULQ(r[j], a[j], b[j]);
}
"""

BFLY_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void ntt_layer64(uint16_t *r, uint16_t zeta);
"""
    + RNG_C
    + """static uint16_t r[128];
int main(void)
{
    for (int i = 0; i < 128; i++)
        r[i] = (uint16_t)(rnd() % 3329u);
    ntt_layer64(r, 17);
    for (int i = 0; i < 128; i++)
        printf("%u ", (unsigned)r[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_a_butterfly_written_as_one_macro_is_rewritten_whole(tmp_path: Path) -> None:
    """A statement macro expands to several statements that all have the invocation's
    source position. They are now told apart by the ops each one's lowering added (before,
    their ops were grouped by location into one statement that "stores to memory besides
    computing the value"), and a region covering the whole expansion replaces the
    invocation: ntt_bfly, its fields stored through their addresses (the macro's lvalues
    are not in the source). A part of an expansion is not replaced: MULQ's product is
    modmul_q, but the macro also clears b, so nothing is written there.
    Run on the ISS against the original and a Python model."""
    res = _match(tmp_path, BFLY, KYBER)
    assert _matched(res, "ntt_layer64", "ntt_bfly")
    new = _checked(res)  # (emission decides on mul_clear)
    assert not _matched(res, "mul_clear", "modmul_q")
    [d] = [d for d in res.decisions if d.function == "mul_clear" and d.isax == "modmul_q"]
    assert d.status == "rejected" and d.reason == "unsupported"
    assert "BFLY(" not in new.split("ntt_layer64")[1] and "MULQ(r[j]" in new
    r = [v % 3329 for v in _lcg(128)]
    for j in range(64):
        t = 17 * r[j + 64] % 3329
        r[j + 64], r[j] = (r[j] + 3329 - t) % 3329, (r[j] + t) % 3329
    expected = " ".join(map(str, r)) + " \n"
    assert iss_outputs(res, BFLY, new, BFLY_MAIN, tmp_path) == [expected] * 2


FIRB = """#include <stdint.h>
static const int16_t taps[8] = {-412, 1180, 4920, 9800, 9800, 4920, 1180, -412};
void fir_blocks(const int16_t *__restrict sig, int32_t *__restrict y, int nblocks)
{
    for (int blk = 0; blk < nblocks; blk++)
        for (int n = 0; n < 16; n++) {
            int32_t acc = 0;
            for (int k = 0; k < 8; k++)
                acc += taps[k] * sig[16 * blk + n + 7 - k];
            y[16 * blk + n] = acc;
        }
}
"""

FIRB_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void fir_blocks(const int16_t *sig, int32_t *y, int nblocks);
"""
    + RNG_C
    + """static int16_t sig[55];
static int32_t y[48];
int main(void)
{
    for (int i = 0; i < 55; i++)
        sig[i] = (int16_t)(rnd() % 65536u);
    fir_blocks(sig, y, 3);
    for (int i = 0; i < 48; i++)
        printf("%d ", (int)y[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_an_outer_loop_index_is_not_taken_for_a_pointer(tmp_path: Path) -> None:
    """In ``sig[16 * blk + ...]`` the address has two variables, ``sig`` and the outer
    loop's ``blk``; the dependence check took the first one created (``blk``) for the
    base, and refused fir8 because "'blk' and '@taps' may alias" although sig and y are
    restrict and taps is a distinct global. The base is now the variable that is a
    pointer; an address with two pointers has no known base (it may alias anything).
    Run on the ISS against the original and a Python model."""
    res = _match(tmp_path, FIRB, DSP)
    assert _matched(res, "fir_blocks", "fir8")
    new = _checked(res)
    h = [-412, 1180, 4920, 9800, 9800, 4920, 1180, -412]
    s = [v % 65536 - (65536 if v % 65536 >= 32768 else 0) for v in _lcg(55)]
    ys = []
    for i in range(48):
        acc = sum(h[k] * s[i + 7 - k] for k in range(8)) & M32
        ys.append(acc - (1 << 32) if acc >> 31 else acc)
    expected = " ".join(map(str, ys)) + " \n"
    assert iss_outputs(res, FIRB, new, FIRB_MAIN, tmp_path) == [expected] * 2

    from aquas.egraph.semantics import ADDR_W, Access
    from aquas.egraph.soundness import access_of, base_name
    from aquas.egraph.terms import binop, const, var

    blk, sig, q = var("blk", ADDR_W), var("sig", ADDR_W), var("q", ADDR_W)
    a: Access = access_of(binop("add", binop("mul", blk, const(32, 32)), sig), 16)
    assert base_name(a, {"sig", "q"}) == "sig"
    assert base_name(access_of(binop("add", sig, q), 16), {"sig", "q"}) is None


FIRS = """#include <stdint.h>
static const int16_t lp_taps[8] = {-412, 1180, 4920, 9800, 9800, 4920, 1180, -412};
void fir_stream(const int16_t *sig, int32_t *y, int nblocks)
{
    for (int blk = 0; blk < nblocks; blk++) {
        const int16_t *x = sig + 16 * blk;
        int32_t *yo = y + 16 * blk;
        for (int n = 0; n < 16; n++) {
            int32_t acc = 0;
            for (int k = 0; k < 8; k++)
                acc += lp_taps[7 - k] * x[n + k];
            yo[n] = acc;
        }
    }
}
"""


def test_a_guard_inside_an_outer_loop_and_a_const_table(tmp_path: Path) -> None:
    """Without restrict, y and sig may alias; the taps are a ``static const`` table,
    which no store can change (C 6.7.3), so only y and sig need the guard. Their ranges
    are ``sig + 32*blk + [0, 46)`` and ``y + 64*blk + [0, 64)``: the enclosing loop's
    index is part of each range's base, and the guard is evaluated in each iteration.
    Run on the ISS (separate buffers: fir8 on every block) against a Python model."""
    res = _match(tmp_path, FIRS, DSP)
    [d] = [d for d in res.matched if d.isax == "fir8"]
    assert d.binding is not None and len(d.binding.guard) == 1
    new = _checked(res)
    assert "32u * (uint32_t)blk + (uint32_t)(uintptr_t)sig + 46u" in new
    main = FIRB_MAIN.replace("fir_blocks", "fir_stream")
    h = [-412, 1180, 4920, 9800, 9800, 4920, 1180, -412]
    s = [v % 65536 - (65536 if v % 65536 >= 32768 else 0) for v in _lcg(55)]
    ys = []
    for i in range(48):
        acc = sum(h[7 - k] * s[i + k] for k in range(8)) & M32
        ys.append(acc - (1 << 32) if acc >> 31 else acc)
    expected = " ".join(map(str, ys)) + " \n"
    calls: list[int] = []
    assert iss_outputs(res, FIRS, new, main, tmp_path, calls=calls) == [expected] * 2
    assert len(calls) >= 3  # fir8 (and its taps) in each of the 3 blocks
