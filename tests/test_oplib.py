"""The operator library: the packaged Yosys characterisation (synth/oplib.json) and its loader."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from aquas.synth import characterize
from aquas.synth.oplib import DEFAULT_PATH, OpCost, OperatorLibrary, arith_kind

from helpers import require_tool

WIDTHS = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 64]
KINDS = [
    "add", "sub", "mul", "divu", "divs", "modu", "mods", "and", "or", "xor", "not",
    "shl", "shru", "shrs", "icmp_eq", "icmp_ult", "icmp_slt", "mux",
    "mul_const", "divu_const", "modu_const",
]  # fmt: skip
FREE = [
    "extract", "concat", "replicate", "constant", "extui", "extsi", "trunci",
    "shl_const", "shru_const", "shrs_const",
]  # fmt: skip


@pytest.fixture(scope="module")
def lib() -> OperatorLibrary:
    return OperatorLibrary.load()


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(DEFAULT_PATH.read_text())


# -- the packaged data -------------------------------------------------------------------


def test_file_layout(raw: dict) -> None:
    assert raw["tool"].startswith("Yosys")
    assert raw["script"] == characterize.YOSYS_SCRIPT
    assert raw["technology"] == characterize.TECHNOLOGY
    assert sorted(raw["free"]) == sorted(FREE)
    assert list(raw["ops"]) == KINDS


def test_every_kind_has_every_width(lib: OperatorLibrary) -> None:
    assert lib.kinds()[: len(KINDS)] == KINDS
    for kind in KINDS:
        assert lib.widths(kind) == WIDTHS, kind


def test_no_extrapolated_entries(raw: dict) -> None:
    # every entry was measured: the packaged file is generated with --timeout 0
    for kind, entries in raw["ops"].items():
        for w, e in entries.items():
            assert not e.get("extrapolated"), (kind, w)


def test_bitwise_ops_are_one_level_one_cell_per_bit(lib: OperatorLibrary) -> None:
    for kind in ("and", "or", "xor", "not", "mux"):
        for w in WIDTHS:
            assert lib.cost(kind, w) == OpCost(1, w), (kind, w)


def test_measured_growth(lib: OperatorLibrary) -> None:
    add8, add32, add64 = lib.cost("add", 8), lib.cost("add", 32), lib.cost("add", 64)
    assert add32.depth > add8.depth
    assert add64.depth > add32.depth
    # Yosys' own adders are carry-lookahead: depth grows with log(width)
    assert add64.depth <= 30 and add64.depth - add32.depth <= 8
    mul8, mul32 = lib.cost("mul", 8), lib.cost("mul", 32)
    assert mul32.cells > 4 * mul8.cells
    assert mul32.cells > 10 * lib.cost("add", 32).cells
    # array dividers: area roughly quadratic, depth at least linear in the width
    div16, div32 = lib.cost("divu", 16), lib.cost("divu", 32)
    assert div32.depth > 2 * div16.depth and div32.cells > 4 * div16.cells
    assert div32.depth > 10 * add32.depth
    # division by a constant is cheaper than by a variable, but still a divider array
    assert lib.cost("divu_const", 32).depth < div32.depth
    assert lib.cost("modu_const", 32).cells < lib.cost("modu", 32).cells
    # barrel shifters and comparators are logarithmic-ish
    assert lib.cost("shl", 64).depth <= 20
    assert lib.cost("icmp_eq", 64).depth <= 10
    # one-bit cases
    assert lib.cost("add", 1) == OpCost(1, 1)  # a single XOR
    assert lib.cost("mul_const", 1) == OpCost(0, 0)  # the constant is 1


@pytest.mark.parametrize("kind", ["add", "sub", "mul", "divu", "divs", "modu", "mods"])
def test_arithmetic_monotone_in_width(lib: OperatorLibrary, kind: str) -> None:
    costs = [lib.cost(kind, w) for w in WIDTHS]
    for lo, hi in itertools.pairwise(costs):
        assert hi.cells >= lo.cells, kind
        if kind in ("add", "sub", "mul"):
            assert hi.depth >= lo.depth, kind
    # division depth is monotone from 4 bits on (tiny widths are dominated by ABC's choices)
    depths = [c.depth for c in costs[2:]]
    assert depths == sorted(depths), kind


def test_const_kinds_record_their_constants(raw: dict) -> None:
    for kind in ("mul_const", "divu_const", "modu_const"):
        for w, entry in raw["ops"][kind].items():
            variants = entry["variants"]
            assert set(variants) == {"3329", "1000003"}
            assert variants["1000003"]["const"] == 1000003 % (1 << int(w))
            c3329 = variants["3329"]["const"]
            assert c3329 == (3329 if int(w) >= 12 else (1 << int(w)) - 1)
            assert entry["depth"] == max(v["depth"] for v in variants.values())
            assert entry["cells"] == max(v["cells"] for v in variants.values())


# -- the loader --------------------------------------------------------------------------


def test_exact_widths_match_the_file(lib: OperatorLibrary, raw: dict) -> None:
    for kind, entries in raw["ops"].items():
        for w, e in entries.items():
            assert lib.cost(kind, int(w)) == OpCost(e["depth"], e["cells"]), (kind, w)


def test_interpolation_rounds_up(lib: OperatorLibrary) -> None:
    lo, hi = lib.cost("add", 16), lib.cost("add", 24)
    got = lib.cost("add", 20)
    assert got == OpCost(math.ceil((lo.depth + hi.depth) / 2), math.ceil((lo.cells + hi.cells) / 2))
    assert lo.depth < got.depth < hi.depth
    # a quarter of the way, with a fractional result that must round up
    lo, hi = lib.cost("mul", 16), lib.cost("mul", 24)
    got = lib.cost("mul", 18)
    assert got.cells == math.ceil(lo.cells + (hi.cells - lo.cells) / 4)
    assert got.depth == math.ceil(lo.depth + (hi.depth - lo.depth) / 4)


def test_width_limits(lib: OperatorLibrary) -> None:
    with pytest.raises(ValueError, match="beyond the characterised widths"):
        lib.cost("add", 65)
    with pytest.raises(ValueError, match=">= 1"):
        lib.cost("add", 0)
    a48, a64 = lib.cost("add", 48), lib.cost("add", 64)
    ext = lib.cost("add", 80, extrapolate=True)
    assert ext.depth == a64.depth + (a64.depth - a48.depth)
    assert ext.cells == a64.cells + (a64.cells - a48.cells)
    # free kinds have no width limit
    assert lib.cost("concat", 128) == OpCost(0, 0)


def test_free_and_unknown_kinds(lib: OperatorLibrary) -> None:
    for kind in FREE:
        assert lib.is_free(kind)
        assert lib.cost(kind, 32) == OpCost(0, 0)
        assert lib.delay_ns(kind, 64) == 0.0
        assert kind in lib.kinds()
    with pytest.raises(KeyError, match="unknown operator kind 'fma'"):
        lib.cost("fma", 32)


def test_delay_ns(lib: OperatorLibrary) -> None:
    assert lib.ns_per_level == characterize.TECHNOLOGY["ns_per_level"]
    assert lib.delay_ns("add", 32) == pytest.approx(lib.cost("add", 32).depth * lib.ns_per_level)
    assert lib.delay_ns("mux", 8) == pytest.approx(lib.ns_per_level)
    assert lib.levels_per_cycle(10.0) == round(10.0 / lib.ns_per_level)


def test_load_explicit_path(tmp_path: Path, raw: dict) -> None:
    raw = json.loads(json.dumps(raw))
    raw["technology"]["ns_per_level"] = 0.1
    raw["ops"] = {"add": {"8": {"depth": 10, "cells": 20}, "16": {"depth": 21, "cells": 40}}}
    p = tmp_path / "lib.json"
    p.write_text(json.dumps(raw))
    lib = OperatorLibrary.load(p)
    assert lib.kinds()[0] == "add"
    assert lib.cost("add", 12) == OpCost(16, 30)  # 15.5 -> 16
    assert lib.cost("add", 4) == OpCost(10, 20)  # clamped below the narrowest width
    assert lib.delay_ns("add", 16) == pytest.approx(2.1)


# -- arith op names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "kind", "const_kind"),
    [
        ("arith.addi", "add", "add"),
        ("arith.subi", "sub", "sub"),
        ("arith.muli", "mul", "mul_const"),
        ("arith.divui", "divu", "divu_const"),
        ("arith.divsi", "divs", "divu_const"),
        ("arith.remui", "modu", "modu_const"),
        ("arith.remsi", "mods", "modu_const"),
        ("arith.andi", "and", "and"),
        ("arith.ori", "or", "or"),
        ("arith.xori", "xor", "xor"),
        ("arith.shli", "shl", "shl_const"),
        ("arith.shrui", "shru", "shru_const"),
        ("arith.shrsi", "shrs", "shrs_const"),
        ("arith.select", "mux", "mux"),
        ("arith.extui", "extui", "extui"),
        ("arith.extsi", "extsi", "extsi"),
        ("arith.trunci", "trunci", "trunci"),
        ("arith.constant", "constant", "constant"),
    ],
)
def test_arith_kind(lib: OperatorLibrary, op: str, kind: str, const_kind: str) -> None:
    assert arith_kind(op) == kind
    assert arith_kind(op, const_rhs=True) == const_kind
    assert kind in lib.kinds() and const_kind in lib.kinds()


def test_arith_kind_cmpi() -> None:
    expected = {
        "eq": "icmp_eq", "ne": "icmp_eq",
        "ult": "icmp_ult", "ule": "icmp_ult", "ugt": "icmp_ult", "uge": "icmp_ult",
        "slt": "icmp_slt", "sle": "icmp_slt", "sgt": "icmp_slt", "sge": "icmp_slt",
    }  # fmt: skip
    for pred, kind in expected.items():
        assert arith_kind("arith.cmpi", pred) == kind
        assert arith_kind("arith.cmpi", pred, const_rhs=True) == kind
    assert arith_kind("arith.cmpi", 6) == "icmp_ult"  # MLIR's integer encoding
    with pytest.raises(KeyError, match="predicate"):
        arith_kind("arith.cmpi")
    with pytest.raises(KeyError, match="predicate"):
        arith_kind("arith.cmpi", "lt")
    with pytest.raises(KeyError, match=r"arith\.mulhi"):
        arith_kind("arith.mulhi")


# -- the characterisation script ---------------------------------------------------------


def test_verilog_modules() -> None:
    v = characterize.verilog_for("divs", 16)
    assert "input [15:0] a, input [15:0] b, output [15:0] y" in v
    assert "$signed(a) / $signed(b)" in v
    assert "output y" in characterize.verilog_for("icmp_slt", 8)
    assert "input c" in characterize.verilog_for("mux", 4)
    assert "a * 12'd3329" in characterize.verilog_for("mul_const", 12, 3329)
    assert characterize.const_value("3329", 8) == 255
    assert characterize.const_value("1000003", 8) == 1000003 % 256


@pytest.mark.slow
def test_live_recharacterisation_matches(raw: dict) -> None:
    require_tool("yosys", "yosys")
    m = characterize.measure("add", 8)
    entry = raw["ops"]["add"]["8"]
    assert (m.depth, m.cells) == (entry["depth"], entry["cells"])
    m = characterize.measure(
        "modu_const", 8, raw["ops"]["modu_const"]["8"]["variants"]["3329"]["const"]
    )
    v = raw["ops"]["modu_const"]["8"]["variants"]["3329"]
    assert (m.depth, m.cells) == (v["depth"], v["cells"])
