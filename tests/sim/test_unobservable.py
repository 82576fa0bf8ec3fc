"""Storage whose contents reach nothing observable (``prepare.unobservable_storage``).

A state or register scratchpad that is read only to compute its own next value
(``cnt = cnt + 1`` that no ISAX returns, stores or branches on) has registers that feed
only themselves, and the Verilog exporter removes them. The co-simulation bench compares
every state and scratchpad the unit keeps; it used to fail on such a spec with "the unit
has no register" (found by generated specs, ``tests/fuzzing/specs.py``). Now the bench
knows there is nothing to compare there."""

from __future__ import annotations

from pathlib import Path

import pytest

from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec_file
from aquas.synth.cosim import registerless_scratchpads, run_cosim
from aquas.synth.flow import synthesize
from aquas.synth.prepare import unobservable_storage, unread_states

ROOT = Path(__file__).resolve().parents[2]

SPEC = """\
extension unobs;

state cnt: u8 = 3;             // counts calls; nothing reads it otherwise
state seen: u32 = 0;           // read back by `last`: observable
scratchpad tally: [u32; 4];    // sums operands; nothing reads it otherwise
scratchpad via: [u32; 2];      // feeds `seen`, which is observable

#[opcode(custom0), funct7(0)]
isax tick(rs1, rs2) -> rd {
    cnt = cnt + 1;
    tally[rs2 & 3] = tally[rs2 & 3] + rs1;
    via[0] = via[0] ^ rs1;
    seen = via[0] + rs2;
    return rs1 ^ 5;
}

#[opcode(custom0), funct7(1)]
isax last(rs1, rs2) -> rd {
    return seen;
}
"""


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "unobs.isax"
    spec.write_text(SPEC)
    return spec


def test_storage_that_feeds_only_itself_is_unobservable(tmp_path: Path) -> None:
    module = lower_spec_file(_spec(tmp_path))
    assert unobservable_storage(find_extension(module)) == {"cnt", "tally"}
    assert unread_states(module) == {"cnt"}


@pytest.mark.sim
def test_cosim_compares_what_the_unit_keeps(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    res = synthesize(lower_spec_file(spec), tmp_path / "out", 10.0, mem_latency=4)
    v = res.verilog_path.read_text()
    # the exporter removed the self-feeding registers; the observable ones stay
    assert "cnt_q" not in v and "tally_0_q" not in v
    assert "seen_q" in v and "via_0_q" in v
    assert registerless_scratchpads(v) == ["tally"]
    cs = run_cosim(
        spec, res.verilog_path, res.unit.name, cases=60, seed=2, cache_dir=ROOT / "build" / "cosim"
    )
    assert cs.mismatches == []
    assert {k: x["cases"] for k, x in cs.stats.items()} == {"tick": 60, "last": 60}


CONSTANT = """\
// generated (tests/fuzzing/specs.py, seed 202, case 34); st1 is only ever written 0
extension konst;
state st1: u1 = 0;
state st2: u33 = 8458268455;
#[opcode(0b0001011), funct7(6), funct3(7)]
isax op3(rs1, rs2) {
    let t4: u12 = (0u12 + 0xd85u12);
    if trunc<u1>(0u63) {
        var v5: u16 = select(st1, ((~0x0i63))[24:9], mem<u16>[rs2 + 28]);
    } else {
        st1 = (((0u17)[1u8] | 0) << ((0x3u3 >> 1) >> 1));
    }
}
#[opcode(custom0), funct7(5), funct3(4)]
isax op6(rs1, rs2) -> rd {
    if ({(255u8 * 127u8), 0x7fffu16} >= ((0x7fffffu24 << 24) * (-0u24))) {
        let t7 = (0x1i62)[38:37];
        if ((st1 ? st1 : st1) || (0x68f12ac4a75u48)[0:0]) {
            mem<u32>[rs2 + 32] = mem<u32>[rs2 + 44];
            var v8 = (-((-0u47) ^ (70368744177663u47 | 1u47)));
        }
        var v9: u64 = (~0x7fffffffffffffffu64);
    } else {
        st2 = st2;
    }
    #[unroll(4)]
    for i10 in 3..7 {
        st2 ^= ((-(-0x3fffffffffffi46)))[43:11];
    }
    return mem<i32>[rs1];
}
"""


def test_a_state_written_only_with_its_reset_value_is_constant(tmp_path: Path) -> None:
    """Found by generated specs (seed 202): ``st1`` is written only with its reset value
    (``((0u17)[1u8] | 0) << ...`` folds to 0) and read in a branch; the exporter folds its
    register into that constant, and the bench failed with "the unit has no register for
    state st1"."""
    from aquas.synth.prepare import constant_states, prepare

    spec = tmp_path / "konst.isax"
    spec.write_text(CONSTANT)
    module = lower_spec_file(spec)
    # st2 only feeds itself: prepare drops its writes (aquas-drop-unobservable), so it
    # keeps its reset value too
    assert constant_states(find_extension(prepare(module.clone()))) == {"st1", "st2"}
    assert {"st1", "st2"} <= unread_states(module)


@pytest.mark.sim
def test_cosim_of_a_constant_state(tmp_path: Path) -> None:
    spec = tmp_path / "konst.isax"
    spec.write_text(CONSTANT)
    res = synthesize(lower_spec_file(spec), tmp_path / "out", 10.0, mem_latency=4)
    v = res.verilog_path.read_text()
    assert "st1_q" not in v  # folded to its reset value
    cs = run_cosim(
        spec, res.verilog_path, res.unit.name, cases=40, seed=3, cache_dir=ROOT / "build" / "cosim"
    )
    assert cs.mismatches == []
    assert {k: x["cases"] for k, x in cs.stats.items()} == {"op3": 40, "op6": 40}
