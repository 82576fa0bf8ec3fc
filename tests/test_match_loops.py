"""Loops written the way applications write them (issue 14): ``while`` and ``do { } while``
loops with a counter (``i++``, ``i += 1``, ``++i``), pointer-walking ``while (n--)`` loops
over ``*d++ = f(*a++, *b++)``, function-local ``static`` and ``extern`` arrays as operands.
Matches run on the ISS against the original and an independent Python model; near misses
stay in software with their ``--explain`` reason."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from cfront_eval import Evaluator
from click.testing import CliRunner
from xdsl.dialects import scf

from aquas.cli import main
from aquas.egraph import cfront, emit
from aquas.egraph.driver import MatchResult, load_patterns, match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import FINAL, LIVEOUT, SHAPE, UNSUPPORTED, Options
from aquas.egraph.terms import binop, const, linear, linear_term, load, var

from helpers import iss_outputs, without_vdot32
from reference_models import biquad_step

ROOT = Path(__file__).resolve().parents[1]
POINTCLOUD = ROOT / "examples/pointcloud/pointcloud.isax"
DSP = ROOT / "examples/dsp/dsp.isax"
M32 = 0xFFFFFFFF


@functools.cache
def _patterns(spec: Path):  # type: ignore[no-untyped-def]
    return without_vdot32(load_patterns(spec, soc="picorv32"))  # strip-mining into vdot16


def _match(tmp_path: Path, text: str, spec: Path, name: str = "app.c") -> MatchResult:
    app = tmp_path / name
    app.write_text(text)
    return match_file(
        app, spec, patterns=_patterns(spec), options=Options(core="picorv32", check_profit=False)
    )


def _decision(res: MatchResult, function: str, isax: str):  # type: ignore[no-untyped-def]
    [d] = [d for d in res.decisions if d.function == function and d.isax == isax]
    return d


def _checked(res: MatchResult) -> str:
    new = rewrite_c(res)
    assert res.matched
    for d in res.matched:
        assert d.binding is not None and "final check: same outputs and memory" in d.binding.proof
    return new


def _lcg(n: int, seed: int = 12345) -> list[int]:
    """The drivers' generator: seed = seed * 1664525 + 1013904223; value seed ^ seed >> 13."""
    out = []
    for _ in range(n):
        seed = (seed * 1664525 + 1013904223) & M32
        out.append(seed ^ (seed >> 13))
    return out


def _s(x: int, w: int) -> int:
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


RNG_C = """static uint32_t seed = 12345u;
static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; return seed ^ (seed >> 13); }
"""

# -- v3ddist: while, do-while, and a pointer walk ---------------------------------------

V3D = """#include <stdint.h>

uint32_t dist_while(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t total = 0;
    int i = 0;
    while (i < 16) {
        int32_t dx = a[3 * i] - b[3 * i];
        int32_t dy = a[3 * i + 1] - b[3 * i + 1];
        int32_t dz = a[3 * i + 2] - b[3 * i + 2];
        int32_t d = dx * dx + dy * dy + dz * dz;
        b[48 + i] = d;
        total += (uint32_t)d;
        i++;
    }
    return total;
}

uint32_t dist_do(const int32_t *restrict a, int32_t *restrict b)
{
    uint32_t total = 0;
    int i = 0;
    do {
        int32_t dx = a[3 * i] - b[3 * i];
        int32_t dy = a[3 * i + 1] - b[3 * i + 1];
        int32_t dz = a[3 * i + 2] - b[3 * i + 2];
        b[48 + i] = dx * dx + dy * dy + dz * dz;
        total += (uint32_t)b[48 + i];
        i += 1;
    } while (i < 16);
    return total;
}

uint32_t dist_walk(const int32_t *restrict a, int32_t *restrict b)
{
    const int32_t *q = b;
    int32_t *d = b + 48;
    uint32_t total = 0;
    unsigned n = 16;
    while (n--) {
        int32_t dx = *a++ - *q++;
        int32_t dy = *a++ - *q++;
        int32_t dz = *a++ - *q++;
        int32_t dd = dx * dx + dy * dy + dz * dz;
        *d++ = dd;
        total += (uint32_t)dd;
    }
    return total;
}
"""

V3D_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
uint32_t dist_while(const int32_t *restrict a, int32_t *restrict b);
uint32_t dist_do(const int32_t *restrict a, int32_t *restrict b);
uint32_t dist_walk(const int32_t *restrict a, int32_t *restrict b);
static int32_t a[48], b[64];
"""
    + RNG_C
    + """int main(void)
{
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < 48; i++) a[i] = (int32_t)(rnd() % 2001u) - 1000;
        for (int i = 0; i < 64; i++) b[i] = (int32_t)(rnd() % 2001u) - 1000;
        uint32_t r = f == 0 ? dist_while(a, b) : f == 1 ? dist_do(a, b) : dist_walk(a, b);
        printf("r=%x", (unsigned)r);
        for (int i = 48; i < 64; i++) printf(" %x", (unsigned)b[i]);
        printf("\\n");
    }
    return 0;
}
"""
)


def _v3d_expected() -> str:
    vals = iter(_lcg(3 * 112))
    lines = []
    for _ in range(3):
        a = [next(vals) % 2001 - 1000 for _ in range(48)]
        b = [next(vals) % 2001 - 1000 for _ in range(64)]
        ds = [sum((a[3 * i + k] - b[3 * i + k]) ** 2 for k in range(3)) & M32 for i in range(16)]
        lines.append(f"r={sum(ds) & M32:x} " + " ".join(f"{d:x}" for d in ds))
    return "\n".join(lines) + "\n"


def test_v3ddist_while_do_and_pointer_walk_run_on_the_iss(tmp_path: Path) -> None:
    res = _match(tmp_path, V3D, POINTCLOUD)
    assert sorted(d.function for d in res.matched) == ["dist_do", "dist_walk", "dist_while"]
    for d in res.matched:
        assert d.isax == "v3ddist" and d.binding is not None
        assert d.binding.regs == {"rs1": var("a", 32), "rs2": var("b", 32)}
    new = _checked(res)
    call = "total = (uint32_t)aquas_v3ddist((uint32_t)(uintptr_t)a, (uint32_t)(uintptr_t)b);"
    assert new.count(call) == 3
    assert "while (" not in new and "a++" not in new
    orig_out, new_out = iss_outputs(res, V3D, new, V3D_MAIN, tmp_path)
    assert orig_out == new_out == _v3d_expected()


# -- vdot16: while (n--) over *a++ * *b++, ++i, do-while with --n ---------------------

DOT = """#include <stdint.h>

int32_t dot_walk(const int16_t *a, const int16_t *b)
{
    int32_t acc = 0;
    int n = 16;
    while (n--)
        acc += *a++ * *b++;
    return acc;
}

int32_t dot_pre(const int16_t *a, const int16_t *b)
{
    int32_t acc = 0;
    int i = 0;
    while (i < 16) {
        acc += a[i] * b[i];
        ++i;
    }
    return acc;
}

int32_t dot_do(const int16_t *x, const int16_t *h)
{
    int32_t acc = 0;
    unsigned n = 16;
    do {
        acc += (int32_t)*x * *h;
        x++;
        h++;
    } while (--n);
    return acc;
}
"""

DOT_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
int32_t dot_walk(const int16_t *a, const int16_t *b);
int32_t dot_pre(const int16_t *a, const int16_t *b);
int32_t dot_do(const int16_t *x, const int16_t *h);
static int16_t s[64];
"""
    + RNG_C
    + """int main(void)
{
    for (int i = 0; i < 64; i++) s[i] = (int16_t)rnd();
    printf("%x %x %x\\n", (unsigned)dot_walk(s, s + 16), (unsigned)dot_pre(s + 8, s + 40),
           (unsigned)dot_do(s + 30, s + 2));
    return 0;
}
"""
)


def test_vdot16_pointer_walk_and_counters_run_on_the_iss(tmp_path: Path) -> None:
    res = _match(tmp_path, DOT, DSP)
    got = {d.function: d for d in res.matched}
    assert sorted(got) == ["dot_do", "dot_pre", "dot_walk"]
    assert all(d.isax == "vdot16" for d in got.values())
    assert got["dot_do"].binding is not None
    assert got["dot_do"].binding.regs == {"rs1": var("x", 32), "rs2": var("h", 32)}
    new = _checked(res)
    assert "acc = (int32_t)aquas_vdot16((uint32_t)(uintptr_t)a, (uint32_t)(uintptr_t)b);" in new
    assert "acc = (int32_t)aquas_vdot16((uint32_t)(uintptr_t)x, (uint32_t)(uintptr_t)h);" in new
    s = [_s(v, 16) for v in _lcg(64)]

    def dot(i: int, j: int) -> int:
        return sum(s[i + k] * s[j + k] for k in range(16)) & M32

    expected = f"{dot(0, 16):x} {dot(8, 40):x} {dot(30, 2):x}\n"
    assert iss_outputs(res, DOT, new, DOT_MAIN, tmp_path) == [expected, expected]


def test_update_in_a_loop_condition_runs_on_every_evaluation() -> None:
    """``while (n--)`` decrements on the failing test too (n ends at -1); ``*p++`` moves the
    pointer after the read: the frontend's IR, evaluated exactly, against C semantics."""
    text = """#include <stdint.h>
int32_t left(int n) { int32_t s = 0; while (n--) s += n; return s * 1000 + n; }
int32_t first(const int16_t *p) { int32_t s = 0; int k = 3; do s = s * 10 + *p++; while (--k); return s + *p; }
"""
    text += "int32_t steps(int n) { int32_t s = 0; int i = 0; while (i < n) { s += i; i += 4; } return s * 100 + i; }\n"
    prog = cfront.parse_c(text, "t.c")
    assert not prog.diagnostics
    ev = Evaluator(prog.module)
    for n in (0, 1, 5):
        s = sum(range(n))
        assert _s(ev.call("left", [n]) or 0, 32) == s * 1000 - 1
    assert ev.call("first", [[1, 2, 3, 4, 5]]) == 123 + 4
    # a counted while loop is an scf.for; the counter leaves it as C leaves it
    steps = next(f for f in prog.functions if f.name == "steps")
    assert steps.func is not None and any(isinstance(o, scf.ForOp) for o in steps.func.walk())
    for n in (-3, 0, 1, 4, 10):
        i = 0
        acc = 0
        while i < n:
            acc += i
            i += 4
        assert _s(ev.call("steps", [n & M32]) or 0, 32) == acc * 100 + i


# -- near misses --------------------------------------------------------------------

NEAR = """#include <stdint.h>

int32_t skip_data(const int16_t *a, const int16_t *b)
{
    int32_t acc = 0;
    int i = 0;
    while (i < 16) {
        acc += a[i] * b[i];
        if (a[i] == 0)
            i++;
        i++;
    }
    return acc;
}

int32_t skip_const(const int16_t *a, const int16_t *b)
{
    int32_t acc = 0;
    int i = 0;
    while (i < 32) {
        acc += a[i] * b[i];
        i++;
        i++;
    }
    return acc;
}

int32_t stop_zero(const int16_t *a, const int16_t *b)
{
    int32_t acc = 0;
    int i = 0;
    while (i < 16 && a[i] != 0) {
        acc += a[i] * b[i];
        i++;
    }
    return acc;
}

int32_t walk_used(const int16_t *a, const int16_t *b)
{
    int32_t acc = 0;
    int n = 16;
    while (n--)
        acc += *a++ * *b++;
    return acc + *a;
}
"""


def test_near_misses_stay_in_software_with_the_reason(tmp_path: Path) -> None:
    res = _match(tmp_path, NEAR, DSP)
    assert not res.matched and rewrite_c(res) == NEAR
    d = _decision(res, "skip_data", "vdot16")  # the counter also moves with the data
    assert d.reason == UNSUPPORTED
    assert d.detail.startswith("while loop with a data-dependent condition (cmp.slt(")
    d = _decision(res, "stop_zero", "vdot16")  # the exit depends on the data
    assert d.reason == UNSUPPORTED
    assert d.detail.startswith("while loop with a data-dependent condition (and1(")
    d = _decision(res, "skip_const", "vdot16")  # every other element: not a dot product
    assert d.reason == SHAPE
    # the walked pointer is read after the loop: its final value is a second result
    d = _decision(res, "walk_used", "vdot16")
    assert any(
        b.endswith(
            f"{LIVEOUT}: vdot16 returns one value; the region has 2 live-out values (acc, a)"
        )
        for b in d.blockers
    )
    (tmp_path / "near.c").write_text(NEAR)
    r = CliRunner().invoke(
        main, ["match", str(tmp_path / "near.c"), "--ext", str(DSP), "--explain"]
    )
    assert r.exit_code == 0, r.output
    assert "0 match(es)" in r.output
    assert "skip_data:7: vdot16: no (unsupported): while loop with a data-dependent" in r.output


# -- function-local static and extern arrays as operands ------------------------------

COEF = [3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8, 9, -7, 9, 3]
STATIC = (
    """#include <stdint.h>

int32_t fir_at(const int16_t *x, int n)
{
    static const int16_t taps[16] = {"""
    + ", ".join(map(str, COEF))
    + """};
    int32_t acc = 0;
    const int16_t *p = x + n;
    int i = 0;
    while (i < 16) {
        acc += *p++ * taps[i];
        i++;
    }
    return acc;
}
"""
)

STATIC_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
int32_t fir_at(const int16_t *x, int n);
static int16_t s[320];
"""
    + RNG_C
    + """int main(void)
{
    for (int i = 0; i < 320; i++) s[i] = (int16_t)rnd();
    for (int n = 0; n <= 300; n += 60) printf("%x\\n", (unsigned)fir_at(s, n));
    return 0;
}
"""
)


def test_function_local_static_table_is_an_operand_on_the_iss(tmp_path: Path) -> None:
    res = _match(tmp_path, STATIC, DSP)
    [d] = res.matched
    assert d.isax == "vdot16" and d.binding is not None
    # its own global (a symbol per function), spelled by its C name at the call site
    assert d.binding.regs["rs2"] == var("@fir_at.taps", 32)
    new = _checked(res)
    assert "static const int16_t taps[16] = {" in new
    assert (
        "acc = (int32_t)aquas_vdot16(2u * (uint32_t)n + (uint32_t)(uintptr_t)x, "
        "(uint32_t)(uintptr_t)taps);"
    ) in new
    s = [_s(v, 16) for v in _lcg(320)]
    expected = "".join(
        f"{sum(s[n + i] * COEF[i] for i in range(16)) & M32:x}\n" for n in range(0, 301, 60)
    )
    assert iss_outputs(res, STATIC, new, STATIC_MAIN, tmp_path) == [expected, expected]


EXTERN = """#include <stdint.h>

extern int32_t cloud[48];
extern int32_t refs[64];

uint32_t dist_all(void)
{
    uint32_t total = 0;
    const int32_t *p = cloud, *q = refs;
    int32_t *d = &refs[48];
    for (int n = 16; n > 0; n--) {
        int32_t dx = *p++ - *q++;
        int32_t dy = *p++ - *q++;
        int32_t dz = *p++ - *q++;
        *d = dx * dx + dy * dy + dz * dz;
        total += (uint32_t)*d++;
    }
    return total;
}
"""

# the arrays are defined in another translation unit
EXTERN_DEFS = """#include <stdint.h>
int32_t cloud[48];
int32_t refs[64];
"""

EXTERN_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
extern int32_t cloud[48];
extern int32_t refs[64];
uint32_t dist_all(void);
"""
    + RNG_C
    + """int main(void)
{
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < 48; i++) cloud[i] = (int32_t)(rnd() % 2001u) - 1000;
        for (int i = 0; i < 64; i++) refs[i] = (int32_t)(rnd() % 2001u) - 1000;
        uint32_t r = dist_all();
        printf("r=%x", (unsigned)r);
        for (int i = 48; i < 64; i++) printf(" %x", (unsigned)refs[i]);
        printf("\\n");
    }
    return 0;
}
"""
)


def test_extern_arrays_are_operands_and_the_check_defines_them(tmp_path: Path) -> None:
    res = _match(tmp_path, EXTERN, POINTCLOUD)
    [d] = res.matched
    assert d.isax == "v3ddist" and d.binding is not None
    assert d.binding.regs == {"rs1": var("@cloud", 32), "rs2": var("@refs", 32)}
    [cf] = [f for f in res.program.functions if f.name == "dist_all"] if res.program else []
    assert cf.extern_defs == ["int32_t cloud[48];\n", "int32_t refs[64];\n"]
    new = _checked(res)  # the final check ran on storage it defined
    assert (
        "total = (uint32_t)aquas_v3ddist((uint32_t)(uintptr_t)cloud, (uint32_t)(uintptr_t)refs);"
        in new
    )
    vals = iter(_lcg(2 * 112))
    lines = []
    for _ in range(2):
        a = [next(vals) % 2001 - 1000 for _ in range(48)]
        b = [next(vals) % 2001 - 1000 for _ in range(64)]
        ds = [sum((a[3 * i + k] - b[3 * i + k]) ** 2 for k in range(3)) & M32 for i in range(16)]
        lines.append(f"r={sum(ds) & M32:x} " + " ".join(f"{x:x}" for x in ds))
    expected = "\n".join(lines) + "\n"
    outs = iss_outputs(res, EXTERN, new, EXTERN_MAIN, tmp_path, extra=EXTERN_DEFS)
    assert outs == [expected, expected]


def test_extern_near_misses(tmp_path: Path) -> None:
    # an extern array of unknown length: no storage the check could define
    unknown = EXTERN.replace("extern int32_t refs[64];", "extern int32_t refs[];")
    res = _match(tmp_path, unknown, POINTCLOUD)
    assert not res.matched and not res.decisions
    [diag] = res.skipped
    assert "global 'refs' ('extern' array without a length (its storage is unknown))" in str(diag)
    # an extern array and a pointer parameter may alias, as a global and a parameter do:
    # the match holds only under a run-time alias guard (docs/matcher.md)
    alias = (
        EXTERN.replace("uint32_t dist_all(void)", "uint32_t dist_all(const int32_t *a)")
        .replace("*p = cloud", "*p = a")
        .replace("extern int32_t cloud[48];\n", "")
    )
    res = _match(tmp_path, alias, POINTCLOUD)
    d = _decision(res, "dist_all", "v3ddist")
    assert d.status == "matched" and d.binding is not None
    assert {str(x.val) for pair in d.binding.guard for x, _, _ in pair} == {"@refs", "a"}
    assert "} else {" in _checked(res)
    # the file defines the array after declaring it: no second definition for the check
    defined = EXTERN + "int32_t refs[64];\n"
    res = _match(tmp_path, defined, POINTCLOUD)
    [cf] = [f for f in res.program.functions if f.name == "dist_all"] if res.program else []
    assert cf.extern_defs == ["int32_t cloud[48];\n"]
    _checked(res)


def test_final_check_compares_the_extern_storage_it_defines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken emitter whose call's writes to the extern array are undone: only the
    comparison of the storage the check defined for it can tell."""
    res = _match(tmp_path, EXTERN, POINTCLOUD)
    real = emit.replacement

    def losing(d, cf, source):  # type: ignore[no-untyped-def]
        a, b, text = real(d, cf, source)
        save = "int32_t aquas_keep[16]; __builtin_memcpy(aquas_keep, &refs[48], 64);"
        back = "__builtin_memcpy(&refs[48], aquas_keep, 64);"
        return a, b, f"{{ {save} {text} {back} }}"

    monkeypatch.setattr(emit, "replacement", losing)
    assert rewrite_c(res) == EXTERN
    d = _decision(res, "dist_all", "v3ddist")
    assert d.reason == FINAL and "global refs differs at byte 192" in d.detail


# -- a counted while loop with a run-time bound is strip-mined like a for loop ---------

DOT_N = """#include <stdint.h>

int32_t dot_n(const int16_t *a, const int16_t *b, int n)
{
    int32_t acc = 0;
    int i = 0;
    while (i < n) {
        acc += a[i] * b[i];
        i++;
    }
    return acc;
}
"""

DOT_N_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
int32_t dot_n(const int16_t *a, const int16_t *b, int n);
static int16_t s[128];
"""
    + RNG_C
    + """int main(void)
{
    static const int ns[] = {0, 5, 16, 35, 48, 63};
    for (int i = 0; i < 128; i++) s[i] = (int16_t)rnd();
    for (int k = 0; k < 6; k++) printf("%x\\n", (unsigned)dot_n(s, s + 64, ns[k]));
    return 0;
}
"""
)


def test_counted_while_with_a_run_time_bound_is_strip_mined(tmp_path: Path) -> None:
    res = _match(tmp_path, DOT_N, DSP)
    [d] = res.matched
    assert d.isax == "vdot16" and d.binding is not None and d.binding.chunk == 16
    new = _checked(res)
    assert "for (; i + 15 < (n); i += 16)" in new
    assert "acc += (int32_t)aquas_vdot16(" in new
    # the original while loop runs the remainder
    assert "        while (i < n) {\n            acc += a[i] * b[i];\n            i++;\n" in new
    s = [_s(v, 16) for v in _lcg(128)]
    expected = "".join(
        f"{sum(s[i] * s[64 + i] for i in range(n)) & M32:x}\n" for n in (0, 5, 16, 35, 48, 63)
    )
    assert iss_outputs(res, DOT_N, new, DOT_N_MAIN, tmp_path) == [expected, expected]


# -- a stateful filter (biquad) in a counted while loop ---------------------------------

BQ_WHILE = """#include <stdint.h>

void bq_while(const int16_t *restrict k, int16_t *restrict s, int n)
{
    int i = 0;
    while (i < n) {
        int16_t x = s[4 + i];
        int64_t acc = (int64_t)k[0] * x + (int64_t)k[1] * s[0] + (int64_t)k[2] * s[1]
                      - (int64_t)k[3] * s[2] - (int64_t)k[4] * s[3];
        int64_t q = (acc + 8192) >> 14;
        int16_t y = q > 32767 ? 32767 : (q < -32768 ? -32768 : (int16_t)q);
        s[1] = s[0];
        s[0] = x;
        s[3] = s[2];
        s[2] = y;
        s[4 + i] = y;
        i++;
    }
}
"""

BQ_K = [4096, 8192, 4096, -15000, 6000]  # b0, b1, b2, a1, a2 (Q2.14)
BQ_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void bq_while(const int16_t *restrict k, int16_t *restrict s, int n);
static const int16_t k[5] = {"""
    + ", ".join(map(str, BQ_K))
    + """};
static int16_t s[4 + 20];
"""
    + RNG_C
    + """int main(void)
{
    for (int i = 0; i < 24; i++) s[i] = (int16_t)rnd();
    bq_while(k, s, 20);
    bq_while(k, s, 0);
    for (int i = 0; i < 24; i++) printf("%x ", (unsigned)(uint16_t)s[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_biquad_filter_in_a_counted_while_loop_runs_on_the_iss(tmp_path: Path) -> None:
    res = _match(tmp_path, BQ_WHILE, DSP)
    [d] = res.matched
    assert d.isax == "biquad"
    new = _checked(res)
    assert "aquas_biquad_restore(((uint32_t)(uintptr_t)s));" in new
    # the call, then the counter's step, as the while loop's body
    assert "(uint16_t)aquas_biquad((uint32_t)(uint16_t)(" in new and "))); i++; }" in new
    s = [_s(v, 16) for v in _lcg(24)]
    coef = dict(zip(("b0", "b1", "b2", "a1", "a2"), BQ_K, strict=True))
    hist = dict(zip(("x1", "x2", "y1", "y2"), s[:4], strict=True))
    for i in range(20):
        s[4 + i] = biquad_step(coef, hist, s[4 + i])
    s[:4] = [hist["x1"], hist["x2"], hist["y1"], hist["y2"]]
    expected = "".join(f"{v & 0xFFFF:x} " for v in s) + "\n"
    assert iss_outputs(res, BQ_WHILE, new, BQ_MAIN, tmp_path) == [expected, expected]


# -- the filter's history in local scalars ----------------------------------------------

BQ_LOCALS = """#include <stdint.h>

void bq_section(const int16_t *restrict k, int16_t *restrict h, int16_t *restrict buf, int n)
{
    int16_t xa = h[0], xb = h[1], ya = h[2], yb = h[3];
    for (int i = 0; i < n; i++) {
        int16_t x = buf[i];
        int64_t acc = (int64_t)k[0] * x + (int64_t)k[1] * xa + (int64_t)k[2] * xb
                      - (int64_t)k[3] * ya - (int64_t)k[4] * yb;
        int64_t q = (acc + 8192) >> 14;
        int16_t y = q > 32767 ? 32767 : (q < -32768 ? -32768 : (int16_t)q);
        xb = xa;
        xa = x;
        yb = ya;
        ya = y;
        buf[i] = y;
    }
    h[0] = xa;
    h[1] = xb;
    h[2] = ya;
    h[3] = yb;
}
"""

BQ_LOCALS_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void bq_section(const int16_t *restrict k, int16_t *restrict h, int16_t *restrict buf, int n);
static const int16_t k[5] = {"""
    + ", ".join(map(str, BQ_K))
    + """};
static int16_t h[4], buf[24];
"""
    + RNG_C
    + """int main(void)
{
    for (int i = 0; i < 4; i++) h[i] = (int16_t)rnd();
    for (int i = 0; i < 24; i++) buf[i] = (int16_t)rnd();
    bq_section(k, h, buf, 24);
    bq_section(k, h, buf, 0);
    for (int i = 0; i < 4; i++) printf("%x ", (unsigned)(uint16_t)h[i]);
    for (int i = 0; i < 24; i++) printf("%x ", (unsigned)(uint16_t)buf[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_biquad_history_in_locals_runs_on_the_iss(tmp_path: Path) -> None:
    res = _match(tmp_path, BQ_LOCALS, DSP)
    [d] = res.matched
    assert d.isax == "biquad" and d.filter is not None
    assert d.filter.hist_locals == ("xa", "xb", "ya", "yb")  # x1, x2, y1, y2
    new = _checked(res)
    assert "static uint16_t aquas_hist[4];" in new
    assert "aquas_hist[0] = (uint16_t)xa;" in new and "yb = (int16_t)aquas_hist[3];" in new
    assert "aquas_biquad_restore(((uint32_t)(uintptr_t)aquas_hist));" in new
    vals = _lcg(28)
    hist = dict(zip(("x1", "x2", "y1", "y2"), (_s(v, 16) for v in vals[:4]), strict=True))
    coef = dict(zip(("b0", "b1", "b2", "a1", "a2"), BQ_K, strict=True))
    out = [biquad_step(coef, hist, _s(v, 16)) for v in vals[4:]]
    words = [hist["x1"], hist["x2"], hist["y1"], hist["y2"], *out]
    expected = "".join(f"{v & 0xFFFF:x} " for v in words) + "\n"
    assert iss_outputs(res, BQ_LOCALS, new, BQ_LOCALS_MAIN, tmp_path) == [expected, expected]


def test_history_in_locals_near_misses(tmp_path: Path) -> None:
    # the history shifted in the wrong order: xb gets the new sample, not the old xa
    wrong = BQ_LOCALS.replace(
        "        xb = xa;\n        xa = x;\n", "        xa = x;\n        xb = xa;\n"
    )
    res = _match(tmp_path, wrong, DSP)
    assert not res.matched
    d = _decision(res, "bq_section", "biquad")
    assert d.reason == "value mismatch" and d.detail.startswith("the history in locals ")
    # a fifth carried local (the output's sum) is not part of the unit's state
    extra = (
        BQ_LOCALS.replace("    for (int i", "    int32_t sum = 0;\n    for (int i")
        .replace("        buf[i] = y;\n", "        buf[i] = y;\n        sum += y;\n")
        .replace("    h[3] = yb;\n", "    h[3] = yb;\n    buf[0] = (int16_t)sum;\n")
    )
    res = _match(tmp_path, extra, DSP)
    assert not res.matched
    d = _decision(res, "bq_section", "biquad")
    assert d.reason == LIVEOUT and d.detail.startswith(
        "the loop carries local variables (xb, xa, yb, ya, sum) that are not exactly the "
        "filter's history"
    )


# -- strip-mining loops that walk pointers: constant and run-time counts ----------------

WALK = """#include <stdint.h>

int32_t dot35(const int16_t *restrict a, const int16_t *restrict b, int32_t *out)
{
    int32_t acc = 0;
    for (int i = 0; i < 35; i++) {
        acc += *a * *b;
        a++;
        b++;
    }
    out[0] = *a;
    out[1] = *b;
    return acc;
}

int32_t dot_down(const int16_t *a, const int16_t *b, int n, int32_t *out)
{
    int32_t acc = 0;
    while (n--)
        acc += *a++ * *b++;
    out[0] = *a;
    out[1] = *b;
    out[2] = n;
    return acc;
}

int32_t dot_for_down(const int16_t *a, const int16_t *b, unsigned n, int32_t *out)
{
    int32_t acc = 0;
    for (; n > 0; n--) {
        acc += *a * *b;
        a++;
        b++;
    }
    out[0] = *a;
    out[1] = *b;
    out[2] = (int32_t)n;
    return acc;
}

int32_t dot_rev(const int16_t *restrict a, const int16_t *restrict b, int n)
{
    int32_t acc = 0;
    while (n--)
        acc += a[n] * b[n];
    return acc;
}

int32_t dot_up(const int16_t *x, const int16_t *y, int n, int32_t *out)
{
    int32_t acc = 0;
    const int16_t *p = x + 1;
    int i;
    for (i = 0; i < n; i++)
        acc += *p++ * *y++;
    out[0] = *p;
    out[1] = *y;
    out[2] = i;
    return acc;
}
"""


def _dot_main(protos: str, ns: tuple[int, ...], body: str) -> str:
    """A driver over the ``int16_t`` array ``s`` (LCG-filled): ``protos`` declares the
    kernels, ``body`` is ``main``'s after the fill, with the counts ``ns`` in the array
    ``ns`` (``NS`` in ``body`` stands for their number); ``show`` prints a result and the
    contents of ``o``."""
    return (
        '#include <stdint.h>\n#include "aquas_rt.h"\n'
        + protos
        + """static int16_t s[128];
static int32_t o[3];
static void show(int32_t r) { printf("%x %x %x %x\\n", (unsigned)r, (unsigned)o[0], (unsigned)o[1], (unsigned)o[2]); }
"""
        + RNG_C
        + "int main(void)\n{\n    static const int ns[] = {"
        + ", ".join(map(str, ns))
        + "};\n    for (int i = 0; i < 128; i++) s[i] = (int16_t)rnd();\n"
        + body.replace("NS", str(len(ns)))
        + "    return 0;\n}\n"
    )


WALK_NS = (0, 1, 15, 16, 17, 35)
WALK_MAIN = _dot_main(
    """int32_t dot35(const int16_t *restrict a, const int16_t *restrict b, int32_t *out);
int32_t dot_down(const int16_t *a, const int16_t *b, int n, int32_t *out);
int32_t dot_for_down(const int16_t *a, const int16_t *b, unsigned n, int32_t *out);
int32_t dot_up(const int16_t *x, const int16_t *y, int n, int32_t *out);
int32_t dot_rev(const int16_t *restrict a, const int16_t *restrict b, int n);
""",
    WALK_NS,
    """    o[2] = 7;
    show(dot35(s + 3, s + 60, o));
    for (int k = 0; k < NS; k++) {
        show(dot_down(s, s + 50, ns[k], o));
        show(dot_for_down(s + 7, s + 64, (unsigned)ns[k], o));
        show(dot_up(s + 2, s + 70, ns[k], o));
        printf("%x\\n", (unsigned)dot_rev(s + 5, s + 90, ns[k]));
    }
""",
)


def _walk_expected() -> str:
    s = [_s(v, 16) for v in _lcg(128)]

    def line(a: int, b: int, n: int, left: int) -> str:
        acc = sum(s[a + k] * s[b + k] for k in range(n))
        return " ".join(f"{v & M32:x}" for v in (acc, s[a + n], s[b + n], left)) + "\n"

    out = line(3, 60, 35, 7)
    for n in WALK_NS:  # while (n--) leaves n at -1, for (; n > 0; n--) at 0, i at n
        out += line(0, 50, n, -1) + line(7, 64, n, 0) + line(3, 70, n, n)
        out += f"{sum(s[5 + k] * s[90 + k] for k in range(n)) & M32:x}\n"
    return out


def test_pointer_walks_are_strip_mined_with_exact_final_pointers(tmp_path: Path) -> None:
    """35 = 2 x 16 + 3 walked by pointers, and run-time counts (while (n--), for (; n > 0;
    n--), a counted for over a local pointer): chunks of vdot16 calls on the pointers'
    values at each chunk's start, the pointers and counters moved as the loop moves them,
    the original loop for the remainder; the final pointers and counters are observed."""
    res = _match(tmp_path, WALK, DSP)
    got = {d.function: d for d in res.matched}
    assert sorted(got) == ["dot35", "dot_down", "dot_for_down", "dot_rev", "dot_up"]
    rev = got.pop("dot_rev")  # a[n] while n counts down: the chunk ends where n starts
    assert rev.binding is not None and rev.binding.operands is not None
    assert rev.binding.operands["rs1"] == linear_term(
        linear(
            binop(
                "add",
                binop("add", var("a", 32), binop("mul", var("n", 32), const(32, 2))),
                const(32, -32 & M32),
            )
        )
    )
    for f, d in got.items():
        assert d.isax == "vdot16" and d.binding is not None and d.binding.chunk == 16
        names = ("p", "y") if f == "dot_up" else ("a", "b")
        assert d.binding.operands == {"rs1": var(names[0], 32), "rs2": var(names[1], 32)}
    assert got["dot_down"].binding and got["dot_down"].binding.walks == {
        "a": (16, 2),
        "b": (16, 2),
        "n": (-16, 0),
    }
    new = _checked(res)
    call = "acc += (int32_t)aquas_vdot16((uint32_t)(uintptr_t)a, (uint32_t)(uintptr_t)b);"
    assert new.count(call) == 3
    assert "for (; i + 16 <= 35; i += 16, a += 16, b += 16)" in new
    assert "for (; n >= 16; a += 16, b += 16, n -= 16)\n" in new
    assert "        while (n--)\n            acc += *a++ * *b++;\n    }" in new  # the remainder
    assert "    for (; n > 0; n--)\n" in new
    assert "for (; i + 15 < (n); i += 16, p += 16, y += 16)" in new
    assert "for (; n >= 16; n -= 16)\n" in new  # dot_rev: only the counter moves
    expected = _walk_expected()
    assert iss_outputs(res, WALK, new, WALK_MAIN, tmp_path) == [expected, expected]


WALK_NEAR = """#include <stdint.h>

int32_t step2(const int16_t *a, const int16_t *b, int n)
{
    int32_t acc = 0;
    while (n--) {
        acc += *a * *b;
        a += 2;
        b++;
    }
    return acc;
}

int32_t writes(int16_t *a, const int16_t *b, int n)
{
    int32_t acc = 0;
    while (n--) {
        acc += *a * *b;
        *a++ = 0;
        b++;
    }
    return acc;
}

int32_t counter_data(const int16_t *a, const int16_t *b, int n)
{
    int32_t acc = 0;
    while (n--) {
        acc += *a++ * *b++;
        if (*a == 0)
            n--;
    }
    return acc;
}
"""


def test_pointer_walk_near_misses_stay_in_software(tmp_path: Path) -> None:
    res = _match(tmp_path, WALK_NEAR, DSP)
    assert not res.matched and rewrite_c(res) == WALK_NEAR
    # a pointer stepped by 2: every other element of a (the chunk of 16 was tried)
    d = _decision(res, "step2", "vdot16")
    assert d.reason == SHAPE
    assert any(
        b.startswith("line 6, chunks of 16: footprint mismatch: the region reads add32(a, ")
        for b in d.blockers
    )
    d = _decision(res, "writes", "vdot16")  # the walked pointer is also written through
    assert d.reason == SHAPE and d.detail == "16 stored locations vs 0 written by vdot16"
    # the counter also moves with the data: not counted down, no chunk
    d = _decision(res, "counter_data", "vdot16")
    assert d.reason == UNSUPPORTED and d.detail.startswith(
        "while loop with a data-dependent condition (cmp.ne(n, 0))"
    )


# -- a register ISAX on a statement that walks pointers ----------------------------------

KYBER = ROOT / "examples/crypto/kyber.isax"
REG_WALK = """#include <stdint.h>

void mul_walk(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    while (n--)
        *r++ = ((*a++ & 0xffff) * (*b++ & 0xffff)) % 3329;
}

uint32_t mul_last(const uint32_t *a, const uint32_t *b, int n, uint32_t *out)
{
    uint32_t x = 0;
    for (int i = 0; i < n; i++) {
        x = ((*++a & 0xffff) * (*b & 0xffff)) % 3329;
        b += 2;
    }
    out[0] = *a;
    out[1] = *b;
    return x;
}

uint32_t mul_decl(const uint32_t *a, const uint32_t *b, uint32_t *r, int n)
{
    uint32_t s = 0;
    for (int i = 0; i < n; i++) {
        uint32_t x = ((*a++ & 0xffff) * (*b & 0xffff)) % 3329;
        b++;
        r[i] = x;
        s ^= x;
    }
    return s;
}

void mul_xor(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    while (n--)
        *r++ = (((*a++ & 0xffff) * (*b++ & 0xffff)) % 3329) ^ 0x5a5a;
}

void mul_other_q(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    while (n--)
        *r++ = ((*a++ & 0xffff) * (*b++ & 0xffff)) % 3331;
}
"""

REG_WALK_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void mul_walk(uint32_t *r, const uint32_t *a, const uint32_t *b, int n);
uint32_t mul_last(const uint32_t *a, const uint32_t *b, int n, uint32_t *out);
void mul_xor(uint32_t *r, const uint32_t *a, const uint32_t *b, int n);
static uint32_t a[40], b[80], r[40], o[2], x8[9];
"""
    + RNG_C
    + """int main(void)
{
    for (int i = 0; i < 40; i++) a[i] = rnd();
    for (int i = 0; i < 80; i++) b[i] = rnd();
    for (int i = 0; i < 40; i++) r[i] = rnd();
    mul_walk(r, a, b, 35);
    for (int i = 0; i < 40; i++) printf("%x ", (unsigned)r[i]);
    printf("\\n");
    for (int n = 0; n <= 17; n += 17) {
        uint32_t x = mul_last(a, b, n, o);
        printf("%x %x %x\\n", (unsigned)x, (unsigned)o[0], (unsigned)o[1]);
    }
    mul_xor(x8, b + 1, a + 3, 8);
    for (int i = 0; i < 9; i++) printf("%x ", (unsigned)x8[i]);
    return 0;
}
"""
)


def test_register_isax_on_a_pointer_walking_statement_runs_on_the_iss(tmp_path: Path) -> None:
    """``*r++ = modmul(*a++, *b++)``: the call reads the loads through the pointers'
    values before the statement, and each step still happens once, after it."""
    res = _match(tmp_path, REG_WALK, KYBER)
    got = {d.function: d for d in res.matched}
    assert sorted(got) == ["mul_decl", "mul_last", "mul_walk", "mul_xor"]  # not % 3331
    d = got["mul_walk"]
    assert d.isax == "modmul_q" and d.binding is not None and d.store
    assert d.binding.walks == {"a": (1, 4), "b": (1, 4), "r": (1, 4)}
    assert d.binding.operands == {"rs1": load(32, var("b", 32)), "rs2": load(32, var("a", 32))}
    new = _checked(res)
    op = "(uint32_t)(*(const uint32_t *)(uintptr_t)((uint32_t)(uintptr_t){} + {}u))"
    assert (
        f"*r++ = aquas_modmul_q({op.format('b', 0)}, {op.format('a', 0)}), a += 1, b += 1;" in new
    )
    # ++a reads the element after a's value before the statement
    assert f"x = (uint32_t)aquas_modmul_q({op.format('b', 0)}, {op.format('a', 4)}), a += 1;" in new
    # a declaration's step follows it as a statement of its own
    assert (
        f"uint32_t x = (uint32_t)aquas_modmul_q({op.format('b', 0)}, {op.format('a', 0)});\n"
        "        a += 1;\n        b++;\n"
    ) in new
    assert "% 3331;" in new
    # a part of the value (match_parts), the steps kept alike
    assert (
        f"*r++ = (aquas_modmul_q({op.format('b', 0)}, {op.format('a', 0)}) ^ 23130u), "
        "a += 1, b += 1;"
    ) in new
    vals = _lcg(160)
    a, b, r = vals[:40], vals[40:120], vals[120:]
    for k in range(35):
        r[k] = ((a[k] & 0xFFFF) * (b[k] & 0xFFFF)) % 3329
    expected = " ".join(f"{v:x}" for v in r) + " \n"
    expected += f"0 {a[0]:x} {b[0]:x}\n"
    x = ((a[17] & 0xFFFF) * (b[32] & 0xFFFF)) % 3329
    expected += f"{x:x} {a[17]:x} {b[34]:x}\n"
    x8 = [((b[1 + k] & 0xFFFF) * (a[3 + k] & 0xFFFF)) % 3329 ^ 0x5A5A for k in range(8)]
    expected += "".join(f"{v:x} " for v in [*x8, 0])
    outs = iss_outputs(res, REG_WALK, new, REG_WALK_MAIN, tmp_path)
    assert outs == [expected, expected]


# -- an accumulator ISAX (dot4_i8, unit state) over a pointer walk -----------------------

LLM = ROOT / "examples/llm/llm.isax"
DOT8 = """#include <stdint.h>

int32_t dot8(const int8_t *a, const int8_t *b, int n, int32_t *out)
{
    int32_t acc = 0;
    while (n--)
        acc += *a++ * *b++;
    out[0] = *a;
    out[1] = *b;
    out[2] = n;
    return acc;
}
"""

DOT8_CASES = [(0, 64, n) for n in (0, 1, 3, 4, 5, 8, 9, 35)] + [(1, 65, 35), (4, 66, 13)]
DOT8_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
int32_t dot8(const int8_t *a, const int8_t *b, int n, int32_t *out);
static int8_t s[128] __attribute__((aligned(4)));
static int32_t o[3];
"""
    + RNG_C
    + """int main(void)
{
    static const int cases[][3] = {"""
    + ", ".join(f"{{{x}, {y}, {n}}}" for x, y, n in DOT8_CASES)
    + """};
    for (int i = 0; i < 128; i++) s[i] = (int8_t)rnd();
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int32_t r = dot8(s + cases[k][0], s + cases[k][1], cases[k][2], o);
        printf("%x %x %x %x\\n", (unsigned)r, (unsigned)o[0], (unsigned)o[1], (unsigned)o[2]);
    }
    return 0;
}
"""
)


def test_accumulator_isax_over_a_pointer_walk_runs_on_the_iss(tmp_path: Path) -> None:
    """``while (n--) acc += *a++ * *b++`` over int8: dot4_i8 chunks of 4 (two per trip)
    from the pointers' values, the words' alignment checked at run time (misaligned
    pointers run the original loop), the pointers and ``n`` exact after the loop."""
    res = _match(tmp_path, DOT8, LLM)
    [d] = res.matched
    assert d.isax == "dot4_i8" and d.binding is not None and d.binding.chunk == 4
    assert d.binding.walks == {"a": (4, 1), "b": (4, 1), "n": (-4, 0)}
    new = _checked(res)
    assert "for (; n >= 8; a += 8, b += 8, n -= 8) {" in new
    assert "for (; n >= 4; a += 4, b += 4, n -= 4)\n" in new
    s = [_s(v, 8) for v in _lcg(128)]
    expected = ""
    for x, y, n in DOT8_CASES:
        acc = sum(s[x + k] * s[y + k] for k in range(n))
        expected += " ".join(f"{v & M32:x}" for v in (acc, s[x + n], s[y + n], -1)) + "\n"
    assert iss_outputs(res, DOT8, new, DOT8_MAIN, tmp_path) == [expected, expected]


# -- counters tested against a bound, do { } while (--n), masked locals ------------------

BOUND = """#include <stdint.h>

int32_t dot_do_n(const int16_t *a, const int16_t *b, unsigned n, int32_t *out)
{
    int32_t acc = 0;
    do {
        acc += *a++ * *b++;
    } while (--n);
    out[0] = *a;
    out[1] = *b;
    out[2] = (int32_t)n;
    return acc;
}

int32_t dot_above(const int16_t *a, const int16_t *b, int n, int32_t *out)
{
    int32_t acc = 0;
    while (n > 3) {
        acc += *a++ * *b++;
        n--;
    }
    out[0] = *a;
    out[1] = *b;
    out[2] = n;
    return acc;
}

int32_t dot_ge(const int16_t *a, const int16_t *b, int n, int32_t *out)
{
    int32_t acc = 0;
    for (; n >= 4; n -= 1) {
        acc += *a * *b;
        a++;
        b++;
    }
    out[0] = *a;
    out[1] = *b;
    out[2] = n;
    return acc;
}
"""

BOUND_NS = (1, 3, 4, 17, 19, 20, 35)
BOUND_MAIN = _dot_main(
    """int32_t dot_do_n(const int16_t *a, const int16_t *b, unsigned n, int32_t *out);
int32_t dot_above(const int16_t *a, const int16_t *b, int n, int32_t *out);
int32_t dot_ge(const int16_t *a, const int16_t *b, int n, int32_t *out);
""",
    BOUND_NS,
    """    for (int k = 0; k < NS; k++) {
        show(dot_do_n(s + 1, s + 60, (unsigned)ns[k], o));
        show(dot_above(s + 4, s + 80, ns[k], o));
        show(dot_ge(s + 9, s + 41, ns[k], o));
    }
""",
)


def test_counters_with_a_bound_and_do_while_are_strip_mined(tmp_path: Path) -> None:
    """``do { } while (--n)`` with a run-time n (the first trip runs before any test: the
    chunks run while n > 16, so the original loop still starts from n >= 1), and counters
    tested against a bound other than 0 (``while (n > 3)``, ``for (; n >= 4; n -= 1)``:
    the chunks run while n >= 3 + 16): vdot16 chunks, the original loop for the rest, the
    final pointers and counters observed on the ISS."""
    res = _match(tmp_path, BOUND, DSP)
    got = {d.function: d for d in res.matched}
    assert sorted(got) == ["dot_above", "dot_do_n", "dot_ge"]
    for d in got.values():
        assert d.isax == "vdot16" and d.binding is not None and d.binding.chunk == 16
        assert d.binding.walks == {"a": (16, 2), "b": (16, 2), "n": (-16, 0)}
    new = _checked(res)
    assert (
        new.count("acc += (int32_t)aquas_vdot16((uint32_t)(uintptr_t)a, (uint32_t)(uintptr_t)b);")
        == 3
    )
    assert "for (; n >= 17; a += 16, b += 16, n -= 16)\n" in new  # do-while: n > 16
    assert new.count("for (; n >= 19; a += 16, b += 16, n -= 16)\n") == 2  # n > 3, n >= 4
    assert "        } while (--n);\n    }" in new  # the original loops do the rest
    assert "        while (n > 3) {\n" in new
    assert "    for (; n >= 4; n -= 1)\n" in new
    s = [_s(v, 16) for v in _lcg(128)]

    def line(a: int, b: int, trips: int, left: int) -> str:
        acc = sum(s[a + k] * s[b + k] for k in range(trips))
        return " ".join(f"{v & M32:x}" for v in (acc, s[a + trips], s[b + trips], left)) + "\n"

    expected = ""
    for n in BOUND_NS:  # do-while: n trips, n ends at 0; the others n - 3 trips, end at 3
        expected += line(1, 60, n, 0)
        expected += line(4, 80, max(0, n - 3), min(n, 3))
        expected += line(9, 41, max(0, n - 3), min(n, 3))
    assert iss_outputs(res, BOUND, new, BOUND_MAIN, tmp_path) == [expected, expected]


MASKED = """#include <stdint.h>

void mul_masked(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    while (n--) {
        uint32_t x = *a++ & 0xffff;
        uint32_t y = *b++ & 0xffff;
        *r++ = (x * y) % 3329;
    }
}

void mul_masked_idx(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t x = a[i] & 0xfff;
        uint32_t y = (uint16_t)b[i];
        r[i] = (x * y) % 3329;
    }
}

void mul_masked_near(uint32_t *r, const uint32_t *a, const uint32_t *b, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t x = a[i] & 0x1ffff;
        uint32_t y = b[i] & 0xffff;
        r[i] = (x * y) % 3329;
    }
}
"""

MASKED_MAIN = (
    """#include <stdint.h>
#include "aquas_rt.h"
void mul_masked(uint32_t *r, const uint32_t *a, const uint32_t *b, int n);
void mul_masked_idx(uint32_t *r, const uint32_t *a, const uint32_t *b, int n);
void mul_masked_near(uint32_t *r, const uint32_t *a, const uint32_t *b, int n);
static uint32_t a[24], b[24], r[24];
"""
    + RNG_C
    + """int main(void)
{
    for (int i = 0; i < 24; i++) a[i] = rnd();
    for (int i = 0; i < 24; i++) b[i] = rnd();
    mul_masked(r, a, b, 20);
    mul_masked_idx(r + 20, a + 3, b + 7, 2);
    mul_masked_near(r + 22, a + 5, b + 1, 2);
    for (int i = 0; i < 24; i++) printf("%x ", (unsigned)r[i]);
    printf("\\n");
    return 0;
}
"""
)


def test_masked_locals_of_walked_loads_are_register_operands(tmp_path: Path) -> None:
    """``x = *a++ & 0xffff; ... (x * y) % q``: the local holds a value computed from a load
    no variable holds; it is the operand (the ISAX reads its low 16 bits, which the mask
    leaves as they are), the proof sees ``x & 0xffff``. A 17-bit mask is not modmul_q."""
    res = _match(tmp_path, MASKED, KYBER)
    got = {d.function: d for d in res.matched}
    assert sorted(got) == ["mul_masked", "mul_masked_idx"]
    for d in got.values():
        assert d.isax == "modmul_q" and d.binding is not None and d.store
    assert got["mul_masked"].binding is not None
    assert got["mul_masked"].binding.regs == {"rs1": var("y", 32), "rs2": var("x", 32)}
    # the proof knows x's bits above the mask are clear, not that x is the mask of itself:
    # the 12-bit local is the computed operand x & 0xfff (the same value)
    assert got["mul_masked_idx"].binding is not None
    assert got["mul_masked_idx"].binding.regs == {
        "rs1": var("y", 32),
        "rs2": binop("and", var("x", 32), const(32, 0xFFF)),
    }
    new = _checked(res)
    assert new.count("r[i] = (x * y) % 3329;") == 1  # the 17-bit mask stays in software
    assert "*r++ = aquas_modmul_q((uint32_t)y, (uint32_t)x);" in new
    assert "r[i] = aquas_modmul_q((uint32_t)y, (uint32_t)((uint32_t)x & 4095u));" in new
    vals = _lcg(48)
    a, b = vals[:24], vals[24:]
    r = [((a[k] & 0xFFFF) * (b[k] & 0xFFFF)) % 3329 for k in range(20)]
    r += [((a[3 + k] & 0xFFF) * (b[7 + k] & 0xFFFF)) % 3329 for k in range(2)]
    r += [((a[5 + k] & 0x1FFFF) * (b[1 + k] & 0xFFFF) & M32) % 3329 for k in range(2)]
    expected = " ".join(f"{v:x}" for v in r) + " \n"
    assert iss_outputs(res, MASKED, new, MASKED_MAIN, tmp_path) == [expected, expected]
