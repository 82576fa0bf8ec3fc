"""C frontend, calls: small static helpers are inlined (bit-exact against gcc), other calls
stay opaque ``func.call`` statements that no matched region spans."""

from __future__ import annotations

import ctypes
import random
import re
from pathlib import Path

import pytest
from cfront_eval import Evaluator
from test_cfront import _run_both, lowered_and_compiled
from xdsl.dialects import func

from aquas.egraph.cfront import CProgram, parse_c
from aquas.egraph.driver import match_file
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import Options

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "cfront-tests"

KERNELS = r"""
#include <stdint.h>
typedef struct { int32_t x, y, z; } point;

static inline int16_t sat16(int32_t v)
{
    if (v > 32767)
        return 32767;
    if (v < -32768)
        return -32768;
    return (int16_t)v;
}
static int32_t sq(int32_t d) { return d * d; }
static int32_t dist2(const point *a, const point *b)
{
    return sq(a->x - b->x) + sq(a->y - b->y) + sq(a->z - b->z);
}
static int32_t clampi(int32_t v, int32_t lo, int32_t hi)
{
    if (v < lo)
        v = lo;
    else if (v > hi)
        v = hi;
    return v;
}
static int32_t sgn(int32_t v)
{
    if (v > 0) {
        int32_t one = 1;
        return one;
    } else if (v < 0)
        return -1;
    return 0;
}
static int32_t sum3(const int32_t *p)
{
    int32_t s = 0;
    for (int k = 0; k < 3; k++)
        s += p[k];
    return s;
}
static void put(int32_t *o, int k, int32_t v) { o[k] = v; }

void sat_all(const int32_t *in, int16_t *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = sat16(in[i] >> 12);
}
uint32_t dists(const int32_t *a, const int32_t *b)
{
    const point *p = (const point *)a;
    const point *q = (const point *)b;
    uint32_t t = 0;
    for (int i = 0; i < 15; i++)
        t += (uint32_t)dist2(&p[i], q + i);
    return t;
}
int32_t use_clamp(int32_t a) { int32_t r = clampi(a, -5, 9); return r + clampi(a * 3, 0, 100); }
int32_t use_sgn(int32_t a, int32_t b) { return sgn(a) * 10 + sgn(b - a); }
void use_put(const int32_t *in, int32_t *out)
{
    for (int i = 0; i < 8; i++)
        put(out, i + 1, sum3(in + 3 * i) + clampi(in[i], -3, 3));
}
"""

KERNEL_NAMES = ["sat_all", "dists", "use_clamp", "use_sgn", "use_put"]


@pytest.fixture(scope="module")
def kernels() -> tuple[CProgram, ctypes.CDLL]:
    return lowered_and_compiled(KERNELS, "calls")


def test_callers_are_lowered(kernels: tuple[CProgram, ctypes.CDLL]) -> None:
    prog, _ = kernels
    lowered = {f.name for f in prog.functions if f.func is not None}
    assert set(KERNEL_NAMES) <= lowered
    # inlined: no call is left in the callers
    assert "func.call" not in str(prog.module)


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_inlined_kernel_matches_gcc(kernels: tuple[CProgram, ctypes.CDLL], name: str) -> None:
    prog, lib = kernels
    ev = Evaluator(prog.module)
    fn = next(f for f in prog.functions if f.name == name)
    rng = random.Random(name)
    for _ in range(24):
        _run_both(fn, lib, ev, rng)


def test_inlined_ops_carry_the_call_site_location(kernels: tuple[CProgram, ctypes.CDLL]) -> None:
    prog, _ = kernels
    fn = next(f for f in prog.functions if f.name == "sat_all")
    assert fn.func is not None
    call_line = KERNELS.count("\n", 0, KERNELS.index("out[i] = sat16")) + 1
    lines = {op.location.line.data for op in fn.func.walk() if hasattr(op.location, "line")}
    helper = range(KERNELS.count("\n", 0, KERNELS.index("static inline int16_t sat16")) + 1,
                   KERNELS.count("\n", 0, KERNELS.index("static int32_t sq")) + 1)  # fmt: skip
    assert call_line in lines and not lines & set(helper)


REFUSED = """#include <stdint.h>
static int32_t store_after(int32_t *o, int32_t v) { if (v < 0) return 0; o[0] = v; return 1; }
static int32_t rec(int32_t n) { return n > 0 ? rec(n - 1) : 0; }
int32_t ext(int32_t v);
int32_t f_store(int32_t *o, int32_t v) { return store_after(o, v); }
int32_t f_rec(int32_t n) { return rec(n) + 1; }
int32_t f_expr(int32_t n) { return ext(n) + 1; }
int32_t f_undeclared(int32_t n) { mystery(n); return n; }
static int32_t knr(v) { return 1; }
int32_t f_knr(int32_t n) { return knr(n); }
int32_t ok(int32_t n) { int32_t r = ext(n); ext(r); return r + 1; }
"""


@pytest.mark.parametrize(
    ("fn", "reason"),
    [
        ("f_store", "store after a conditional 'return' (returns become selections)"),
        ("f_rec", "recursive or deeply nested call of 'rec'"),
        ("f_expr", "call of function 'ext' inside an expression"),
        ("f_undeclared", "call of undeclared function 'mystery'"),
        ("f_knr", "call of 'knr', whose parameters are not all typed"),
        ("knr", "parameter 'v' without a type"),
    ],
)
def test_refused_calls(fn: str, reason: str) -> None:
    prog = parse_c(REFUSED, "app.c")
    funcs = {f.name: f for f in prog.functions}
    assert funcs[fn].func is None
    d = next(d for d in prog.diagnostics if f"'{fn}'" in d.message)
    assert reason in d.message


def test_opaque_calls_are_statements() -> None:
    prog = parse_c(REFUSED, "app.c")
    ok = next(f for f in prog.functions if f.name == "ok")
    assert ok.func is not None
    calls = [op for op in ok.func.walk() if isinstance(op, func.CallOp)]
    assert [c.callee.root_reference.data for c in calls] == ["opaque.ext", "opaque.ext"]
    decls = [op for op in prog.module.ops if isinstance(op, func.FuncOp) and op.is_declaration]
    assert [d.sym_name.data for d in decls] == ["opaque.ext"]
    prog.module.verify()


APP = r"""#include <stdint.h>

typedef struct {
    int32_t x, y, z;
} point;

int32_t calls_seen;

void trace_count(int n)
{
    calls_seen += n;
}

static inline int32_t sq(int32_t v)
{
    return v * v;
}

static int32_t dist2(const point *a, const point *b)
{
    return sq(a->x - b->x) + sq(a->y - b->y) + sq(a->z - b->z);
}

uint32_t kernel(const int32_t *restrict a, int32_t *restrict b)
{
    const point *p = (const point *)a;
    const point *q = (const point *)b;
    trace_count(16);
    uint32_t total = 0;
    for (int i = 0; i < 16; i++) {
        int32_t d = dist2(&p[i], &q[i]);
        b[48 + i] = d;
        total += (uint32_t)d;
    }
    trace_count(0);
    return total;
}
"""


def test_helpers_and_barriers_in_a_matched_function(tmp_path: Path) -> None:
    """An inlined struct helper is matched as v3ddist; the opaque calls around the loop
    stay, and the matcher's final check (native, golden ISAX) accepts the rewrite."""
    src = tmp_path / "app.c"
    src.write_text(APP)
    res = match_file(
        src,
        ROOT / "examples/pointcloud/pointcloud.isax",
        functions=["kernel"],
        options=Options(check_profit=False, core="picorv32"),
        soc="picorv32",
    )
    (d,) = res.matched
    assert d.isax == "v3ddist"
    new = rewrite_c(res)
    body = new[new.index("uint32_t kernel") :]
    assert re.search(r"trace_count\(16\);\s+uint32_t total = 0;\s+/\* aquas: v3ddist \*/", body)
    assert "trace_count(0);" in body and "dist2" not in body


def test_early_returns_of_a_function_are_selections(kernels: tuple[CProgram, ctypes.CDLL]) -> None:
    """The helpers themselves are lowered too: 'if (c) return a; ... return b;' is a
    chain of selections (sat16 clamps to int16 on every edge of the range)."""
    prog, _ = kernels
    ev = Evaluator(prog.module)
    for v in [0, 5, 32767, 32768, -32768, -32769, 1 << 31, (1 << 31) - 1, 123456, -99999]:
        s = v - (1 << 32) if v >= 1 << 31 else v
        assert ev.call("sat16", [v & 0xFFFFFFFF]) == max(-32768, min(32767, s)) & 0xFFFF
    assert [ev.call("sgn", [a & 0xFFFFFFFF]) for a in (-5, 0, 7)] == [0xFFFFFFFF, 0, 1]
    assert [ev.call("clampi", [a & 0xFFFFFFFF, 2, 9]) for a in (-5, 4, 70)] == [2, 4, 9]


def test_early_return_after_a_store_is_refused() -> None:
    src = (
        "#include <stdint.h>\n"
        "int32_t f(int32_t *o, int32_t v) { if (v < 0) return 0; o[0] = v; return 1; }\n"
        "void g(int32_t *o, int32_t v) { if (v < 0) return; o[0] = v; }\n"
    )
    prog = parse_c(src, "e.c")
    assert all(fn.func is None for fn in prog.functions)
    msgs = [d.message for d in prog.diagnostics]
    assert "store after a conditional 'return' (returns become selections)" in msgs[0]
    assert "early 'return'" in msgs[1]
