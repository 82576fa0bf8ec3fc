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
from aquas.egraph.emit import rewrite_c
from aquas.egraph.matcher import Options
from aquas.egraph.terms import show
from aquas.interpreter import find_extension
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
    # the remainder (and everything, when the arrays are not word-aligned) in software
    assert "for (; i < n; i++)\n            acc += (int32_t)a[i] * (int32_t)b[i];" in new


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
