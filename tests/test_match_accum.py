"""Accumulator ISAXs as patterns (egraph/accum.py): the LLM extension's dot4_i8 keeps its
sum in unit state dacc, preloaded by dot4_clr. An int8 dot-product loop becomes a preload
and a chunk loop of dot4_i8 calls on words loaded from the arrays, under an alignment
guard; the software loop does the rest."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from aquas.egraph import emit
from aquas.egraph.accum import accumulator_pattern
from aquas.egraph.driver import MatchResult, load_patterns, match_file
from aquas.egraph.emit import HEADER, rewrite_c
from aquas.egraph.matcher import Options
from aquas.egraph.terms import show
from aquas.interpreter import find_extension
from aquas.runtime.build import build_program
from aquas.runtime.header import write_header
from aquas.runtime.iss import golden_isax_handler, run_elf
from aquas.spec.frontend import lower_spec

ROOT = Path(__file__).resolve().parents[1]
LLM = ROOT / "examples/llm/llm.isax"


@functools.cache
def _patterns():  # type: ignore[no-untyped-def]
    return load_patterns(LLM, soc="picorv32")


def _match(tmp_path: Path, text: str) -> MatchResult:
    app = tmp_path / "app.c"
    app.write_text(text)
    return match_file(app, LLM, patterns=_patterns(), options=Options(core="picorv32"))


DOT = """#include <stdint.h>
int32_t dot_i8(const int8_t *a, const int8_t *b, int n)
{
    {acc_t} acc = 0;
    for (int i = 0; i < n; i++)
        acc += (int32_t)a[i] * (int32_t)b[i]{extra};
    return acc;
}
"""


def _dot(acc_t: str = "int32_t", extra: str = "") -> str:
    return DOT.replace("{acc_t}", acc_t).replace("{extra}", extra)


def test_dot4_i8_is_an_accumulator_over_loaded_words() -> None:
    _, pats = _patterns()
    p = next(p for p in pats if p.name == "dot4_i8")
    assert p.kind == "memory" and p.accumulator is not None
    assert (p.accumulator.state, p.accumulator.preload) == ("dacc", "dot4_clr")
    assert p.accumulator.operands == ("rs1", "rs2")
    # lane k of rs1 is the byte at rs1 + k: four byte reads per operand
    reads = sorted((show(a.addr), a.width) for a in p.fx.reads)
    assert reads == sorted(
        [(f"add32({r}, {k})" if k else r, 8) for r in ("rs1", "rs2") for k in range(4)]
    )
    clr = next(p for p in pats if p.name == "dot4_clr")
    assert clr.kind == "unsupported" and clr.accumulator is None


def _ext(body: str):  # type: ignore[no-untyped-def]
    return find_extension(lower_spec(f"extension t;\nstate s: i32 = 0;\n{body}", "t.isax"))


def test_what_is_not_an_accumulator() -> None:
    acc = """#[opcode(custom0), funct7(0)]
isax acc(rs1, rs2) -> rd { let v: i32 = s + (rs1 as i32) * (rs2 as i32); s = v; return v as u32; }
"""
    ext = _ext(acc)
    assert accumulator_pattern(next(iter(ext.isaxs())), ext) == (
        "no ISAX of the extension sets state @s from rs1 (a preload)"
    )
    old = acc.replace("return v as u32;", "return 0;")
    ext = _ext(old + "#[opcode(custom0), funct7(1)]\nisax set(rs1) { s = rs1 as i32; }\n")
    why = accumulator_pattern(next(iter(ext.isaxs())), ext)
    assert why == "state @s is not updated as @s += f(rs1, rs2) and returned in rd"
    # a whole register operand used as a number, not as packed lanes
    ext = _ext(acc + "#[opcode(custom0), funct7(1)]\nisax set(rs1) { s = rs1 as i32; }\n")
    why = accumulator_pattern(next(iter(ext.isaxs())), ext)
    assert why == "a register operand is used other than as packed 8- or 16-bit lanes"


def test_int8_dot_product_loop_becomes_preload_and_chunk_calls(tmp_path: Path) -> None:
    res = _match(tmp_path, _dot())
    new = rewrite_c(res)
    [d] = res.matched
    assert d.isax == "dot4_i8" and d.binding is not None and d.binding.chunk == 4
    assert "final check: same outputs and memory" in d.binding.proof
    a = "((uint32_t)(uintptr_t)a + (uint32_t)i)"
    b = "((uint32_t)(uintptr_t)b + (uint32_t)i)"
    assert f"if ((({a} | {b}) & 3u) == 0) {{ /* unit state dacc = acc */" in new
    assert "(void)aquas_dot4_clr((uint32_t)acc);" in new
    assert f"acc = (int32_t)aquas_dot4_i8(aquas_ld32({a}), aquas_ld32({b}));" in new
    # two chunks per trip, their four words loaded before the two calls; the first call's
    # rd is dropped (the unit's state carries it into the second)
    assert "for (; i + 7 < (n); i += 8) { /* two chunks, their words loaded first */" in new
    assert (
        f"uint32_t aquas_w0 = aquas_ld32({a}), aquas_w1 = aquas_ld32({b});\n"
        f"                uint32_t aquas_w2 = aquas_ld32({a} + 4u), aquas_w3 = aquas_ld32({b} + 4u);\n"
        "                (void)aquas_dot4_i8(aquas_w0, aquas_w1);\n"
        "                acc = (int32_t)aquas_dot4_i8(aquas_w2, aquas_w3);\n            }"
    ) in new
    # then one chunk (an odd number of chunks), in the loop of one chunk per trip
    assert (
        "for (; i + 3 < (n); i += 4)\n"
        f"                acc = (int32_t)aquas_dot4_i8(aquas_ld32({a}), aquas_ld32({b}));"
    ) in new
    # the remainder (and everything, when the arrays are not word-aligned) in software
    assert "for (; i < n; i++)\n            acc += (int32_t)a[i] * (int32_t)b[i];" in new


MAIN = """#include <stdint.h>
#include "aquas_rt.h"
int32_t dot_i8(const int8_t *a, const int8_t *b, int n);
static int8_t x[80] __attribute__((aligned(4))), y[80] __attribute__((aligned(4)));
int main(void)
{
    static const int ns[] = {0, 3, 4, 5, 7, 8, 11, 12, 13, 15, 16, 20, 64, 71};
    uint32_t s = 12345u;
    for (int i = 0; i < 80; i++) {
        s = s * 1103515245u + 12345u;
        x[i] = (int8_t)(s >> 16);
        s = s * 1103515245u + 12345u;
        y[i] = (int8_t)(s >> 16);
    }
    for (unsigned k = 0; k < sizeof ns / sizeof ns[0]; k++)
        printf("%d %ld %ld\\n", ns[k], (long)dot_i8(x, y, ns[k]), (long)dot_i8(x + 1, y + 1, ns[k]));
    return 0;
}
"""


def test_chunk_pairs_odd_chunks_and_remainders_on_the_iss(tmp_path: Path) -> None:
    """The rewritten dot product, compiled for RV32IM and run on the ISS with the golden
    ISAXs, against the same numbers computed here: trip counts with no chunk, one chunk,
    an odd and an even number of chunks, with and without a remainder, and misaligned
    arrays (all in software)."""
    res = _match(tmp_path, _dot())
    new = rewrite_c(res)
    assert [d.isax for d in res.matched] == ["dot4_i8"]
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "kernel.c").write_text(new)
    write_header(res.extension, "picorv32", tmp_path / "new" / HEADER)
    (tmp_path / "main.c").write_text(MAIN)
    elf = build_program(
        [tmp_path / "main.c", tmp_path / "new" / "kernel.c"],
        tmp_path / "build",
        platform="picorv32",
        header_dirs=[tmp_path / "new"],
        cflags=["-fwrapv"],
    )
    calls = []

    def count(insn: int, rs1: int, rs2: int, iss):  # type: ignore[no-untyped-def]
        calls.append(insn)
        return golden(insn, rs1, rs2, iss)

    golden = golden_isax_handler(res.extension)
    run = run_elf(elf, "picorv32", custom=count)
    assert run.exit_code == 0, run.output
    s = 12345
    xs, ys = [], []
    for _ in range(80):
        s = (s * 1103515245 + 12345) & 0xFFFFFFFF
        xs.append(((s >> 16) & 0xFF) - 256 * (((s >> 16) & 0xFF) >= 128))
        s = (s * 1103515245 + 12345) & 0xFFFFFFFF
        ys.append(((s >> 16) & 0xFF) - 256 * (((s >> 16) & 0xFF) >= 128))
    want = []
    for n in (0, 3, 4, 5, 7, 8, 11, 12, 13, 15, 16, 20, 64, 71):
        d0 = sum(xs[i] * ys[i] for i in range(n))
        d1 = sum(xs[1 + i] * ys[1 + i] for i in range(n))
        want.append(f"{n} {d0} {d1}")
    assert run.output.splitlines() == want
    # aligned calls only: one preload each, and n // 4 dot4_i8 calls
    dots = sum(n // 4 for n in (0, 3, 4, 5, 7, 8, 11, 12, 13, 15, 16, 20, 64, 71))
    assert len(calls) == 14 + dots


def test_wider_accumulator_is_not_rewritten(tmp_path: Path) -> None:
    res = _match(tmp_path, _dot("int64_t"))
    rewrite_c(res)
    assert not res.matched


def test_other_updates_of_the_accumulator_are_not_dropped(tmp_path: Path) -> None:
    res = _match(tmp_path, _dot(extra=";\n        acc ^= i"))
    rewrite_c(res)
    assert not res.matched


def test_final_check_refuses_a_missing_preload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the preload the unit's state starts from its last value, not from acc: the
    final check (golden ISAXs with state kept from call to call) must catch it."""
    real = emit._accumulator_loop

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        return [ln for ln in real(*args, **kwargs) if "aquas_dot4_clr" not in ln]

    monkeypatch.setattr(emit, "_accumulator_loop", broken)
    res = _match(tmp_path, _dot().replace("acc = 0;", "acc = 1000;"))
    new = rewrite_c(res)
    assert not res.matched and "aquas_dot4_i8" not in new
    [d] = [d for d in res.decisions if d.isax == "dot4_i8"]
    assert d.reason == "final check"
