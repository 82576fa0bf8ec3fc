"""aquas-interface-resident: which bursts may keep their scratchpad across calls, when the
flow marks them, and what synthesis builds for them (the co-simulation and the programs
that check the hardware are in tests/sim/test_resident_sim.py)."""

from __future__ import annotations

import re
from pathlib import Path

from aquas.context import make_context
from aquas.passes import parse_pipeline
from aquas.plans.choose import apply_interface
from aquas.plans.resident import RESIDENT_ATTR, mark_resident, resident_bursts
from aquas.sim.builder import unit_snoops
from aquas.spec.frontend import lower_spec, lower_spec_file
from aquas.synth.flow import synthesize
from aquas.target import load_target

SPEC = Path(__file__).parent / "sim" / "fixtures" / "resident_elig.isax"


def _module(s1: str = ""):
    """The fixture; ``s1``: a directive for scratchpad s1 (``impl(sram)``)."""
    if not s1:
        return lower_spec_file(SPEC)
    text = SPEC.read_text()
    assert "scratchpad s1: [u32; 8];" in text
    return lower_spec(text.replace("scratchpad s1: [u32; 8];", f"scratchpad s1: [u32; 8] {s1};"))


def test_only_a_sole_writer_run_once_at_a_constant_offset_is_resident() -> None:
    # s2: in a loop; s3: also written element-wise; s4: offset from rs2; s5: two bursts
    assert [o.scratchpad.root_reference.data for o in resident_bursts(_module())] == ["s1"]


def test_the_pass_marks_and_the_flow_marks_only_on_snooping_targets() -> None:
    m = _module()
    parse_pipeline("aquas-interface-resident").apply(make_context(), m)
    marked = [o for o in m.walk() if RESIDENT_ATTR in o.attributes]
    assert [o.scratchpad.root_reference.data for o in marked] == ["s1"]  # type: ignore[attr-defined]

    # the flow keeps SRAM scratchpads resident, not register ones: s1's claim would cost
    # about as much as its 8 registers, which otherwise share flip-flops with other
    # ISAXs' registers (fsm.call_local_registers)
    vex = load_target(None, soc="vexriscv")
    assert vex.isax_master.snoop_writes
    m = _module()
    choice = apply_interface(m, "as-written", 10.0, 12, target=vex)
    assert choice.resident == {}
    assert not any(RESIDENT_ATTR in o.attributes for o in m.walk())
    assert resident_bursts(_module(), sram_only=True) == []
    m = _module("impl(sram)")
    choice = apply_interface(m, "as-written", 10.0, 12, target=vex)
    assert choice.resident == {"once": ["s1"]}
    assert choice.report("once")["resident"] == ["s1"]
    assert "resident" not in choice.report("looped")

    deaf = vex.model_copy(
        update={"isax_master": vex.isax_master.model_copy(update={"snoop_writes": False})}
    )
    m = _module("impl(sram)")
    choice = apply_interface(m, "as-written", 10.0, 12, target=deaf)
    assert choice.resident == {}
    assert not any(RESIDENT_ATTR in o.attributes for o in m.walk())


def test_a_resident_unit_has_the_snoop_port_and_its_claim_registers(tmp_path: Path) -> None:
    m = _module()
    assert mark_resident(m) == {"once": ["s1"]}
    res = synthesize(m, tmp_path / "res", 10.0, mem_latency=4)
    text = res.verilog_path.read_text()
    assert unit_snoops([res.verilog_path])
    # s1 is 32 bytes: at most 8 words after its first (4 bits)
    for reg, width in (("s1_res_q", 1), ("s1_res_addr_q", 32), ("s1_res_extra_q", 4)):
        decl = re.search(rf"reg\s+(\[(\d+):0\])?\s*{reg};", text)
        assert decl is not None, reg
        assert (int(decl.group(2)) + 1 if decl.group(2) else 1) == width, reg
    # the claim is kept for s1 only
    assert set(re.findall(r"(\w+)_res_extra_q;", text)) == {"s1"}
    # the first claimed block is the address's own upper bits, not a register
    assert "_res_lo_q" not in text

    plain = synthesize(_module(), tmp_path / "plain", 10.0, mem_latency=4)
    assert not unit_snoops([plain.verilog_path])
    assert "_res_q" not in plain.verilog_path.read_text()
