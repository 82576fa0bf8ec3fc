"""Area and logic depth of generated Verilog through Yosys.

One fixed, generic mapping for units, cores and the operator library alike
(``synth -flatten -noabc``: Yosys' internal single-bit gates ``$_AND_``, ``$_OR_``,
``$_XOR_``, ``$_MUX_``, ``$_NOT_`` and flip-flops), so figures are comparable with each
other: area is the gate count, logic depth the longest register-to-register (or port)
path in gates (``ltp -noff``). Results are cached by content hash under the user cache directory (``aquas.cachedir``, ``<cache>/yosys``).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from aquas.cachedir import cache_dir as default_cache_dir
from aquas.diagnostics import AquasError
from aquas.synth.sta import run_tool

# SRAM scratchpad banks (synth/sram.py) are black boxes with registered read data: they are
# cut out before the longest-path search, so paths end at their inputs and start at their
# outputs, as at flip-flops.
SCRIPT = (
    "synth -flatten -top {top} -noabc; opt_clean; tee -q -o {stat} stat; "
    "delete t:*_sram_*rw; tee -q -o {ltp} ltp -noff"
)


@dataclass(frozen=True)
class YosysFigures:
    cells: int  # all cells, flip-flops included
    flops: int  # flip-flop bits
    gates: int  # combinational single-bit gates
    depth: int  # longest combinational path, in gates

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def yosys_binary() -> str:
    exe = shutil.which("yosys")
    if exe is None:
        raise AquasError(
            "yosys is not installed (needed for area and logic depth)",
            hint="run scripts/setup.sh (Debian package yosys)",
        )
    return exe


def parse_stat(text: str) -> tuple[int, int]:
    """(cells, flip-flop bits) from ``stat`` output (top module totals)."""
    m = re.findall(r"Number of cells:\s+(\d+)", text)
    if not m:
        raise AquasError("could not read the cell count from yosys' stat output")
    cells = int(m[-1])
    flops = 0
    for kind, n in re.findall(
        r"^\s+\$_(S?DFF\w*|DFFE?\w*|SDFF\w*|ALDFF\w*|DLATCH\w*)_?\s+(\d+)", text, re.M
    ):
        del kind
        flops += int(n)
    return cells, flops


def parse_ltp(text: str) -> int:
    m = re.search(r"Longest topological path in \S+ \(length=(\d+)\)", text)
    if not m:
        raise AquasError("could not read the longest path from yosys' ltp output")
    return int(m.group(1))


def measure(
    verilog: Path | list[Path],
    top: str,
    cache_dir: Path | None = None,
    timeout: int = 1800,
    params: dict[str, int] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> YosysFigures:
    """Figures of module ``top`` (with its ``params`` overridden, e.g. a core as the SoC
    configures it), cached by the content of every input. ``progress(step, seconds)`` is
    called while Yosys runs (``aquas.area.progress_printer``)."""
    files = [verilog] if isinstance(verilog, Path) else list(verilog)
    chparams = "".join(f"chparam -set {k} {v} {top}; " for k, v in sorted((params or {}).items()))
    h = hashlib.sha256(SCRIPT.encode() + top.encode() + chparams.encode())
    for f in files:
        h.update(f.read_bytes())
    key = h.hexdigest()[:20]
    cache_dir = cache_dir or default_cache_dir("yosys")
    cached = cache_dir / f"{key}.json"
    if cached.exists():
        return YosysFigures(**json.loads(cached.read_text()))
    exe = yosys_binary()
    with tempfile.TemporaryDirectory() as tmp:
        stat_f, ltp_f = Path(tmp) / "stat.txt", Path(tmp) / "ltp.txt"
        reads = "; ".join(f"read_verilog -sv {f.resolve()}" for f in files)
        script = reads + "; " + chparams + SCRIPT.format(top=top, stat=stat_f, ltp=ltp_f)
        run_tool(
            [exe, "-q", "-p", script],
            f"yosys (logic depth of {top})",
            timeout,
            (lambda s: progress("yosys", s)) if progress else None,
        )
        cells, flops = parse_stat(stat_f.read_text())
        depth = parse_ltp(ltp_f.read_text())
    fig = YosysFigures(cells=cells, flops=flops, gates=cells - flops, depth=depth)
    cache_dir.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(fig.as_dict()))
    return fig
