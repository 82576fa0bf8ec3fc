"""Area and timing on the OSU018 cell library (aquas.synth.sta): Yosys maps, OpenSTA times.

The expected figures come from the Liberty file read here (cell areas), from the shapes of
the memories written in the test's Verilog and from the SRAM table as documented; the tools
must be installed (scripts/setup.sh): a missing one fails these tests, it does not skip them.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from aquas.diagnostics import AquasError
from aquas.synth import sta
from tests.helpers import require_tool

REG = """
module reg32(input clk, input [31:0] d, output reg [31:0] q);
  always @(posedge clk) q <= d;
endmodule
"""

ADD = """
module add{w}(input clk, input [{m}:0] a, b, output reg [{m}:0] s);
  reg [{m}:0] ra, rb;
  always @(posedge clk) begin ra <= a; rb <= b; s <= ra + rb; end
endmodule
"""

MEM = """
module mem2(input clk, input we, input [7:0] wa, ra, ra2, input [15:0] wd,
            output reg [15:0] rd, output [7:0] rd2);
  reg [15:0] m [0:255];  // registered read: an SRAM, cut out
  reg [7:0] f [0:15];    // combinational read: stays flip-flops
  always @(posedge clk) begin
    if (we) m[wa] <= wd;
    rd <= m[ra];
    if (we) f[wa[3:0]] <= wd[7:0];
  end
  assign rd2 = f[ra2[3:0]] ^ rd[7:0];
endmodule
"""

MAC = """
module mac(input clk, input [15:0] a, b, output reg [31:0] acc);
  reg [15:0] ra, rb;
  always @(posedge clk) begin ra <= a; rb <= b; acc <= acc + ra * rb; end
endmodule
"""


@pytest.fixture(scope="module", autouse=True)
def tools() -> None:
    require_tool("yosys", "yosys")
    require_tool("sta", "opensta")
    try:
        sta.liberty_path()
    except AquasError as e:  # fail loudly: setup installs it, in CI too
        pytest.fail(str(e))


def liberty_areas() -> dict[str, float]:
    """Cell name -> area, read from the Liberty file by the test itself."""
    text = sta.liberty_path().read_text()
    cells = re.findall(r"cell\s*\(\s*\"?(\w+)\"?\s*\)\s*\{[^}]*?\barea\s*:\s*([\d.]+)", text)
    assert len(cells) >= 30, "the OSU018 library has 32 cells"
    return {name: float(a) for name, a in cells}


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / f"{name}.v"
    p.write_text(text)
    return p


def test_register_bank_area_is_its_flip_flops(tmp_path: Path) -> None:
    areas = liberty_areas()
    fig = sta.measure(write(tmp_path, "reg32", REG), "reg32", 10.0, cache_dir=tmp_path / "c")
    assert fig.flops == 32 and fig.cells == 32
    assert fig.logic_area_um2 == pytest.approx(32 * areas["DFFPOSX1"])
    assert fig.memories == [] and fig.memory_area_um2 == 0
    # input -> flip-flop only: the input driver plus the setup time, well under 1 ns
    assert 0.0 < fig.critical_path_ns < 1.0


def test_adders_area_and_critical_path_in_range(tmp_path: Path) -> None:
    areas = liberty_areas()
    small, large = min(areas.values()), max(areas.values())
    figs = {}
    for w in (8, 32):
        src = write(tmp_path, f"add{w}", ADD.format(w=w, m=w - 1))
        figs[w] = sta.measure(src, f"add{w}", 10.0, cache_dir=tmp_path / "c")
    for w, fig in figs.items():
        assert fig.flops == 3 * w
        # the area is the sum of its cells' areas: between all-smallest and all-largest
        assert fig.cells * small <= fig.logic_area_um2 <= fig.cells * large
        # at least one full-adder's worth of gates per bit on top of the flip-flops
        assert fig.cells - fig.flops >= w
    # a ripple carry: four times the bits, a longer path; both meet 10 ns
    assert 0.3 < figs[8].critical_path_ns < figs[32].critical_path_ns < 10.0
    # the OSU018 gates are 0.1-0.3 ns each: a 32-bit carry chain is more than 2 ns
    assert figs[32].critical_path_ns > 2.0


def test_critical_path_does_not_depend_on_the_period_it_is_timed_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sta, "PROGRESS_INTERVAL_S", 0.05)
    src = write(tmp_path, "mac", MAC)
    seen: list[tuple[str, float]] = []
    a = sta.measure(
        src, "mac", 20.0, cache_dir=tmp_path / "c", progress=lambda st, s: seen.append((st, s))
    )
    b = sta.measure(src, "mac", 3.0, cache_dir=tmp_path / "c")  # violated: negative slack
    assert b.critical_path_ns > 3.0
    assert a.critical_path_ns == pytest.approx(b.critical_path_ns, rel=0.15)
    # a 16x16 multiply into a 32-bit accumulator on 0.18 um: several ns, 64 flip-flops
    assert 3.0 < a.critical_path_ns < 20.0
    assert a.flops == 64
    # the progress callback ticks while Yosys runs, with the time elapsed
    ticks = [s for st, s in seen if st == "yosys"]
    assert ticks and ticks == sorted(ticks) and ticks[0] > 0


def test_memories_are_cut_out_and_priced_by_shape(tmp_path: Path) -> None:
    areas = liberty_areas()
    fig = sta.measure(write(tmp_path, "mem2", MEM), "mem2", 10.0, cache_dir=tmp_path / "c")
    assert fig.memories == [sta.Memory("m", words=256, bits=16, read_ports=1, write_ports=1)]
    assert fig.memory_bits == 4096
    # 4 Kbit: the 2-16 Kbit row of the table, 180 nm bit cell of 5.59 um^2 at 45 % efficiency
    assert fig.memory_area_um2 == pytest.approx(4096 * 5.59 / 0.45)
    # the 16 x 8 array read combinationally stays flip-flops (rd belongs to the SRAM)
    assert fig.flops == 16 * 8
    assert fig.logic_area_um2 >= 128 * areas["DFFPOSX1"]
    assert fig.total_area_um2 == pytest.approx(fig.logic_area_um2 + fig.memory_area_um2)


def test_sram_table() -> None:
    assert sta.sram_area_um2(64, 32) == pytest.approx(2048 * 5.59 / 0.30)
    assert sta.sram_area_um2(1024, 32) == pytest.approx(32768 * 5.59 / 0.60)
    assert sta.sram_area_um2(1024, 32, read_ports=2, write_ports=2) == pytest.approx(
        2 * 32768 * 5.59 / 0.60
    )
    # per bit, bigger macros are denser
    assert sta.sram_area_um2(4096, 32) / (4096 * 32) < sta.sram_area_um2(64, 8) / 512


def test_a_tighter_map_target_buys_delay_with_area(tmp_path: Path) -> None:
    """ABC mapped for 2 ns (timing closure's remap of a narrow miss) and timed at 20 ns:
    a shorter path for more area than mapped for the period; cached apart."""
    src = write(tmp_path, "mac", MAC)
    a = sta.measure(src, "mac", 20.0, cache_dir=tmp_path / "c")
    b = sta.measure(src, "mac", 20.0, cache_dir=tmp_path / "c", map_ns=2.0)
    assert a.map_ns is None and b.map_ns == 2.0 and b.clock_ns == 20.0
    assert b.critical_path_ns < a.critical_path_ns and b.logic_area_um2 > a.logic_area_um2
    assert len(list((tmp_path / "c").glob("mac-*.json"))) == 2
    with pytest.raises(AquasError, match="ABC's delay target must be in"):
        sta.measure(src, "mac", 20.0, cache_dir=tmp_path / "c", map_ns=21.0)


def test_second_run_is_a_cache_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = write(tmp_path, "reg32", REG)
    first = sta.measure(src, "reg32", 10.0, cache_dir=tmp_path / "c")
    assert len(list((tmp_path / "c").glob("reg32-*.json"))) == 1

    def no_tools(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a cached result ran a tool")

    monkeypatch.setattr(subprocess, "run", no_tools)
    assert sta.measure(src, "reg32", 10.0, cache_dir=tmp_path / "c") == first
    # another clock period is another result
    with pytest.raises(AssertionError, match="ran a tool"):
        sta.measure(src, "reg32", 5.0, cache_dir=tmp_path / "c")


def test_missing_library_and_bad_input_are_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AquasError, match="clock period must be positive"):
        sta.measure(write(tmp_path, "reg32", REG), "reg32", 0.0, cache_dir=tmp_path)
    bad = write(tmp_path, "bad", "module bad(input clk; endmodule\n")
    with pytest.raises(AquasError, match="yosys"):
        sta.measure(bad, "bad", 10.0, cache_dir=tmp_path)
    monkeypatch.setenv(sta.LIBERTY_ENV, str(tmp_path / "none.lib"))
    with pytest.raises(AquasError, match="cell library is missing"):
        sta.liberty_path()
    assert not sta.tools_available()


def test_parsers() -> None:
    dump = (
        "  cell $mem_v2 \\buf\n"
        "    parameter \\RD_PORTS 2\n"
        "    parameter \\SIZE 64\n"
        "    parameter \\WIDTH 24\n"
        "    parameter \\WR_PORTS 1\n"
    )
    assert sta.parse_mem_dump(dump) == [sta.Memory("buf", 64, 24, 2, 1)]
    assert sta.parse_slack("  -1.2500   slack (VIOLATED)\n") == -1.25
    assert sta.parse_slack("No paths found.\n") is None
    assert sta.find_clock(["rst", "io_clk", "a"]) == "io_clk"
    assert sta.find_clock(["a", "b"]) is None


def test_default_clock_is_the_cores_critical_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from aquas import area
    from aquas.target import load_target

    t = load_target(None, soc="vexriscv")
    core = sta.StaFigures("osu018", "VexRiscv", 10.0, 1e6, 1, 1, 8.123)
    monkeypatch.setattr(area, "core_figures", lambda target, say=None: core)
    clock = area.resolve_clock(None, t)
    # rounded down: never above the core, so a unit meeting it costs the core no frequency
    assert (clock.ns, clock.source) == (8.12, "core")
    assert "8.123 ns" in clock.note
    # a clock given (project clock_ns, --clock-ns) wins
    assert area.resolve_clock(7.0, t).ns == 7.0
    # without the tools: the old default, labelled as a fallback
    monkeypatch.setattr(sta, "tools_available", lambda: False)
    fb = area.resolve_clock(None, t)
    assert (fb.ns, fb.source) == (10.0, "fallback") and "missing" in fb.note


def test_progress_printer_speaks_every_interval() -> None:
    from aquas.area import progress_printer

    said: list[str] = []
    p = progress_printer(said.append, "mapping X", every_s=10.0)
    for s in range(1, 36):
        p("yosys", float(s))
    assert said == [f"  mapping X: yosys running for {s} s" for s in (10, 20, 30)]


def test_concurrent_measures_of_one_design_map_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    src = write(tmp_path, "reg32", REG)
    calls: list[int] = []
    real = sta._map_and_time

    def slow(*args: Any, **kwargs: Any) -> sta.StaFigures:
        calls.append(1)
        time.sleep(0.5)  # the other measure arrives while this one maps
        return real(*args, **kwargs)

    monkeypatch.setattr(sta, "_map_and_time", slow)
    results: list[sta.StaFigures] = []

    def one() -> None:
        results.append(sta.measure(src, "reg32", 10.0, cache_dir=tmp_path / "c"))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 2 and results[0] == results[1]


def test_a_units_sram_banks_are_priced_as_memories(tmp_path: Path) -> None:
    """The banks are black boxes to Yosys (no cell area): each is priced by its shape, as
    the synthesis report lists them, and none of its bits is a flip-flop."""
    from aquas.spec.frontend import lower_spec
    from aquas.synth.flow import synthesize

    src = """
scratchpad a: [u32; 256] impl(sram);
scratchpad c: [u16; 128] partition(cyclic, 4) impl(sram(2));
#[opcode(custom0), funct7(1)]
isax t(rs1, rs2) -> rd { a[rs2 & 255] = rs1; c[rs1 & 127] = trunc<u16>(rs2);
  return a[rs1 & 255]; }
"""
    res = synthesize(lower_spec(src, "s.isax"), tmp_path / "u", 10.0, 4)
    fig = sta.measure(res.verilog_path, res.unit.name, 10.0, cache_dir=tmp_path / "c")
    two = {"read_ports": 2, "write_ports": 2}
    assert fig.memories == [
        sta.Memory("a_bank0", words=256, bits=32, read_ports=1, write_ports=1),
        *(sta.Memory(f"c_bank{b}", words=32, bits=16, **two) for b in range(4)),
    ]
    assert fig.memory_bits == 8192 + 2048
    assert fig.memory_area_um2 == pytest.approx(
        sta.sram_area_um2(256, 32) + 4 * sta.sram_area_um2(32, 16, 2, 2)
    )
    assert fig.flops < 8192 + 2048  # the banks are not mapped to flip-flops
