"""C frontend, structs and multi-dimensional arrays: layouts agree with the host gcc
(``sizeof``/``offsetof``), field accesses become element accesses at the right offsets,
and lowered kernels agree bit for bit with the same C compiled by gcc."""

from __future__ import annotations

import ctypes
import random
import re
import subprocess
from pathlib import Path

import pytest
from cfront_eval import Evaluator
from test_cfront import _run_both, lowered_and_compiled

from aquas.egraph import clayout
from aquas.egraph.cfront import CProgram, parse_c

from helpers import require_tool, without_vdot32

BUILD = Path(__file__).resolve().parent.parent / "build" / "cfront-tests"

# Pointer-free structs: x86-64 (the host) and RV32 ILP32 lay these out alike (every
# integer type naturally aligned, int64 to 8).
LAYOUTS = r"""
#include <stdint.h>
#include <stddef.h>
struct a { int8_t c; int32_t i; int16_t s; };
struct b { int64_t w; int8_t c; };
struct c { int8_t c; int64_t w; int16_t s[3]; };
typedef struct { int16_t x, y; int8_t tag; } d;
struct e { struct a inner; int8_t c; int32_t arr[2][3]; };
typedef struct { uint8_t r, g, b; } rgb;
typedef struct { int32_t x, y, z; } point;
typedef struct { int32_t x, y, z, pad; } point4;
struct f { rgb px[3]; int16_t h; };
"""

FIELDS = {
    "struct a": ["c", "i", "s"],
    "struct b": ["w", "c"],
    "struct c": ["c", "w", "s"],
    "d": ["x", "y", "tag"],
    "struct e": ["inner", "c", "arr"],
    "rgb": ["r", "g", "b"],
    "point": ["x", "y", "z"],
    "point4": ["x", "y", "z", "pad"],
    "struct f": ["px", "h"],
}


def _gcc_layouts(tmp_path: Path) -> dict[str, list[int]]:
    lines = [LAYOUTS, "#include <stdio.h>", "int main(void) {"]
    for ty, fields in FIELDS.items():
        offs = " ".join("%zu" for _ in fields)
        args = ", ".join(f"offsetof({ty}, {f})" for f in fields)
        lines.append(
            f'    printf("{ty}: %zu %zu {offs}\\n", sizeof({ty}), _Alignof({ty}), {args});'
        )
    lines.append("    return 0;\n}")
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text("\n".join(lines))
    subprocess.run(["gcc", "-std=c11", "-o", str(exe), str(src)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {
        k: [int(x) for x in v.split()]
        for k, v in (line.split(": ") for line in out.strip().splitlines())
    }


def test_layout_agrees_with_gcc(tmp_path: Path) -> None:
    require_tool("gcc", "gcc")
    want = _gcc_layouts(tmp_path)
    prog = parse_c(LAYOUTS, "layouts.c")
    assert set(FIELDS) <= set(prog.structs)
    for ty, fields in FIELDS.items():
        st = prog.structs[ty]
        got = [st.size, st.align] + [st.field(f).offset for f in fields]  # type: ignore[union-attr]
        assert got == want[ty], ty


def test_layout_values() -> None:
    """Independent of gcc: the ABI's rules on two cases worked out by hand."""
    i8, i32, i64 = clayout.Scalar(8, True), clayout.Scalar(32, True), clayout.Scalar(64, True)
    s = clayout.struct_layout("s", [("c", i8, False), ("w", i64, False), ("d", i8, False)])
    assert (s.size, s.align, [f.offset for f in s.fields]) == (24, 8, [0, 8, 16])
    p = clayout.struct_layout("p", [("a", clayout.Pointer(i32), False), ("b", i8, False)])
    assert (p.size, p.align) == (8, 4)  # RV32: pointers are 4 bytes
    assert clayout.leaf_widths(p) == {32, 8}


KERNELS = r"""
#include <stdint.h>
typedef struct { int32_t x, y, z; } point;
struct pair { int16_t a; int16_t b[3]; };
typedef struct { int16_t b0, b1, b2, a1, a2; } coefs;
typedef struct { int16_t x1, x2, y1, y2; } hist;
static const int32_t tbl[2][3] = {{1, 2, 3}, {4, 5, 6}};
point cloud[4] = {{1, 2, 3}, {4}, {-7, 8, 9}};

uint32_t dist(const point *a, const point *b) {
    uint32_t s = 0;
    for (int i = 0; i < 15; i++) {
        int32_t dx = a[i].x - b[i].x, dy = a[i].y - b[i].y, dz = a[i].z - b[i].z;
        s += dx * dx + dy * dy + dz * dz;
    }
    return s;
}

int32_t pairs(struct pair *p, int n) {
    int32_t s = 0;
    for (int i = 0; i < n % 10; i++) {
        s += p->b[i % 3] * p[i].a;
        (p + 1)->b[2] = (int16_t)s;
    }
    const struct pair *q = &p[2];
    q++;
    return s + q->a + (*q).b[1] + (int32_t)sizeof(struct pair) + (int32_t)sizeof p[0];
}

void centroid(point *p, int32_t *out) {
    point *q = p;
    int32_t sx = 0, sy = 0, sz = 0;
    for (int i = 0; i < 8; i++) {
        sx += q->x;
        sy += q->y;
        sz += q->z;
        q++;
    }
    p[9].x = sx;
    p[9].y = sy;
    out[0] = sz + cloud[2].x + cloud[1].z;
}

int16_t biquad(const coefs *c, hist *h, int16_t x) {
    int64_t acc = (int64_t)c->b0 * x + (int64_t)c->b1 * h->x1 + (int64_t)c->b2 * h->x2
                  - (int64_t)c->a1 * h->y1 - (int64_t)c->a2 * h->y2;
    int16_t y = (int16_t)(acc >> 14);
    h->x2 = h->x1;
    h->x1 = x;
    h->y2 = h->y1;
    h->y1 = y;
    return y;
}

int32_t mat(int32_t m[][4], int r) {
    int32_t t[4][4];
    r = r & 3;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            t[i][j] = m[i][j] * 3 + tbl[i % 2][j % 3];
    int32_t *row = m[r];
    m[3][3] = t[1][2];
    return t[r][1] + row[2] + (int32_t)sizeof t + (int32_t)sizeof t[0];
}

/* mixed widths: tag@0, v@2, w@4, arr@8, 16 bytes; a 20-byte ring (delay@0, pos@16) */
typedef struct { int8_t tag; int16_t v; int32_t w; int16_t arr[3]; } mixed;
typedef struct { int16_t delay[8]; uint32_t pos; } ring;

int32_t mix(mixed *m, int n) {
    int32_t s = 0;
    for (int i = 0; i < 3; i++) {
        s += m[i].tag * 3 + m[i].v - m[i].w + m[i].arr[i % 3];
        m[i].w = s;
        m[i].arr[2] = (int16_t)(s >> 3);
    }
    mixed *q = &m[1];
    q->tag = (int8_t)n;
    const int16_t *a = q->arr;
    return s + q[1].v + a[1] + (int32_t)sizeof(mixed);
}

int32_t ring_push(ring *r, const int16_t *in, int n) {
    int32_t acc = 0;
    for (int i = 0; i < n % 8; i++) {
        r->pos = (r->pos + 1) & 7;
        r->delay[r->pos] = in[i];
        const int16_t *x = &r->delay[r->pos];
        acc += x[0] * in[i + 1];
    }
    return acc;
}

static int32_t norm1(const point *p) { return p->x + p->y + p->z; }

int32_t struct_local(const point *pts, int n) {
    point acc = {0, 0};
    point first = {pts[0].x, -1, 7};
    for (int i = 0; i < n % 15; i++) {
        acc.x += pts[i].x;
        acc.y += pts[i].y ^ first.y;
        (&acc)->z += pts[i].z * first.z;
    }
    point *q = &acc;
    return acc.x - q->y + norm1(&acc) + norm1(&first) + (int32_t)sizeof acc;
}

void transpose(int16_t a[4][4], int16_t *out) {
    int16_t (*rows)[4] = a;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            out[4 * j + i] = a[i][j] + rows[j][i];
}
"""

KERNEL_NAMES = re.findall(r"^\w+ (\w+)\(", KERNELS, re.M)


@pytest.fixture(scope="module")
def kernels() -> tuple[CProgram, ctypes.CDLL]:
    return lowered_and_compiled(KERNELS, "structs")


def test_every_kernel_is_lowered(kernels: tuple[CProgram, ctypes.CDLL]) -> None:
    prog, _ = kernels
    assert [d.render() for d in prog.diagnostics] == []
    assert all(f.func is not None for f in prog.functions)


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_matches_gcc(kernels: tuple[CProgram, ctypes.CDLL], name: str) -> None:
    prog, lib = kernels
    ev = Evaluator(prog.module)
    fn = next(f for f in prog.functions if f.name == name)
    rng = random.Random(name)
    for _ in range(24):
        _run_both(fn, lib, ev, rng)


def test_aos_field_offsets() -> None:
    """``pts[i].y`` is element 3*i + 1 of the point cloud's i32 memref."""
    prog = parse_c(
        "#include <stdint.h>\ntypedef struct { int32_t x, y, z; } pt;\n"
        "int32_t f(const pt *p, int i) { return p[i].y; }\n",
        "aos.c",
    )
    text = str(prog.module)
    assert "memref<?xi32>" in text
    assert re.search(r"arith.constant 3 : i32", text)
    assert re.search(r"arith.constant 1 : i32", text)
    ev = Evaluator(prog.module)
    buf = list(range(100, 160))
    assert ev.call("f", [buf, 5]) == 100 + 3 * 5 + 1


REFUSED = """#include <stdint.h>
typedef struct { const int16_t *coef; int16_t delay[8]; unsigned pos; } fir;
typedef struct { int32_t x; int8_t tag; } tagged;
tagged table[2] = {{1, 2}, {3, 4}};
struct P { int x; };
typedef struct { int32_t *p; int32_t n; } vec;
union U { int a; short b; };
int32_t f_ptrint(fir *f) { return f->coef[0] + (int32_t)f->coef; }
int32_t f_init(int i) { return table[i].x; }
int32_t f_local(int n) { struct P p, q; p.x = n; q = p; return q.x; }
int32_t f_ptrmember(vec *v) { return v->p[0]; }
int32_t f_union(union U *u) { return u->a; }
int32_t f_nomember(struct P *p) { return p->y; }
void f_badstore(fir *f, const int32_t *c) { f->coef = c; }
void setcoef(fir *f, const int16_t *c) { f->coef = c + 1; f->pos = 0; }
int32_t ok(struct P *p) { return p->x; }
"""


@pytest.mark.parametrize(
    ("fn", "reason", "marker"),
    [
        ("f_ptrint", "pointer member used as an integer", "f->coef;"),
        (
            "f_init",
            "global 'table' (initialiser of 'tagged', which mixes member widths)",
            "table[i]",
        ),
        ("f_local", "assignment of a whole struct", "q = p"),
        ("f_union", "union type", "union U *u"),
        ("f_nomember", "no member 'y' in 'struct P'", "y; }"),
        ("f_badstore", "'int32_t *' stored in a 'int16_t *' member", "c; }"),
    ],
)
def test_refused_aggregates_are_located(fn: str, reason: str, marker: str) -> None:
    prog = parse_c(REFUSED, "app.c")
    funcs = {f.name: f for f in prog.functions}
    assert funcs[fn].func is None
    assert funcs["ok"].func is not None
    d = next(d for d in prog.diagnostics if f"'{fn}'" in d.message)
    assert reason in d.message
    at = REFUSED.index(marker)
    line = REFUSED.count("\n", 0, at) + 1
    assert d.loc is not None and d.loc.line == line


def test_pointer_member_store() -> None:
    """``f->coef = c + 1``: the address (memref and element offset cast to i32) is
    stored through the 32-bit view of the struct at the member's offset (0)."""
    prog = parse_c(REFUSED, "app.c")
    f = next(fn for fn in prog.functions if fn.name == "setcoef")
    assert f.func is not None
    text = str(f.func)
    assert re.search(r"unrealized_conversion_cast %\d+, %\d+ : memref<\?xi16>, i32 to i32", text)
    assert re.search(r"memref.store %\d+, %\d+\[%\d+\] : memref<\?xi32>", text)


def test_pointer_member_is_loaded_then_used() -> None:
    """``v->p[k]`` loads the 32-bit pointer member and reads through it (a cast of the
    loaded value to a memref), in a struct that mixes widths."""
    prog = parse_c(REFUSED, "app.c")
    f = next(fn for fn in prog.functions if fn.name == "f_ptrmember")
    assert f.func is not None
    text = str(f.func)
    assert re.search(r"unrealized_conversion_cast %\d+ : i32 to memref<\?xi32>", text), text


FIR_MAIN = r"""#include <stdint.h>
#include <stdio.h>
#include "filters.h"
static int16_t coef[FIR_TAPS];
static fir_state st;
static int16_t in[64], out[64];
static uint32_t seed = 12345u;
static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; return seed ^ (seed >> 13); }
int main(void)
{
    for (int k = 0; k < FIR_TAPS; k++)
        coef[k] = (int16_t)rnd();
    fir_init(&st, coef);
    for (int t = 0; t < 4; t++) {
        for (int i = 0; i < 64; i++)
            in[i] = (int16_t)rnd();
        fir_process(&st, in, out, 64 - t);
        for (int i = 0; i < 64; i++)
            printf("%d ", out[i]);
        printf("| %u\n", st.pos);
    }
    return 0;
}
"""


def vdot_stub(n: int) -> str:
    """vdot16 or vdot32 as dsp.isax defines them, written independently of the matcher: the
    sum of ``n`` products of i16 elements, wrapping in 32 bits. Addresses are 32-bit: the
    host program is linked without PIE so that its static buffers lie below 4 GiB."""
    return f"""#include <stdint.h>
static inline uint32_t aquas_vdot{n}(uint32_t a, uint32_t b)
{{
    const int16_t *x = (const int16_t *)(uintptr_t)a, *y = (const int16_t *)(uintptr_t)b;
    uint32_t s = 0;
    for (int i = 0; i < {n}; i++)
        s += (uint32_t)((int32_t)x[i] * y[i]);
    return s;
}}
"""


VDOT16_STUB = vdot_stub(16)


def _dsp_without_vdot32():  # type: ignore[no-untyped-def]
    from aquas.egraph.driver import load_patterns

    return without_vdot32(load_patterns(DSP_SPEC, soc="picorv32"))  # vdot16's chunks


DSP_SPEC = Path(__file__).resolve().parents[1] / "examples" / "dsp" / "dsp.isax"


def test_fir_dot_product_is_two_vdot16_chunks_and_bit_exact(tmp_path: Path) -> None:
    """examples/dsp/app/filters.c: the 32-tap dot product over f->coef (through the
    pointer local h) and &f->delay[f->pos] (x) is bound to vdot16 in 16-element chunks
    (with vdot32 left out of the extension); the rewritten file, compiled on the host
    with vdot16 written out in C, prints what the original prints."""
    require_tool("gcc", "gcc")
    from aquas.egraph.driver import match_file
    from aquas.egraph.emit import rewrite_c

    root = Path(__file__).resolve().parents[1]
    app = root / "examples" / "dsp" / "app"
    res = match_file(
        app / "filters.c", DSP_SPEC, soc="picorv32", include_dirs=[app],
        functions=["fir_process"], patterns=_dsp_without_vdot32(),
    )  # fmt: skip
    (d,) = res.matched
    assert (d.function, d.isax, d.line) == ("fir_process", "vdot16", 35)
    assert d.binding is not None and d.binding.chunk == 16
    assert {str(t) for t in d.binding.regs.values()} == {
        "add32(h, mul32(k, 2))",
        "add32(mul32(k, 2), x)",
    }
    new = rewrite_c(res)  # the final check fills the fir_state member by member
    assert d.status == "matched", d.detail
    assert d.binding.proof and "final check: same outputs and memory on" in d.binding.proof
    assert "for (; k + 16 <= 32; k += 16)" in new and "aquas_vdot16(" in new
    assert "acc += h[k] * x[k];" not in new  # 32 = 2 x 16: no remainder loop
    outputs = []
    for which, text in (("orig", (app / "filters.c").read_text()), ("new", new)):
        d_ = tmp_path / which
        d_.mkdir()
        (d_ / "filters.c").write_text(text)
        (d_ / "main.c").write_text(FIR_MAIN)
        (d_ / "aquas_isax.h").write_text(VDOT16_STUB)
        exe = d_ / "fir"
        subprocess.run(
            ["gcc", "-O1", "-fwrapv", "-no-pie", f"-I{d_}", f"-I{app}",
             str(d_ / "main.c"), str(d_ / "filters.c"), "-o", str(exe)],
            check=True,
        )  # fmt: skip
        outputs.append(subprocess.run([str(exe)], check=True, capture_output=True).stdout)
    assert outputs[0] == outputs[1]
    assert len(set(outputs[0].split())) > 100  # real data, not a constant


def test_final_check_fills_a_struct_argument_and_refuses_a_wrong_operand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The final check fills a ``fir_state *`` argument in the host's layout (f->coef points
    into its own buffer); a rewrite whose second vdot16 operand is off by one element
    (x + 2k + 2) must be refused with the difference in the output."""
    require_tool("gcc", "gcc")
    from aquas.egraph import emit
    from aquas.egraph.driver import match_file
    from aquas.egraph.matcher import FINAL

    root = Path(__file__).resolve().parents[1]
    app = root / "examples" / "dsp" / "app"
    res = match_file(
        app / "filters.c", DSP_SPEC, soc="picorv32", include_dirs=[app],
        functions=["fir_process"], patterns=_dsp_without_vdot32(),
    )  # fmt: skip
    real = emit._call

    def off_by_one(d, names):  # type: ignore[no-untyped-def]
        call = real(d, names)
        assert call.endswith("(uint32_t)(uintptr_t)x)")
        return call[:-1] + " + 2u)"

    monkeypatch.setattr(emit, "_call", off_by_one)
    new = emit.rewrite_c(res)
    assert new == (app / "filters.c").read_text()  # nothing emitted
    [d] = [
        d for d in res.decisions if (d.function, d.line, d.isax) == ("fir_process", 35, "vdot16")
    ]
    assert d.status == "rejected" and d.reason == FINAL
    assert "memory differs at out[byte" in d.detail


STRUCT_BASES = r"""#include <stdint.h>
typedef struct { const int16_t *coef; int16_t a[40]; unsigned n; } st;
int32_t dot(const st *p, const int16_t *q)
{
    int32_t acc = 0;
    for (int k = 0; k < 32; k++)
        acc += p->a[k + 4] * q[k];
    return acc;
}
typedef struct { int8_t tag; const int16_t *w; int16_t x[16]; } cell;
int32_t dotd(const cell *c, const int16_t *q)
{
    int32_t acc = 0;
    for (int k = 0; k < 16; k++)
        acc += c[2].x[k] * q[k];
    return acc;
}
"""


def _match_struct_bases(tmp_path: Path):  # type: ignore[no-untyped-def]
    from aquas.egraph.driver import match_file

    app = tmp_path / "bases.c"
    app.write_text(STRUCT_BASES)
    root = Path(__file__).resolve().parents[1]
    return match_file(app, root / "examples" / "dsp" / "dsp.isax", soc="picorv32")


def test_operands_from_a_struct_base_are_spelled_as_members(tmp_path: Path) -> None:
    """An operand at an RV32 byte offset from a pointer to a struct with a pointer member
    (p + 12 + 2k, c + 88) is written as the member it addresses, so the host (where the
    pointer member is 8 bytes) computes the same object's address: the final check,
    which runs the rewrite on the host, accepts both."""
    require_tool("gcc", "gcc")
    from aquas.egraph.emit import rewrite_c

    res = _match_struct_bases(tmp_path)
    new = rewrite_c(res)
    assert sorted((d.function, d.isax) for d in res.matched) == [
        ("dot", "vdot32"),
        ("dotd", "vdot16"),
    ]
    assert "aquas_vdot32((uint32_t)(uintptr_t)&p->a[4], (uint32_t)(uintptr_t)q)" in new
    assert "aquas_vdot16((uint32_t)(uintptr_t)&c[2].x[0], (uint32_t)(uintptr_t)q)" in new
    for d in res.matched:
        assert d.binding is not None and "final check: same outputs" in d.binding.proof


def test_final_check_refuses_rv32_byte_offsets_from_a_struct_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the member spelling (the RV32 byte offsets written out, p + 12u), the
    rewrite reads the wrong bytes on the host: the final check must refuse it."""
    require_tool("gcc", "gcc")
    from aquas.egraph import emit
    from aquas.egraph.matcher import FINAL

    res = _match_struct_bases(tmp_path)
    real = emit._operand_names
    monkeypatch.setattr(emit, "_operand_names", lambda cf: emit.Names(real(cf), {}))
    assert emit.rewrite_c(res) == STRUCT_BASES
    for fn, isax in (("dot", "vdot32"), ("dotd", "vdot16")):
        [d] = [d for d in res.decisions if d.function == fn and d.isax == isax]
        assert d.status == "rejected" and d.reason == FINAL, (fn, d.detail)
        assert "returns" in d.detail


def test_member_spelling_of_struct_offsets() -> None:
    """c_operand on hand-built terms: element strides of the RV32 struct size become an
    index (&c[i].y), a constant offset the member it lands in, a variable offset inside a
    pointer-containing part is refused."""
    from aquas.egraph.emit import EmitError, Names, c_operand
    from aquas.egraph.terms import const, mk, var

    cell = clayout.struct_layout(
        "cell",
        [
            ("w", clayout.Pointer(clayout.Scalar(16, True)), False),
            ("y", clayout.Scalar(32, True), False),
            ("x", clayout.Array(clayout.Scalar(16, True), 4), False),
        ],
    )
    assert (cell.size, cell.field("y").offset, cell.field("x").offset) == (16, 4, 8)  # RV32
    names = Names({"c": "(uint32_t)(uintptr_t)c", "i": "(uint32_t)i"}, {"c": cell})
    c, i = var("c", 32), var("i", 32)

    def add(*ts):  # type: ignore[no-untyped-def]
        out = ts[0]
        for t in ts[1:]:
            out = mk("add", 32, (out, t))
        return out

    def mul(t, k):  # type: ignore[no-untyped-def]
        return mk("mul", 32, (t, const(32, k)))

    assert c_operand(add(c, mul(i, 16), const(32, 4)), names) == "(uint32_t)(uintptr_t)&c[i].y"
    assert c_operand(add(c, const(32, 12)), names) == "(uint32_t)(uintptr_t)&c->x[2]"
    assert c_operand(add(c, const(32, (-16 + 10) & 0xFFFFFFFF)), names) == (
        "(uint32_t)(uintptr_t)&c[-1].x[1]"
    )
    assert c_operand(add(c, mul(i, 2), const(32, 8)), names) == (
        "(uint32_t)(uintptr_t)&c->x[0] + 2u * (uint32_t)i"
    )
    with pytest.raises(EmitError, match="variable offset into cell"):
        c_operand(add(c, mul(i, 4)), names)


NESTED_POINTERS = r"""#include <stdint.h>
struct inner { int16_t k; const int16_t *tab[2]; };
typedef struct { uint8_t tag; struct inner in[2]; const int32_t *w; uint16_t n; } outer;
int32_t walk(const outer *o)
{
    int32_t s = o->w[o->n & 7] + o->tag;
    for (int j = 0; j < 2; j++)
        s += o->in[j].tab[1][o->in[j].k & 15] * o->in[j].tab[0][3] + o->w[j];
    return s;
}
"""


def test_final_check_fills_nested_structs_and_arrays_of_pointers(tmp_path: Path) -> None:
    """Every pointer member, also inside an array of nested structs, points into a buffer
    of its own: the original runs on every trial (small scalars; the pointers are
    dereferenced with the members' random contents as indices), and a copy of the function
    with one changed constant is caught."""
    require_tool("gcc", "gcc")
    from aquas.egraph.driver import match_file
    from aquas.egraph.finalcheck import TRIALS, _struct_fills, check_function

    app = tmp_path / "nested.c"
    app.write_text(NESTED_POINTERS)
    root = Path(__file__).resolve().parents[1]
    res = match_file(app, root / "examples" / "dsp" / "dsp.isax", soc="picorv32")
    assert res.program is not None
    cf = next(f for f in res.program.functions if f.name == "walk")
    (fill,) = _struct_fills(cf)
    assert fill.aux == ["o->in[].tab[]", "o->w"]
    same = check_function(NESTED_POINTERS, NESTED_POINTERS, cf, res.extension, [])
    assert same.ok and same.trials == TRIALS, same.reason
    wrong = NESTED_POINTERS.replace("tab[0][3]", "tab[0][4]")
    bad = check_function(NESTED_POINTERS, wrong, cf, res.extension, [])
    assert not bad.ok and "returns" in bad.reason
