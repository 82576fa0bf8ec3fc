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
