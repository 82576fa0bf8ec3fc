"""Area and critical path on a real cell library: Yosys maps, OpenSTA times.

One method for units and cores alike, so that their figures compare:

1. Yosys ``synth -flatten -run :fine`` (coarse synthesis; memories are collected into
   ``$mem_v2`` cells by ``memory -nomap``).
2. Memories whose read ports are all combinational stay logic (``memory_map``: no SRAM macro
   reads combinationally). Every other memory is *cut out*: its shape (words x bits, ports)
   is recorded, its read data become inputs of the netlist and its address, data and enable
   nets outputs (``expose``), and the cell is deleted. Its area is priced from the SRAM table
   below (:data:`SRAM_TABLE`), not from flip-flops. An aquas unit's SRAM banks are
   instances of a black-box model (``synth/sram.py``): Yosys keeps them as cells without
   area, and they are priced from their shape the same way (:func:`sram_instances`).
3. ``synth -run fine:``, ``dfflibmap -liberty``, ABC with ``-constr`` (a driving cell and an
   output load, so ABC buffers high-fanout nets: without it OpenSTA times unbuffered nets of
   hundreds of loads) and the script of ``abc -fast -D <clock ps>`` (``map -D``, ``buffer``,
   ``upsize``/``dnsize``; ABC's full script needs tens of CPU minutes on a unit or a core,
   this one seconds), wires that only alias others removed and
   port-to-port connections buffered (``insbuf``: OpenSTA's Verilog reader takes no
   ``assign``), ``stat -liberty`` for the logic area.
4. OpenSTA: ``read_liberty``, ``read_verilog``, ``link_design``, ``create_clock`` on the clock
   port, inputs and outputs constrained to that clock with zero delay (the cut SRAM read data
   arrive at the clock edge: the macro's own clock-to-output time is not included), and
   ``report_checks``. The critical path is the clock period less the worst slack.

Results are cached by content hash (script, library, inputs, parameters, clock) under the
user cache directory (``aquas.cachedir``, ``<cache>/sta``): mapping a core takes minutes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aquas.cachedir import cache_dir as default_cache_dir
from aquas.diagnostics import AquasError

#: Environment variable naming another Liberty file (default: the OSU018 library that
#: scripts/setup.sh unpacks into the virtualenv).
LIBERTY_ENV = "AQUAS_LIBERTY"
LIBRARY_NAME = "osu018"
SETUP_HINT = "run scripts/setup.sh (Debian packages yosys, opensta and qflow-tech-osu018)"

#: Input driver and output load given to ABC and OpenSTA alike (OSU018 units: pF).
DRIVING_CELL = "BUFX2"
OUTPUT_LOAD_PF = 0.02

#: Published 6T SRAM bit-cell areas (um^2) of logic processes, by node (nm): Intel's 180 nm
#: (5.59 um^2, Yang et al., IEDM 1998), 130 nm (2.45 um^2, Tyagi et al., IEDM 2000) and 90 nm
#: (1.0 um^2, Thompson et al., IEDM 2002) logic technologies. The standard cells are OSU018
#: (0.18 um), so the 180 nm cell prices its memories.
SRAM_BITCELL_UM2 = {180: 5.59, 130: 2.45, 90: 1.0}
SRAM_NODE_NM = 180

#: Macro area per bit = bit cell / array efficiency. The array efficiency (the bit array's share
#: of the macro; the rest is decoders, sense amplifiers, write drivers, control) falls for small
#: macros, whose periphery does not shrink with the array. These efficiencies are assumptions
#: in the range that compiler datasheets show, not measured figures: (max bits, efficiency).
SRAM_TABLE: tuple[tuple[int, float], ...] = (
    (2 * 1024, 0.30),
    (16 * 1024, 0.45),
    (128 * 1024, 0.60),
    (sys.maxsize, 0.70),
)
#: A memory with two or more ports (2RW, 1R1W) uses a dual-port bit cell, about twice the area.
SRAM_MULTIPORT_FACTOR = 2.0

#: Seconds between two calls of a ``progress`` callback while a tool runs.
PROGRESS_INTERVAL_S = 1.0


@dataclass(frozen=True)
class Memory:
    """One memory cut out of the netlist: its shape and ports."""

    name: str
    words: int
    bits: int
    read_ports: int
    write_ports: int

    @property
    def total_bits(self) -> int:
        return self.words * self.bits

    @property
    def area_um2(self) -> float:
        return sram_area_um2(self.words, self.bits, self.read_ports, self.write_ports)


def sram_area_um2(words: int, bits: int, read_ports: int = 1, write_ports: int = 1) -> float:
    """The priced area of an SRAM macro of ``words`` x ``bits`` (see :data:`SRAM_TABLE`)."""
    total = words * bits
    eff = next(e for limit, e in SRAM_TABLE if total <= limit)
    area = total * SRAM_BITCELL_UM2[SRAM_NODE_NM] / eff
    # one read and one write port share one port (1RW) only if they cannot be busy in the
    # same cycle; counted as two ports when there are more than one of either
    if max(read_ports, write_ports) > 1:
        area *= SRAM_MULTIPORT_FACTOR
    return area


@dataclass(frozen=True)
class StaFigures:
    """Area (um^2) and timing (ns) of one module on one library."""

    library: str
    top: str
    clock_ns: float  # the period OpenSTA times at (and ABC's target, unless map_ns)
    logic_area_um2: float
    cells: int
    flops: int
    critical_path_ns: float  # clock period less the worst slack
    memories: list[Memory] = field(default_factory=list)
    seconds: float = 0.0  # Yosys + OpenSTA time when it was measured
    map_ns: float | None = None  # ABC's delay target when tighter than the clock

    @property
    def memory_bits(self) -> int:
        return sum(m.total_bits for m in self.memories)

    @property
    def memory_area_um2(self) -> float:
        return sum(m.area_um2 for m in self.memories)

    @property
    def total_area_um2(self) -> float:
        return self.logic_area_um2 + self.memory_area_um2

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["memory_bits"] = self.memory_bits
        d["memory_area_um2"] = round(self.memory_area_um2, 1)
        d["total_area_um2"] = round(self.total_area_um2, 1)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StaFigures:
        keys = {f for f in cls.__dataclass_fields__}
        args = {k: v for k, v in d.items() if k in keys}
        args["memories"] = [Memory(**m) for m in d.get("memories", [])]
        return cls(**args)


def liberty_path() -> Path:
    """The Liberty file: ``$AQUAS_LIBERTY`` or the one scripts/setup.sh unpacked."""
    env = os.environ.get(LIBERTY_ENV)
    path = (
        Path(env)
        if env
        else Path(sys.prefix) / "share" / "aquas-tech" / "osu018" / "osu018_stdcells.lib"
    )
    if not path.is_file():
        raise AquasError(f"the cell library is missing: {path}", hint=SETUP_HINT)
    return path


def _binary(name: str, what: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        raise AquasError(f"{name} is not installed (needed for {what})", hint=SETUP_HINT)
    return exe


def tools_available() -> bool:
    """Whether Yosys, OpenSTA and the Liberty file are all there."""
    try:
        _binary("yosys", "area")
        _binary("sta", "timing")
        liberty_path()
    except AquasError:
        return False
    return True


# `r:RD_CLK_ENABLE<1`: every read port combinational (the parameter has a bit per port)
_ASYNC_MEMS = "t:$mem_v2 r:RD_CLK_ENABLE<1 %i"
_YOSYS_SCRIPT = """\
{reads}
{chparams}hierarchy -check -top {top}
synth -flatten -top {top} -run :fine
memory_map {async_mems}
tee -q -o {mems} dump t:$mem_v2
select -set memrd t:$mem_v2 %x:+[RD_DATA] t:$mem_v2 %d
expose -cut @memrd
select -set memin t:$mem_v2 %x:+[RD_ADDR,RD_EN,RD_ARST,RD_SRST,WR_ADDR,WR_DATA,WR_EN] t:$mem_v2 %d
expose @memin
delete t:$mem_v2
synth -top {top} -run fine: -noabc
dfflibmap -liberty {lib}
abc -script {abc} -constr {constr} -liberty {lib}
opt_clean -purge
setundef -zero
insbuf -buf {buf} A Y
opt_clean -purge
tee -q -o {stat} stat -liberty {lib}
write_verilog -noattr -noexpr -nohex -nodec {netlist}
"""
# ABC's delay-oriented fast script (what `abc -fast -D` runs) with `cleanup` before
# `buffer`: on VexRiscv, `map` leaves a dangling node and `buffer` aborts on it ("node has no
# fanout"). The full script (`&dch; &nf`) needs tens of CPU minutes on a core or a unit.
_ABC = "strash\ndretime\nmap -D {ps}\ncleanup\nbuffer\nupsize -D {ps}\ndnsize -D {ps}\nstime -p\n"
_CONSTR = f"set_driving_cell {DRIVING_CELL}\nset_load {OUTPUT_LOAD_PF}\n"
_STA_SCRIPT = """\
read_liberty {lib}
read_verilog {netlist}
link_design {top}
{clock}
set_load {load} [all_outputs]
report_checks -path_delay max -digits 4
exit
"""


def parse_mem_dump(text: str) -> list[Memory]:
    """The memories of a Yosys ``dump t:$mem_v2`` (RTLIL cells with their parameters)."""
    mems = []
    for m in re.finditer(r"^\s*cell \$mem_v2 (\S+)\n((?:\s+parameter .*\n?)*)", text, re.M):
        params = dict(re.findall(r"parameter \\(\w+) (\S+)", m.group(2)))

        def num(k: str, params: dict[str, str] = params) -> int:
            v = params.get(k)
            if v is None or not re.fullmatch(r"-?\d+", v):
                raise AquasError(f"unexpected yosys memory parameter {k}={v!r}")
            return int(v)

        mems.append(
            Memory(
                name=m.group(1).lstrip("\\"),
                words=num("SIZE"),
                bits=num("WIDTH"),
                read_ports=num("RD_PORTS"),
                write_ports=num("WR_PORTS"),
            )
        )
    return sorted(mems, key=lambda x: x.name)


# An instance of an aquas SRAM bank model (``synth/sram.py`` ``SramShape.module_name``:
# ``<unit>_sram_<bits>x<words>_<ports>rw``), a black box to Yosys (``(* blackbox *)``)
_SRAM_INSTANCE = re.compile(r"^\s*\w+_sram_(\d+)x(\d+)_(\d+)rw\s+(\w+)\s*\(", re.M)


def sram_instances(files: list[Path]) -> list[Memory]:
    """The SRAM bank instances of aquas units in ``files``, in file order: Yosys keeps them
    as black boxes, which ``stat -liberty`` prices at nothing, so they are priced here like
    the memories cut out of the netlist."""
    return [
        Memory(name=m[4], words=int(m[2]), bits=int(m[1]), read_ports=int(m[3]),
               write_ports=int(m[3]))
        for f in files
        for m in _SRAM_INSTANCE.finditer(f.read_text())
    ]  # fmt: skip


def parse_stat_liberty(text: str) -> tuple[float, int, int]:
    """(chip area um^2, cells, flip-flops) from ``stat -liberty`` output."""
    area = re.findall(r"Chip area for (?:top )?module '\S+':\s+([\d.]+)", text)
    cells = re.findall(r"Number of cells:\s+(\d+)", text)
    if not area or not cells:
        raise AquasError("could not read the area from yosys' stat -liberty output")
    flops = sum(int(n) for n in re.findall(r"^\s+(?:DFF\w*|LATCH)\s+(\d+)", text, re.M))
    return float(area[-1]), int(cells[-1]), flops


def parse_slack(text: str) -> float | None:
    """The worst slack (ns) of ``report_checks``; None when no path is constrained."""
    m = re.search(r"^\s*(-?[\d.]+)\s+slack \((?:MET|VIOLATED)\)", text, re.M)
    return float(m.group(1)) if m else None


def netlist_ports(netlist: str, top: str) -> list[str]:
    m = re.search(rf"^module {re.escape(top)}\((.*?)\);", netlist, re.M | re.S)
    if not m:
        raise AquasError(f"the mapped netlist has no module {top}")
    return [p.strip() for p in m.group(1).split(",")]


def find_clock(ports: list[str]) -> str | None:
    """The clock port among ``ports`` (``clk``, ``clk_i``, ``clock``, ``io_clk``...)."""
    for name in ports:
        if re.fullmatch(r"(io_)?(clk|clock)(_i)?", name, re.I):
            return name
    return None


def _key(
    files: list[Path], top: str, chparams: str, clock_ns: float, lib: Path, map_ns: float | None
) -> str:
    h = hashlib.sha256()
    parts = (_YOSYS_SCRIPT, _ABC, _CONSTR, _STA_SCRIPT, _SRAM_INSTANCE.pattern, top, chparams)
    timing = repr(clock_ns) if map_ns is None else f"{clock_ns!r} map {map_ns!r}"
    for part in (*parts, timing):
        h.update(part.encode() + b"\0")
    h.update(lib.read_bytes())
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()[:24]


def run_tool(
    cmd: list[str], what: str, timeout: int, progress: Callable[[float], None] | None
) -> str:
    """Run ``cmd``; call ``progress(seconds)`` every PROGRESS_INTERVAL_S while it runs."""
    done = threading.Event()
    t0 = time.perf_counter()

    def tick() -> None:
        while not done.wait(PROGRESS_INTERVAL_S):
            if progress is not None:
                progress(time.perf_counter() - t0)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AquasError(f"{what} did not finish within {timeout} s") from None
    finally:
        done.set()
        ticker.join()
    if proc.returncode != 0:
        raise AquasError(f"{what} failed:\n{(proc.stderr or proc.stdout)[-2000:]}")
    return proc.stdout + proc.stderr


def measure(
    verilog: Path | list[Path],
    top: str,
    clock_ns: float,
    *,
    params: dict[str, int] | None = None,
    cache_dir: Path | None = None,
    timeout: int = 3600,
    progress: Callable[[str, float], None] | None = None,
    map_ns: float | None = None,
) -> StaFigures:
    """Map module ``top`` (its ``params`` overridden) onto the cell library and time it at
    ``clock_ns``; cached. ``progress(step, seconds)`` is called while Yosys or OpenSTA run.

    ABC maps for a delay of ``clock_ns``, or of ``map_ns`` when given: a tighter target
    that trades area for delay (timing closure's remapping of a narrow miss,
    ``synth/pipeline.py``); OpenSTA still times at ``clock_ns``."""
    if not clock_ns > 0:
        raise AquasError(f"the clock period must be positive, not {clock_ns}")
    if map_ns is not None and not 0 < map_ns <= clock_ns:
        raise AquasError(f"ABC's delay target must be in (0, {clock_ns}] ns, not {map_ns}")
    files = [verilog] if isinstance(verilog, Path) else list(verilog)
    lib = liberty_path()
    chparams = "".join(f"chparam -set {k} {v} {top}\n" for k, v in sorted((params or {}).items()))
    key = _key(files, top, chparams, clock_ns, lib, map_ns)
    cache_dir = cache_dir or default_cache_dir("sta")
    cached = cache_dir / f"{top}-{key}.json"
    fig = _load(cached)
    if fig is not None:
        return fig
    cache_dir.mkdir(parents=True, exist_ok=True)
    # one process maps a design at a time (pytest workers, two runs): the others wait for
    # its result instead of mapping the same core again
    with open(cache_dir / f"{top}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fig = _load(cached)
        if fig is None:
            fig = _map_and_time(files, top, clock_ns, chparams, lib, timeout, progress, map_ns)
            tmp_file = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp_file.write_text(json.dumps(fig.as_dict(), indent=1))
            tmp_file.replace(cached)
    return fig


def _load(cached: Path) -> StaFigures | None:
    if not cached.exists():
        return None
    try:
        return StaFigures.from_dict(json.loads(cached.read_text()))
    except (ValueError, TypeError, KeyError):
        return None  # an unreadable entry is measured again


def _map_and_time(
    files: list[Path],
    top: str,
    clock_ns: float,
    chparams: str,
    lib: Path,
    timeout: int,
    progress: Callable[[str, float], None] | None,
    map_ns: float | None,
) -> StaFigures:
    yosys, sta = _binary("yosys", "area"), _binary("sta", "timing")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "constr.txt").write_text(_CONSTR)
        map_ps = max(1, round((map_ns or clock_ns) * 1000))
        (d / "map.abc").write_text(_ABC.format(ps=map_ps))
        script = _YOSYS_SCRIPT.format(
            reads="\n".join(f"read_verilog -sv {f.resolve()}" for f in files),
            chparams=chparams,
            top=top,
            async_mems=_ASYNC_MEMS,
            mems=d / "mems.txt",
            lib=lib,
            abc=d / "map.abc",
            constr=d / "constr.txt",
            buf=DRIVING_CELL,
            stat=d / "stat.txt",
            netlist=d / "netlist.v",
        )
        (d / "map.ys").write_text(script)
        run_tool(
            [yosys, "-q", "-s", str(d / "map.ys")],
            f"yosys (mapping {top} onto {LIBRARY_NAME})",
            timeout,
            (lambda s: progress("yosys", s)) if progress else None,
        )
        area, cells, flops = parse_stat_liberty((d / "stat.txt").read_text())
        mem_text = (d / "mems.txt").read_text() if (d / "mems.txt").exists() else ""
        memories = sorted(parse_mem_dump(mem_text) + sram_instances(files), key=lambda m: m.name)
        netlist = (d / "netlist.v").read_text()
        clk = find_clock(netlist_ports(netlist, top))
        # a design without a clock port is combinational: its ports are timed as a path
        # from inputs to outputs within a virtual clock of the same period
        clock = (
            f"create_clock -name clk -period {clock_ns} [get_ports {clk}]\n"
            f"set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports {clk}]]\n"
            if clk
            else f"create_clock -name clk -period {clock_ns}\n"
            "set_input_delay 0 -clock clk [all_inputs]\n"
        ) + (
            "set_output_delay 0 -clock clk [all_outputs]\n"
            f"set_driving_cell -lib_cell {DRIVING_CELL} "
            + (f"[delete_from_list [all_inputs] [get_ports {clk}]]" if clk else "[all_inputs]")
        )
        (d / "sta.tcl").write_text(
            _STA_SCRIPT.format(
                lib=lib, netlist=d / "netlist.v", top=top, clock=clock, load=OUTPUT_LOAD_PF
            )
        )
        out = run_tool(
            [sta, "-no_splash", "-exit", str(d / "sta.tcl")],
            f"OpenSTA (timing {top})",
            timeout,
            (lambda s: progress("opensta", s)) if progress else None,
        )
        if re.search(r"^Error", out, re.M):
            raise AquasError(f"OpenSTA reported an error on {top}:\n{out[-2000:]}")
        slack = parse_slack(out)
    fig = StaFigures(
        library=LIBRARY_NAME,
        top=top,
        clock_ns=clock_ns,
        logic_area_um2=area,
        cells=cells,
        flops=flops,
        # no constrained path (no logic between ports and registers): nothing to time
        critical_path_ns=round(clock_ns - slack, 4) if slack is not None else 0.0,
        memories=memories,
        seconds=round(time.perf_counter() - t0, 2),
        map_ns=map_ns,
    )
    return fig
