"""One unit from IR to checked, measured Verilog: synthesis, lint, Yosys area and timing.

:func:`synthesize_unit` is the single implementation behind ``aquas synth`` and the synth
stage of ``aquas run``; the callers decide what a lint warning means to them.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp

from aquas.diagnostics import AquasError
from aquas.synth.flow import SynthResult, synthesize
from aquas.synth.oplib import OperatorLibrary

if TYPE_CHECKING:
    from aquas.plans.choose import InterfaceChoice
    from aquas.target import Target


@dataclass
class UnitResult:
    synth: SynthResult
    ns_per_level: float
    lint_warnings: list[str] | None = None  # None: lint not run
    yosys: dict[str, Any] | None = None  # None: Yosys not run
    interface: InterfaceChoice | None = None  # the plan of each ISAX and why
    plan_mlir: str = ""  # the extension after the interface plans, before synthesis


def check_clock(clock_ns: float, what: str = "--clock-ns") -> None:
    """A usable clock period: finite and positive (NaN and infinity compare oddly)."""
    import math

    if not math.isfinite(clock_ns) or clock_ns <= 0:
        raise AquasError(f"{what} must be a finite positive number of ns, got {clock_ns}")


def synthesize_unit(
    module: ModuleOp,
    out_dir: Path,
    clock_ns: float,
    mem_latency: int,
    *,
    lint: bool = True,
    yosys: bool = True,
    lib: OperatorLibrary | None = None,
    interface: str = "auto",
    max_burst_beats: int = 256,
    progress: Callable[[str], None] | None = None,
    bus_width: int = 32,
    target: Target | None = None,
    scratchpads: str | None = None,
    pipeline: str = "directive",
) -> UnitResult:
    """Synthesizes ``module``'s extension into ``out_dir``, then lints the Verilog and
    measures its area and logic depth with Yosys (each optional).

    ``interface`` is the memory-interface plan (``auto``, ``as-written``, ``single``,
    ``burst``; docs/synthesis.md) applied per ISAX first; ``max_burst_beats`` is the
    target's ``isax_master.max_burst_beats``; ``bus_width`` the ISAX memory master's data
    width (the target's ``isax_master.bus_width``). With a ``target`` both come from it
    (the arguments are ignored), ``auto`` keeps per ISAX the plan the memory-interface
    model predicts fastest on it, and each ISAX's report carries that prediction.
    ``scratchpads`` (``auto``, ``sram``, ``regs``) overrides every scratchpad's ``impl``
    directive (``None`` keeps the spec's). ``pipeline`` is the loop-pipelining mode
    (``auto``, ``directive``, ``off``; synth/loop_pipeline.py)."""
    check_clock(clock_ns)
    if target is not None:
        bus_width = target.isax_master.bus_width
        max_burst_beats = target.isax_master.max_burst_beats
    if mem_latency < 0:
        raise AquasError(f"the memory latency must be >= 0 cycles, got {mem_latency}")
    from aquas.interpreter import find_extension
    from aquas.outdir import check_name

    # these name output files: refuse what the file system cannot hold before writing any
    ext = find_extension(module)
    check_name(ext.sym_name.data, "the extension name")
    for isax in ext.isaxs():
        check_name(isax.sym_name.data, "the ISAX name")
    lib = lib or OperatorLibrary.load()
    from xdsl.printer import Printer

    from aquas.synth.sram import apply_scratchpad_impl

    apply_scratchpad_impl(module, scratchpads)

    from aquas.plans.choose import apply_interface

    choice = apply_interface(
        module,
        interface,
        clock_ns,
        mem_latency,
        lib,
        max_burst_beats,
        progress=progress,
        target=target,
        bus_width=bus_width,
    )
    apply_scratchpad_impl(module, scratchpads)  # scratchpads the plans added, too
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    plan_mlir = buf.getvalue() + "\n"
    extra = {n: {"interface": choice.report(n)} for n in choice.plans}
    res = synthesize(
        module,
        out_dir,
        clock_ns,
        mem_latency,
        lib,
        extra=extra,
        bus_width=bus_width,
        pipeline=pipeline,
    )
    result = UnitResult(res, lib.ns_per_level, interface=choice, plan_mlir=plan_mlir)
    if lint:
        from aquas.synth.lint import lint as run_lint

        result.lint_warnings = run_lint(res.verilog_path)
    if yosys:
        from aquas.synth.yosys import measure

        fig = measure(res.verilog_path, res.unit.name)  # cached by content under build/yosys
        depth_ns = fig.depth * lib.ns_per_level
        result.yosys = fig.as_dict() | {
            "depth_ns": round(depth_ns, 3),
            "meets_clock": depth_ns <= clock_ns,
        }
    return result
