"""Datapath registers without a reset (``rtlgen.UnitGenerator.unreset``).

A value register, a shared unit's operand and result registers and a call-local
scratchpad's element registers are written in their ISAX's call before anything reads
them, so their value after reset is never seen and they get no reset: the synchronous
reset costs a gate in front of every flip-flop. The state machine, the memory engine's
registers, ISAX state registers (reset to their spec values) and scratchpads that keep
their contents across calls keep theirs. Co-simulation with ``random_init`` starts every
register without a reset at a random value (``synth/cosim.py``): the second test shows
that it catches a missing reset, by taking it away from registers that need it, and the
third co-simulates the LLM extension's unit that way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec_file
from aquas.synth import rtlgen
from aquas.synth.cosim import run_cosim
from aquas.synth.flow import synthesize
from aquas.synth.fsm import call_local_srams, cleared_srams

ROOT = Path(__file__).resolve().parents[1]

SPEC = """\
extension unr;

state acc: u32 = 7;
scratchpad keep: [u32; 4];
scratchpad tmp: [u32; 4];

// keeps a running sum in `acc` and the operands in `keep` (read by `peek` next call)
#[opcode(custom0), funct7(0)]
isax push(rs1, rs2) -> rd {
    keep[rs2 & 3] = rs1;
    let s: u32 = acc + rs1 * rs2;
    acc = s;
    return s ^ (s >> 7);
}

#[opcode(custom0), funct7(1)]
isax peek(rs1, rs2) -> rd {
    return keep[rs1 & 3] + acc;
}

// `tmp` is filled before it is read in every call: call-local
#[opcode(custom0), funct7(2)]
isax mix(rs1, rs2) -> rd {
    burst tmp[0 +: 4] <- mem[rs1];
    var t: u32 = rs2;
    for i in 0..4 {
        t = (t << 1) + tmp[i] * (t | 1);
    }
    return t;
}
"""

#: ``always_ff`` blocks of CIRCT's export: a register with a reset assigns in an
#: ``if (rst)`` branch, one without assigns its next value alone
_BLOCK = re.compile(
    r"always_ff @\(posedge clk\)(?: begin)?[^\n]*\n\s*(if \(rst\)[^\n]*\n\s*)?(\w+) <=", re.M
)


def _resets(verilog: str) -> dict[str, bool]:
    return {m.group(2): m.group(1) is not None for m in _BLOCK.finditer(verilog)}


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "unr.isax"
    spec.write_text(SPEC)
    return spec


def test_only_registers_read_before_written_keep_a_reset(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    res = synthesize(lower_spec_file(spec), tmp_path / "out", 10.0, mem_latency=4)
    v = res.verilog_path.read_text()
    resets = _resets(v)
    # control, the memory engine, the ISAX state (reset to 7) and the scratchpad kept
    # across calls
    for name in ("state_q", "rd_q", "mem_phase_q", "mem_beat_q", "acc_q"):
        assert resets[name], name
    assert "acc_q <= 32'h7;" in v
    for k in range(4):
        assert resets[f"keep_{k}_q"], k
    # control too: the flip-flops that select a shared unit's operands in a state
    # (``UnitGenerator.selects``) are read in every cycle and follow the state register
    flags = {n for n in resets if re.fullmatch(r"s_\w+_sel_q", n)}
    assert flags and all(resets[n] for n in flags), flags
    # everything else is a datapath register: values, loop registers, the call-local
    # scratchpad's elements (pooled or not)
    datapath = {
        n for n in resets if n not in {"state_q", "rd_q", "mem_phase_q", "mem_beat_q", "acc_q"}
    }
    datapath -= {f"keep_{k}_q" for k in range(4)} | flags
    datapath -= {"rs1_q", "rs2_q"}
    assert datapath, resets
    assert not any(resets[n] for n in datapath), {n for n in datapath if resets[n]}
    assert "tmp" in res.unit.registerless


@pytest.mark.sim
def test_cosim_starts_registers_without_reset_at_random_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Co-simulation of the unit as built: 0 mismatches. Then the same unit with the reset
    of `keep`'s elements taken away (as if they were call-local): `peek` reads an element
    no call has written yet, which the interpreter holds at 0, and the co-simulation
    reports the random value the register started with."""
    spec = _spec(tmp_path)
    cache = ROOT / "build" / "cosim"
    res = synthesize(lower_spec_file(spec), tmp_path / "good", 10.0, mem_latency=4)
    ok = run_cosim(
        spec, res.verilog_path, res.unit.name, cases=60, seed=3, cache_dir=cache, random_init=True
    )
    assert ok.mismatches == []
    assert {k: v["cases"] for k, v in ok.stats.items()} == {"push": 60, "peek": 60, "mix": 60}

    plain = rtlgen.UnitGenerator.reset_value

    def without_keep(self: rtlgen.UnitGenerator, rname: str) -> int | None:
        return None if rname.startswith("keep_") else plain(self, rname)

    monkeypatch.setattr(rtlgen.UnitGenerator, "reset_value", without_keep)
    bad = synthesize(lower_spec_file(spec), tmp_path / "bad", 10.0, mem_latency=4)
    assert not _resets(bad.verilog_path.read_text())["keep_0_q"]
    got = run_cosim(
        spec, bad.verilog_path, bad.unit.name, cases=60, seed=3, cache_dir=cache, random_init=True
    )
    assert any("peek" in m for m in got.mismatches), got.mismatches
    # started at zero instead, the missing reset goes unseen (`peek` reads the 0 the
    # interpreter holds): what random_init is for
    zero = run_cosim(
        spec, bad.verilog_path, bad.unit.name, cases=60, seed=3, cache_dir=cache, random_init=False
    )
    assert zero.mismatches == []


@pytest.mark.sim
def test_llm_unit_with_random_initial_values(tmp_path: Path) -> None:
    """The whole LLM extension (value registers pooled across its four ISAXs, call-local
    scratchpads, shared multipliers) at the core's clock, its registers without a reset
    started at random values: 0 mismatches."""
    spec = ROOT / "examples" / "llm" / "llm.isax"
    res = synthesize(lower_spec_file(spec), tmp_path / "llm", 5.67, mem_latency=4)
    assert len(_resets(res.verilog_path.read_text())) > 40
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=50,
        seed=11,
        cache_dir=ROOT / "build" / "cosim",
        random_init=True,
    )
    assert cs.mismatches == []
    assert {k: v["cases"] for k, v in cs.stats.items()} == dict.fromkeys(res.reports, 50)


SRAM_SPEC = """\
extension clr;

scratchpad tab: [u32; 12] impl(sram);   // kept across calls: `get` reads what `put` wrote
scratchpad buf: [u32; 8] impl(sram);    // filled before it is read in every call

#[opcode(custom0), funct7(0)]
isax put(rs1, rs2) -> rd {
    tab[rs2 % 12] = rs1;
    return rs1;
}

#[opcode(custom0), funct7(1)]
isax get(rs1, rs2) -> rd {
    return tab[rs1 % 12] + rs2;
}

#[opcode(custom0), funct7(2)]
isax sum8(rs1, rs2) -> rd {
    burst buf[0 +: 8] <- mem[rs1];
    var t: u32 = rs2;
    for i in 0..8 {
        t = t + buf[i];
    }
    return t;
}
"""


def test_sram_kept_across_calls_is_cleared_after_reset(tmp_path: Path) -> None:
    """An SRAM macro takes no reset: the unit zeroes the words of `tab` (kept across
    calls) after reset, refusing commands meanwhile; `buf` (call-local) is left alone
    and listed as not kept."""
    spec = tmp_path / "clr.isax"
    spec.write_text(SRAM_SPEC)
    ext = find_extension(lower_spec_file(spec))
    assert [s.sym_name.data for s in cleared_srams(ext)] == ["tab"]
    assert call_local_srams(ext) == {"buf"}
    res = synthesize(lower_spec_file(spec), tmp_path / "out", 10.0, mem_latency=4)
    v = res.verilog_path.read_text()
    assert res.unit.clear_cycles == 12
    assert "cmd_ready stays low for 12 cycles" in v
    assert res.unit.registerless == ["buf"]
    resets = _resets(v)
    assert resets["sram_clear_q"] and resets["sram_clear_row_q"]
    assert "sram_clear_q <= 1'h1;" in v


@pytest.mark.sim
def test_cosim_sees_sram_words_not_cleared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The unit as built: 0 mismatches with random initial values (SRAM words too). The
    same unit without the clearing: `get` reads a word `put` has not written yet, which
    the interpreter holds at 0, and co-simulation reports the random word the SRAM
    started with; from zeros, it goes unseen."""
    spec = tmp_path / "clr.isax"
    spec.write_text(SRAM_SPEC)
    cache = ROOT / "build" / "cosim"
    good = synthesize(lower_spec_file(spec), tmp_path / "good", 10.0, mem_latency=4)
    ok = run_cosim(spec, good.verilog_path, good.unit.name, cases=60, seed=4, cache_dir=cache)
    assert ok.mismatches == []
    assert {k: v["cases"] for k, v in ok.stats.items()} == {"put": 60, "get": 60, "sum8": 60}

    monkeypatch.setattr(rtlgen, "cleared_srams", lambda ext: [])
    bad = synthesize(lower_spec_file(spec), tmp_path / "bad", 10.0, mem_latency=4)
    assert "sram_clear_q" not in bad.verilog_path.read_text()
    got = run_cosim(spec, bad.verilog_path, bad.unit.name, cases=60, seed=4, cache_dir=cache)
    assert any("get" in m or "tab" in m for m in got.mismatches), got.mismatches
    zero = run_cosim(
        spec, bad.verilog_path, bad.unit.name, cases=60, seed=4, cache_dir=cache, random_init=False
    )
    assert zero.mismatches == []
