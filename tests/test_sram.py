"""SRAM scratchpads: the impl directive (parse, checks, IR), the scheduler's view of an
SRAM bank (read latency, ports), the generated banks, the --scratchpads override and
generation time of a 64 Ki-element scratchpad. Co-simulation of an SRAM unit against the
interpreter is ``tests/sim/test_spec_cosim.py -k sram`` (``tests/sim/specs/sram.isax``)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from xdsl.dialects import scf
from xdsl.ir import Operation

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec
from aquas.synth.flow import build_unit, synthesize
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.sram import (
    SramShape,
    apply_scratchpad_impl,
    element_bank_row,
    is_sram,
    reciprocal,
    render_model,
)

LIB = OperatorLibrary.load()
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))


NOP = "#[opcode(custom0), funct7(127)]\nisax nop() {}\n"


def spm(src: str, name: str = "a") -> aq.ScratchpadOp:
    ext = find_extension(lower_spec(src + NOP, "s.isax"))
    return next(p for p in ext.scratchpads() if p.sym_name.data == name)


def rejects(src: str, fragment: str, line: int, col: int) -> AquasError:
    with pytest.raises(AquasError) as info:
        lower_spec(src + NOP, "s.isax")
    e = info.value
    assert fragment in e.message, e.message
    assert e.loc is not None and (e.loc.line, e.loc.column) == (line, col)
    return e


# -- the directive ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decl", "impl", "ports", "sram"),
    [
        ("[u32; 64]", "auto", 1, False),  # 64 words per bank: registers
        ("[u32; 65]", "auto", 1, True),  # 65: SRAM
        ("[u32; 128] partition(cyclic, 2)", "auto", 1, False),  # banks of 64
        ("[u32; 130] partition(block, 2)", "auto", 1, True),  # banks of 65
        ("[u32; 8] impl(sram)", "sram", 1, True),
        ("[u32; 8] impl(sram(2))", "sram", 2, True),
        ("[u32; 8] impl(sram(1))", "sram", 1, True),
        ("[u32; 4096] impl(regs)", "regs", 1, False),
        ("[u32; 4096] impl(auto)", "auto", 1, True),
        ("[u16; 256] impl(sram(2)) partition(cyclic, 4)", "sram", 2, True),
    ],
)
def test_directive_is_parsed_into_the_scratchpad_op(
    decl: str, impl: str, ports: int, sram: bool
) -> None:
    p = spm(f"scratchpad a: {decl};\n")
    assert (p.impl_value, p.ports_value, is_sram(p)) == (impl, ports, sram)
    # defaults leave no attribute: the IR of specs without the directive is unchanged
    assert ("impl" in p.attributes) == (impl != "auto")
    assert ("ports" in p.attributes) == (ports != 1)


def test_directive_prints_and_round_trips_in_the_ir() -> None:
    p = spm("scratchpad a: [u32; 8] partition(cyclic, 2) impl(sram(2));\n")
    assert str(p) == (
        'aquas.scratchpad @a : memref<8xi32> partition "cyclic" 2 {impl = "sram", ports = 2 : i64}'
    )
    p.verify()
    plain = spm("scratchpad a: [u32; 8];\n")
    assert str(plain) == 'aquas.scratchpad @a : memref<8xi32> partition "none" 1'


@pytest.mark.parametrize(
    ("decl", "fragment", "col"),
    [
        ("impl(flops)", "unknown scratchpad implementation 'flops'", 31),
        ("impl(regs(2))", "a port count applies to SRAM only, not to impl(regs)", 36),
        ("impl(auto(2))", "a port count applies to SRAM only", 36),
        ("impl(sram(3))", "an SRAM bank has 1 or 2 read/write ports, got 3", 36),
        ("impl(sram(0))", "an SRAM bank has 1 or 2 read/write ports, got 0", 36),
        ("impl(sram) impl(regs)", "scratchpad 'a' has two impl directives", 42),
        (
            "partition(cyclic, 2) impl(sram) partition(block, 2)",
            "scratchpad 'a' has two partition directives",
            68,
        ),
    ],
)
def test_bad_directives_are_located_errors(decl: str, fragment: str, col: int) -> None:
    e = rejects(f"scratchpad a: [u32; 128] {decl};\n", fragment, 1, col)
    assert e.hint is not None


def test_register_budget_applies_to_register_scratchpads_only() -> None:
    e = rejects(
        "scratchpad a: [u32; 8192] impl(regs);\n", "exceeds the synthesis budget of 4096", 1, 21
    )
    assert e.hint is not None and "impl(sram)" in e.hint
    assert is_sram(spm("scratchpad a: [u32; 65536];\n"))  # auto: SRAM, within its budget
    rejects("scratchpad a: [u8; 2097152];\n", "SRAM scratchpad 'a' of 2097152 elements", 1, 20)


def test_override_sets_every_scratchpad_and_keeps_the_port_count() -> None:
    src = "scratchpad a: [u32; 8] impl(sram(2));\nscratchpad b: [u32; 256];\n" + NOP
    m = lower_spec(src, "s.isax")
    apply_scratchpad_impl(m, "regs")
    assert [is_sram(p) for p in find_extension(m).scratchpads()] == [False, False]
    apply_scratchpad_impl(m, "sram")
    assert [(is_sram(p), p.ports_value) for p in find_extension(m).scratchpads()] == [
        (True, 1),
        (True, 1),
    ]
    m = lower_spec(src, "s.isax")
    apply_scratchpad_impl(m, "sram")
    assert [p.ports_value for p in find_extension(m).scratchpads()] == [2, 1]
    apply_scratchpad_impl(m, None)  # no override: unchanged
    assert [p.ports_value for p in find_extension(m).scratchpads()] == [2, 1]
    with pytest.raises(AquasError, match="unknown scratchpad implementation"):
        apply_scratchpad_impl(m, "flash")


def test_element_bank_row_follows_the_partition() -> None:
    cyc = spm("scratchpad a: [u32; 10] partition(cyclic, 4) impl(sram);\n")
    blk = spm("scratchpad a: [u32; 10] partition(block, 4) impl(sram);\n")
    one = spm("scratchpad a: [u32; 10] impl(sram);\n")
    assert [element_bank_row(cyc, k) for k in (0, 3, 5, 9)] == [(0, 0), (3, 0), (1, 1), (1, 2)]
    assert [element_bank_row(blk, k) for k in (0, 2, 3, 9)] == [(0, 0), (0, 2), (1, 0), (3, 0)]
    assert element_bank_row(one, 7) == (0, 7)
    assert SramShape.of(cyc) == SramShape(32, 3, 1) and SramShape.of(cyc).abits == 2


@pytest.mark.parametrize("bits", range(1, 13))
def test_the_reciprocal_divides_every_index_exactly(bits: int) -> None:
    """The bank/row split of a non-power-of-two partition multiplies by the reciprocal:
    exact for every index of ``bits`` bits, for every divisor up to 100."""
    for d in range(3, 101):
        m, s = reciprocal(d, bits)
        assert m <= 2**s
        assert [(x * m) >> s for x in range(2**bits)] == [x // d for x in range(2**bits)], d


# -- scheduling -------------------------------------------------------------------------

GET = """
scratchpad a: [u32; 256] IMPL;
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd { return a[rs1 & 255] + rs2; }
"""


def cycles(src: str, isax: str = "t") -> int:
    unit = build_unit(lower_spec(src, "s.isax"), 10.0, LIB)
    fsm = next(f for f in unit.fsms if f.isax.sym_name.data == isax)
    lo, hi = fsm.latency.at(4)
    assert lo == hi
    return lo


def test_read_latency_is_one_cycle_in_the_schedule() -> None:
    from aquas.synth.flow import schedule_isaxs

    for impl, distance, n_states in (("impl(regs)", 0, 1), ("impl(sram)", 1, 2)):
        builder, _ = schedule_isaxs(lower_spec(GET.replace("IMPL", impl), "s.isax"), 10.0, LIB)
        ((problem, sched),) = builder.schedules
        read = next(o for o in problem.operations if isinstance(o, aq.SpmReadOp))
        add = next(o for o in problem.operations if o.name == "arith.addi")
        assert sched.cycle[add] - sched.cycle[read] == distance
        assert len(builder.states) == n_states
    assert cycles(GET.replace("IMPL", "impl(regs)")) == 1
    assert cycles(GET.replace("IMPL", "impl(sram)")) == 2


READS4 = """
scratchpad a: [u32; 256] DECL;
#[opcode(custom0), funct7(1)]
isax t(rs1) -> rd {
  var s: u32 = 0;
  #[unroll] for i in 0..4 { s = s + a[4 * (rs1 & 63) + i]; }
  return s;
}
"""


@pytest.mark.parametrize(
    ("decl", "read_cycles"),
    [
        ("impl(sram)", 4),  # 1RW: one read per cycle
        ("impl(sram(2))", 2),  # 2RW: two
        ("partition(cyclic, 4) impl(sram)", 1),  # four banks, one read each
        ("partition(cyclic, 2) impl(sram(2))", 1),  # two banks, two ports each
    ],
)
def test_bank_ports_limit_reads_per_cycle(decl: str, read_cycles: int) -> None:
    # the reads take read_cycles cycles; the last one's data arrives a cycle later
    assert cycles(READS4.replace("DECL", decl)) == read_cycles + 1


def test_memory_access_waits_for_an_sram_reads_data_cycle() -> None:
    src = """
scratchpad a: [u32; 256] impl(sram);
#[opcode(custom0), funct7(1)]
isax t(rs1) { mem<u32>[rs1 & ~3] = a[rs1 & 255]; }
"""
    unit = build_unit(lower_spec(src, "s.isax"), 10.0, LIB)
    # read, data, then the store's wait state
    assert [s.wait is not None for s in unit.states] == [False, False, True]


# -- RTL --------------------------------------------------------------------------------


def test_sram_banks_are_instances_of_the_shipped_model(tmp_path: Path) -> None:
    src = """
scratchpad a: [u32; 256] impl(sram);
scratchpad c: [u16; 128] partition(cyclic, 4) impl(sram(2));
scratchpad r: [u32; 4];
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd { a[rs2 & 255] = rs1; c[rs1 & 127] = trunc<u16>(rs2); r[rs1 & 3] = rs2;
  return r[rs2 & 3]; }
"""
    res = synthesize(lower_spec(src, "s.isax"), tmp_path, 10.0, 4)
    v = res.verilog_path.read_text()
    assert "s_isax_unit_sram_32x256_1rw a_bank0 (" in v
    for b in range(4):
        assert f"s_isax_unit_sram_16x32_2rw c_bank{b} (" in v
    assert "a_0_q" not in v and "c_0_q" not in v and "r_0_q" in v
    assert len(re.findall("^module s_isax_unit_sram_", v, re.M)) == 2  # one model per shape
    assert "logic [31:0] mem[256];" in v and "logic [15:0] mem[32];" in v
    rep = json.loads((tmp_path / "t.json").read_text())
    assert rep["sram_scratchpads"] == [
        {"scratchpad": "a", "banks": 1, "words": 256, "bits": 32, "ports": 1, "total_bits": 8192},
        {"scratchpad": "c", "banks": 4, "words": 32, "bits": 16, "ports": 2, "total_bits": 2048},
    ]


def test_model_template_ports() -> None:
    text = render_model("u", SramShape(8, 1000, 2))
    assert "module u_sram_8x1000_2rw (" in text
    assert "input logic [9:0] addr1," in text and "output logic [7:0] rdata1" in text
    assert "(* blackbox *)" in text and "else rdata0 <= mem[addr0];" in text
    assert "${" not in text


def test_bursts_the_banks_cannot_serve_are_located_errors() -> None:
    packed = """
scratchpad a: [u8; 256] partition(block, 2) impl(sram);
#[opcode(custom0), funct7(1)]
isax t(rs1) { burst a[0 +: 16] <- mem[rs1]; }
"""
    with pytest.raises(AquasError, match="a burst beat carries 4 elements of SRAM") as info:
        build_unit(lower_spec(packed, "s.isax"), 10.0, LIB)
    assert info.value.loc is not None and info.value.loc.line == 4
    assert info.value.hint is not None and "cyclic by 4" in info.value.hint
    # spread over four banks: accepted
    build_unit(
        lower_spec(packed.replace("block, 2", "cyclic, 4"), "s.isax"),
        10.0,
        LIB,
    )
    wide = packed.replace("u8", "u64").replace("partition(block, 2) ", "")
    with pytest.raises(AquasError, match="64-bit elements, wider than the 32-bit memory bus"):
        build_unit(lower_spec(wide, "s.isax"), 10.0, LIB)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_examples_keep_register_scratchpads_by_default(path: Path, tmp_path: Path) -> None:
    """Every example scratchpad the spec leaves to the flow (no `impl` directive) is small:
    the default (auto) keeps it in registers. A directive is kept (pointcloud's `ncl` is
    `impl(sram)`)."""
    default = synthesize(lower_spec(path.read_text(), path.name), tmp_path / "d", 10.0, 4)
    m = lower_spec(path.read_text(), path.name)
    for op in m.walk():
        if isinstance(op, aq.ScratchpadOp) and op.impl_value == "auto":
            op.set_impl("regs")
    regs = synthesize(m, tmp_path / "r", 10.0, 4)
    assert default.verilog_path.read_bytes() == regs.verilog_path.read_bytes()


def test_cli_scratchpads_override(tmp_path: Path) -> None:
    spec = tmp_path / "o.isax"
    spec.write_text(GET.replace("IMPL", ""))  # 256 words: SRAM by default
    out = {}
    for mode in ("auto", "regs", "sram"):
        args = ["synth", str(spec), "--no-yosys", "--no-lint", "-o", str(tmp_path / mode)]
        r = CliRunner().invoke(main, [*args, "--scratchpads", mode])
        assert r.exit_code == 0, r.output
        out[mode] = (tmp_path / mode / "o_isax_unit.sv").read_text()
    assert "a_bank0" in out["auto"] and "a_bank0" in out["sram"] and "a_bank0" not in out["regs"]
    assert "a_255_q" in out["regs"]
    r = CliRunner().invoke(main, ["synth", str(spec), "--scratchpads", "flash"])
    assert r.exit_code == 2 and "flash" in r.output


def test_64k_scratchpad_generates_verilog_in_seconds(tmp_path: Path) -> None:
    """Issue 18 defect 4: dynamically indexed 64 Ki-element scratchpads (registers took
    510 s for 1,792 elements; the LLM tutorial's sizes did not finish)."""
    src = """
scratchpad w: [u8; 65536];
scratchpad x: [u32; 65536] partition(cyclic, 4);
#[opcode(custom0), funct7(0)]
isax put(rs1, rs2) { w[rs1 & 0xffff] = trunc<u8>(rs2); x[rs2 & 0xffff] = rs1; }
#[opcode(custom0), funct7(1)]
isax dot(rs1, rs2) -> rd {
  var s: u32 = 0;
  for i in 0..16 { s = s + zext<u32>(w[(rs1 + i) & 0xffff]) * x[(rs2 + i) & 0xffff]; }
  return s;
}
#[opcode(custom0), funct7(2)]
isax load(rs1, rs2) { burst x[rs2 & 0x7fff +: 64] <- mem[rs1 & ~3]; }
#[opcode(custom0), funct7(3)]
isax store(rs1, rs2) { burst mem[rs1 & ~3] <- x[rs2 & 0x7fff +: 64]; }
"""
    t0 = time.perf_counter()
    res = synthesize(lower_spec(src, "big.isax"), tmp_path, 10.0, 4)
    seconds = time.perf_counter() - t0
    assert seconds < 30, f"{seconds:.1f} s to Verilog"
    v = res.verilog_path.read_text()
    assert re.search(r"big_isax_unit_sram_8x65536_1rw w_bank0 \(", v)
    assert "logic [31:0] mem[16384];" in v
    assert len(v) < 200_000  # no per-element logic


@pytest.mark.parametrize(
    ("decl", "bus", "banks"),
    [
        ("[u8; 256]", 32, 4),  # auto: SRAM; 4 elements per beat -> cyclic 4 (64-word banks)
        ("[u8; 256] partition(cyclic, 2) impl(sram)", 32, 4),
        ("[u16; 256] impl(sram(2))", 64, 4),
        ("[u8; 256] partition(cyclic, 8) impl(sram)", 32, 8),  # wide enough already
        ("[u32; 256]", 32, 1),  # one element per beat
        # x, y, z in three banks under a 4-element beat: cyclic lcm(3, 4)
        ("[u32; 768] partition(cyclic, 3) impl(sram)", 128, 12),
    ],
)
def test_packed_bursts_split_an_sram_scratchpad_cyclically(
    decl: str, bus: int, banks: int, tmp_path: Path
) -> None:
    src = f"""
scratchpad a: {decl};
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd {{ burst a[rs2 & 63 +: 16] <- mem[rs1]; return zext<u32>(a[rs2 & 255]); }}
"""
    m = lower_spec(src, "s.isax")
    res = synthesize(m, tmp_path, 10.0, 4, bus_width=bus)
    v = res.verilog_path.read_text()
    assert len(re.findall(r"^  s_isax_unit_sram_\S+ a_bank\d+ \(", v, re.M)) == banks
    (p,) = find_extension(m).scratchpads()
    assert is_sram(p) and p.factor_value == banks
    if banks > 1:
        assert p.partition.data == "cyclic"


def test_schedule_pass_annotates_an_sram_read_with_its_issue_state() -> None:
    """``aquas-schedule`` puts each op in the state ``aquas synth`` issues it in; an SRAM
    read's data arrives in the next state, where its consumer is."""
    from xdsl.context import Context

    from aquas.passes import parse_pipeline
    from aquas.synth.prepare import PIPELINE
    from aquas.synth.timing import CYCLE_ATTR, STATE_ATTR

    src = GET.replace("IMPL", "impl(sram)")
    m = lower_spec(src, "s.isax")
    ctx = Context()
    ctx.load_dialect(aq.Aquas)
    parse_pipeline(PIPELINE + ",aquas-schedule").apply(ctx, m)
    got = {
        o.name: (o.attributes[STATE_ATTR].value.data, o.attributes[CYCLE_ATTR].value.data)  # type: ignore[attr-defined]
        for o in m.walk()
        if STATE_ATTR in o.attributes and o.name in ("aquas.spm_read", "arith.addi")
    }
    unit = build_unit(lower_spec(src, "s.isax"), 10.0, LIB)
    want = {o.name: st.id for st in unit.states for o in st.ops}
    assert got["aquas.spm_read"] == (want["aquas.spm_read"], 0)
    assert got["arith.addi"] == (want["arith.addi"], 1)
    assert want["arith.addi"] == want["aquas.spm_read"] + 1


def test_auto_falls_back_to_registers_where_banks_cannot_serve_a_burst(tmp_path: Path) -> None:
    src = """
scratchpad a: [u8; 512] partition(block, 2);
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd { burst a[0 +: 16] <- mem[rs1]; return zext<u32>(a[rs2 & 511]); }
"""
    m = lower_spec(src, "s.isax")
    (p,) = find_extension(m).scratchpads()
    assert is_sram(p)  # 256-word banks: auto says SRAM ...
    res = synthesize(m, tmp_path, 10.0, 4)
    assert not is_sram(p) and p.impl_value == "regs"  # ... but a beat packs 4 into 2 banks
    v = res.verilog_path.read_text()
    assert "a_bank0" not in v and "a_511_q" in v
    with pytest.raises(AquasError, match="a burst beat carries 4 elements"):
        build_unit(
            lower_spec(src.replace("(block, 2)", "(block, 2) impl(sram)"), "s.isax"), 10.0, LIB
        )


def test_sram_scratchpads_leave_the_register_budget_to_the_burst_plan() -> None:
    """The burst plan's scratchpad budget counts register scratchpads only: a 64 Ki-element
    SRAM scratchpad does not stop it from coalescing loads."""
    from aquas.plans.coalesce import coalesce

    src = """
scratchpad big: [u32; 65536];
#[opcode(custom0), funct7(1)]
isax t(rs1) -> rd {
  var s: u32 = 0;
  #[unroll] for i in 0..8 { s = s + mem<u32>[rs1 + 4 * i]; }
  return s + big[rs1 & 0xffff];
}
"""
    m = lower_spec(src, "s.isax")
    assert coalesce(m) == []
    ext = find_extension(m)
    assert len(list(ext.scratchpads())) == 2
    assert sum(isinstance(o, aq.BurstReadOp) for o in ext.walk()) == 1


# -- rows read off the induction variables ------------------------------------------------

ROWS = """
extension r;
scratchpad tri: [u32; 48] partition(cyclic, 3) impl(sram);
scratchpad two: [u32; 64] partition(cyclic, 2) impl(sram);
scratchpad regs: [u32; 48] partition(cyclic, 3);
#[opcode(custom0), funct7(0)]
isax f(rs1) -> rd {
  var s: u32 = 0;
  for j in 0..14 {
    s = s + tri[3 * j + 4] + tri[45 - 3 * j] + tri[2 * j + 1] + two[4 * j + 3]
      + regs[3 * j + 1] + tri[3 * j + (rs1 & 1)];
  }
  return s;
}
"""


def test_bank_row_reads_a_row_off_the_induction_variable() -> None:
    """An index ``c + a * j`` with ``a`` a multiple of the cyclic factor ``F`` lies in bank
    ``c % F`` at row ``c // F + a / F * j``; anything else keeps the run-time division."""
    from aquas.synth.fsm import BankRow, bank_row, index_only
    from aquas.synth.prepare import prepare

    m = prepare(lower_spec(ROWS, "r.isax"))
    reads = [o for o in m.walk() if isinstance(o, aq.SpmReadOp)]
    [j] = {o.body.block.args[0] for o in m.walk() if isinstance(o, scf.ForOp)}
    got = [bank_row(o) for o in reads]
    assert got == [
        BankRow(1, 1, ((j, 1),)),  # tri[3j + 4]: element 3 (j + 1) + 1
        BankRow(0, 15, ((j, -1),)),  # tri[45 - 3j]
        None,  # tri[2j + 1]: 2 is no multiple of 3
        BankRow(1, 1, ((j, 2),)),  # two[4j + 3], a power of two
        None,  # regs: registers, selected by the whole index
        None,  # tri[3j + (rs1 & 1)]: a term that is no induction variable
    ]
    # the index arithmetic of the first, second and fourth is computed nowhere
    owners = [o.index.owner for o in reads]
    assert [isinstance(o, Operation) and index_only(o) for o in owners] == [
        True,
        True,
        False,
        True,
        False,
        False,
    ]


def test_rows_off_the_induction_variable_need_no_reciprocal(tmp_path: Path) -> None:
    """Without the element index there is no division by the factor: no reciprocal
    multiply in the unit (the accesses that keep one still have it)."""
    plain = ROWS.replace(" + tri[2 * j + 1]", "").replace(" + tri[3 * j + (rs1 & 1)]", "")
    for src, recips in ((plain, False), (ROWS, True)):
        res = synthesize(lower_spec(src, "r.isax"), tmp_path / str(recips), 10.0, 4)
        assert ("_recip" in res.verilog_path.read_text()) is recips
