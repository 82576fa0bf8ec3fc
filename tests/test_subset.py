"""``aquas synth --isax NAME``: a unit of part of an extension (aquas/spec/subset.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.interpreter import find_extension
from aquas.spec.frontend import lower_spec_file
from aquas.spec.subset import keep_isaxs

ROOT = Path(__file__).resolve().parents[1]
DSP = ROOT / "examples/dsp/dsp.isax"


def _contents(spec: Path, keep: list[str]) -> tuple[list[str], set[str], set[str]]:
    module = lower_spec_file(spec)
    keep_isaxs(module, keep)
    ext = find_extension(module)
    return (
        [i.sym_name.data for i in ext.isaxs()],
        {s.sym_name.data for s in ext.scratchpads()},
        {s.sym_name.data for s in ext.states()},
    )


def test_the_kept_isaxs_keep_what_they_name_and_nothing_else() -> None:
    # examples/dsp/dsp.isax: fir8 bursts xs in, reads taps, writes ys and bursts it out;
    # it names no state register
    assert _contents(DSP, ["fir8"]) == (["fir8"], {"taps", "xs", "ys"}, set())
    # biquad reads and writes the nine bq_* registers and no scratchpad
    bq = {f"bq_{n}" for n in ("b0", "b1", "b2", "a1", "a2", "x1", "x2", "y1", "y2")}
    assert _contents(DSP, ["biquad"]) == (["biquad"], set(), bq)
    # the spec's order is kept, whatever the order asked in
    names, spms, _ = _contents(DSP, ["vdot16", "fir_load_taps"])
    assert names == ["fir_load_taps", "vdot16"] and spms == {"taps", "va", "vb"}


def test_an_unknown_isax_is_refused_and_the_module_left_whole() -> None:
    module = lower_spec_file(DSP)
    before = [i.sym_name.data for i in find_extension(module).isaxs()]
    with pytest.raises(AquasError, match="extension dsp has no ISAX fir9") as e:
        keep_isaxs(module, ["fir8", "fir9"])
    assert "fir_load_taps, fir8, biquad_load" in (e.value.hint or "")
    assert [i.sym_name.data for i in find_extension(module).isaxs()] == before


@pytest.mark.sim
def test_a_subset_unit_synthesizes_and_cosimulates(tmp_path: Path) -> None:
    out = tmp_path / "u"
    r = CliRunner().invoke(
        main,
        [
            *("synth", str(DSP), "--isax", "fir_load_taps", "--isax", "fir8"),
            *("--clock-ns", "10", "--no-yosys", "--cosim", "15", "-o", str(out)),
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "unit.json").read_text())
    assert sorted(doc["interface"]) == ["fir8", "fir_load_taps"]
    # 15 random cases of each kept ISAX, interleaved, against the golden interpreter
    assert doc["cosim"] == {"cases": 30, "mismatches": []}
    assert doc["lint_warnings"] == []
    verilog = (out / "dsp_isax_unit.sv").read_text()
    assert "taps_bank0" in verilog and "va_bank0" not in verilog and "bq_b0_q" not in verilog
    assert sorted(p.name for p in out.glob("[!.]*.json")) == [
        "fir8.json",
        "fir_load_taps.json",
        "unit.json",
    ]
