"""``aquas synth``: spec → verified, lint-checked Verilog with per-ISAX reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from aquas.cli.common import clock_option, err, out, resolve_clock_ns, soc_option
from aquas.diagnostics import AquasError

if TYPE_CHECKING:
    from aquas.target import Target


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@clock_option()
@click.option(
    "-o",
    "--out-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory (default build/synth/<ext>).",
)
@soc_option("Reference SoC whose descriptor the unit is built for (memory parameters, bus width).")
@click.option(
    "--platform",
    type=click.Path(path_type=Path),
    help="Platform file (a descriptor, or overrides of a built-in one) instead of --soc's.",
)
@click.option(
    "--mem-latency",
    type=int,
    default=None,
    help="ISAX memory latency L (memory.latency + isax_master.setup_latency) the latency "
    "report and the plan choice use; overrides the target's [default: the target's].",
)
@click.option(
    "--interface",
    type=click.Choice(["auto", "as-written", "single", "burst"]),
    default="auto",
    show_default=True,
    help="Memory-interface plan per ISAX: auto keeps the plan the memory-interface model "
    "predicts fastest on the target; the others apply one plan to every ISAX "
    "(docs/synthesis.md).",
)
@click.option(
    "--pipeline",
    type=click.Choice(["auto", "directive", "off"]),
    default="directive",
    show_default=True,
    help="Loop pipelining: directive pipelines #[pipeline] loops; auto also the loops over "
    "scratchpad data that are not unrolled, where it saves cycles (their prologue and "
    "epilogue copy operators: more area); off none.",
)
@click.option(
    "--max-burst-beats",
    type=int,
    default=None,
    help="Longest burst in bus beats; overrides the target's isax_master.max_burst_beats.",
)
@click.option(
    "--emit-plan-mlir",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the extension after the interface plans as MLIR to this file.",
)
@click.option(
    "--emit-plan-isax",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the extension after the interface plans as an .isax spec to this file "
    "(docs/cli.md).",
)
@click.option(
    "--bus-width",
    type=click.Choice(["32", "64", "128"]),
    default=None,
    help="Data width of the unit's memory master; overrides the target's isax_master.bus_width.",
)
@click.option(
    "--reencode-for",
    "reencode_for",
    default=None,
    metavar="SOC|PLATFORM",
    help="Re-encode ISAXs whose opcode the core of this SoC (a built-in name, a packaged "
    "platform or a platform file) does not route into the opcodes it routes; the map is "
    "printed. Use the SoC given to `aquas match --soc`.",
)
@click.option(
    "--scratchpads",
    type=click.Choice(["auto", "sram", "regs"]),
    default=None,
    help="Build every scratchpad from SRAM banks (sram), from registers (regs), or by bank "
    "size (auto: SRAM above 64 elements per bank), overriding the spec's impl(...) "
    "directives [default: each scratchpad's directive].",
)
@click.option(
    "--close-timing",
    is_flag=True,
    help="Map the unit onto the cell library and time it with OpenSTA; schedule again with "
    "derated operator delays until its critical path meets the clock (docs/synthesis.md).",
)
@click.option(
    "--no-share",
    is_flag=True,
    help="Give every multiply its own multiplier instead of sharing units across states "
    "and ISAXs (for comparison).",
)
@click.option(
    "--area-budget",
    type=float,
    default=None,
    metavar="F",
    help="Fit the unit's estimated area within F times the target core's area (e.g. 0.3): "
    "the number of shared multipliers, which classes share wider units and which run on "
    "sequential multipliers are chosen for the fewest cycles (docs/synthesis.md).",
)
@click.option("--no-yosys", is_flag=True, help="Skip the Yosys area/depth run.")
@click.option("--no-lint", is_flag=True, help="Skip verilator --lint-only -Wall.")
@click.option(
    "--cosim",
    "cosim_cases",
    default=0,
    show_default=True,
    help="Also co-simulate N random cases against the golden interpreter.",
)
@click.option(
    "--isax",
    "isaxs",
    multiple=True,
    metavar="NAME",
    help="Synthesize only this ISAX of the extension (repeatable), with the scratchpads and "
    "state registers it uses: what it costs on its own (docs/cli.md).",
)
@click.pass_context
def synth(
    ctx: click.Context,
    spec: Path,
    clock_ns: float | None,
    out_dir: Path | None,
    soc: str,
    platform: Path | None,
    mem_latency: int | None,
    interface: str,
    pipeline: str,
    max_burst_beats: int | None,
    emit_plan_mlir: Path | None,
    emit_plan_isax: Path | None,
    bus_width: str | None,
    reencode_for: str | None,
    scratchpads: str | None,
    close_timing: bool,
    no_share: bool,
    area_budget: float | None,
    no_yosys: bool,
    no_lint: bool,
    cosim_cases: int,
    isaxs: tuple[str, ...],
) -> None:
    """Synthesize an .isax extension into a Verilog unit with the canonical ISAX port.

    The unit is built for a target: --platform, else --soc (default vexriscv). Its
    memory parameters drive the plan choice and its bus width and burst limit the unit;
    --mem-latency, --bus-width and --max-burst-beats override the target's values
    (docs/cli.md). Nothing is written unless every requested check passes (lint warnings
    are reported, not fatal; a co-simulation mismatch is).
    """
    from rich.table import Table

    from aquas.interpreter import find_extension
    from aquas.outdir import OutputDir, check_name
    from aquas.reencode import Encoding, spec_for_target
    from aquas.spec.frontend import lower_spec_file
    from aquas.synth.pipeline import synthesize_unit

    if cosim_cases < 0:
        raise AquasError(f"--cosim must be >= 0, got {cosim_cases}")
    explicit_soc = ctx.get_parameter_source("soc") == click.core.ParameterSource.COMMANDLINE
    target = synth_target(
        platform,
        soc if platform is None or explicit_soc else None,
        mem_latency,
        None if bus_width is None else int(bus_width),
        max_burst_beats,
    )
    encodings: list[tuple[str, Encoding]] = []
    encoding_doc: dict[str, object] | None = None
    if reencode_for is None:
        module = lower_spec_file(spec)
    else:
        module, emap = spec_for_target(spec, _target(reencode_for))
        for line in emap.lines():
            err.print(line, markup=False)
        encodings = [(m.isax, m.new) for m in emap.moves]
        encoding_doc = emap.to_json()
    if isaxs:
        from aquas.spec.subset import keep_isaxs

        keep_isaxs(module, isaxs)
        encodings = [(n, e) for n, e in encodings if n in isaxs]
    ext = check_name(find_extension(module).sym_name.data, "the extension name")
    clock_ns = resolve_clock_ns(clock_ns, target)
    out_dir = out_dir or Path("build") / "synth" / ext
    with OutputDir(out_dir, transactional=True) as guard:
        staging = guard.temporary("synth")
        u = synthesize_unit(
            module,
            staging,
            clock_ns,
            target.isax_mem_latency,
            lint=not no_lint,
            yosys=not no_yosys,
            interface=interface,
            progress=lambda msg: err.print(msg, markup=False),
            target=target,
            scratchpads=scratchpads,
            close_timing=close_timing,
            share=not no_share,
            pipeline=pipeline,
            area_budget=area_budget,
        )
        if emit_plan_isax is not None and u.plan_isax_error:
            # refused before anything is written
            raise AquasError(f"--emit-plan-isax: {u.plan_isax_error}")
        res = u.synth
        unit_doc: dict[str, object] = {
            "unit": res.unit.name,
            "target": target.name,
            "mem_latency": target.isax_mem_latency,
            "bus_width": target.isax_master.bus_width,
            "max_burst_beats": target.isax_master.max_burst_beats,
            "verilog": str(guard.path / res.verilog_path.name),
            "seconds_to_verilog": round(res.seconds, 3),
        }
        if encoding_doc is not None:
            unit_doc["encoding"] = encoding_doc
        if u.timing_closure is not None:
            unit_doc["timing_closure"] = u.timing_closure
            unit_doc["map_ns"] = u.map_ns  # ABC's target for the kept unit, if not the clock
        from aquas.synth.flow import multicycle_units
        from aquas.synth.oplib import OperatorLibrary

        lib = OperatorLibrary.load()
        unit_doc["multicycle_units"] = multicycle_units(res.unit, lib)
        from aquas.synth.binding import report as sharing_report

        unit_doc["shared_units"] = [
            *sharing_report(res.unit.binding, lib),
            *sharing_report(res.unit.adders, lib),
        ]
        unit_doc["area_estimate"] = res.unit.area_estimate
        if res.unit.area_budget is not None:
            unit_doc["area_budget"] = res.unit.area_budget
        if u.lint_warnings is not None:
            unit_doc["lint_warnings"] = u.lint_warnings
            if u.lint_warnings:
                err.print(
                    "verilator --lint-only -Wall:\n  " + "\n  ".join(u.lint_warnings),
                    markup=False,
                )
        if u.yosys is not None:
            unit_doc["yosys"] = u.yosys
        assert u.interface is not None
        unit_doc["interface"] = {n: u.interface.report(n) for n in u.interface.plans}
        if interface != "auto":
            # a forced plan that could not rewrite an access says where and why
            for rejs in u.interface.rejections.values():
                for r in rejs:
                    err.print(f"warning: {r}", markup=False)
        if cosim_cases:
            from aquas.synth.cosim import cycle_budget, run_cosim

            budgets = {n: cycle_budget(r) for n, r in res.reports.items()}
            cs = run_cosim(
                spec,
                res.verilog_path,
                res.unit.name,
                cases=cosim_cases,
                budgets=budgets,
                encodings=encodings,
                subset=isaxs,
            )
            unit_doc["cosim"] = {"cases": cs.cases, "mismatches": cs.mismatches}
            if cs.mismatches:
                raise AquasError("co-simulation mismatches:\n  " + "\n  ".join(cs.mismatches[:5]))
        (staging / "unit.json").write_text(json.dumps(unit_doc, indent=2) + "\n")
        guard.commit_files(staging)
    out_dir = guard.path
    for path, text in ((emit_plan_mlir, u.plan_mlir), (emit_plan_isax, u.plan_isax)):
        if path is not None:
            from aquas.outdir import write_atomic

            write_atomic(path, text)

    table = Table(
        title=f"{res.unit.name} @ {clock_ns:g} ns, L = {target.isax_mem_latency}  "
        f"({res.seconds:.2f} s to Verilog)"
    )
    for col in (
        "isax", "plan", "states", "cycles @L", "fixed + per-L", "predicted", "interface ops", "beats"
    ):  # fmt: skip
        table.add_column(col)
    for name, rep in res.reports.items():
        lat = rep["latency"]
        cyc = (
            f"{lat['cycles_min']}"
            if lat["cycles_min"] == lat["cycles_max"]
            else f"{lat['cycles_min']}..{lat['cycles_max']}"
        )
        form = f"{lat['fixed_min']} + {lat['per_mem_latency_min']}L"
        if (
            lat["fixed_min"] != lat["fixed_max"]
            or lat["per_mem_latency_min"] != lat["per_mem_latency_max"]
        ):
            form += f" .. {lat['fixed_max']} + {lat['per_mem_latency_max']}L"
        iface = ", ".join(f"{k} x{v}" for k, v in rep["interface_ops"].items()) or "registers only"
        plan = rep["interface"]["plan"]
        pred = rep["interface"].get("predicted_cycles")
        table.add_row(
            name, plan, str(rep["states"]), cyc, form, f"{pred:g}", iface, str(rep["memory_beats"])
        )
    out.print(
        f"target {target.name}: L = {target.isax_mem_latency} (memory latency "
        f"{target.memory.latency} + DMA setup {target.isax_master.setup_latency}), "
        f"{target.isax_master.bus_width}-bit port, bursts <= "
        f"{target.isax_master.max_burst_beats} beats; predicted = the memory-interface model",
        markup=False,
    )
    out.print(table)
    for name, rep in res.reports.items():
        out.print(
            f"plan {name}: {rep['interface']['plan']} ({rep['interface']['reason']})", markup=False
        )
    for su in unit_doc["shared_units"]:  # type: ignore[attr-defined]
        out.print(
            f"shared {su['class']}: {su['units']} unit(s) of {su['width']} bits for {su['ops']} "
            f"{'multiplies' if su['kind'] == 'mul' else 'additions'} (per unit {su['ops_per_unit']}; operands {su['operand_bits']} bits"
            f"{'' if su['operands_signed'] is None else (' signed' if su['operands_signed'] else ' unsigned')}"
            f"; full-width estimate {su['estimated_cells']} cells with input selects, "
            f"against {su['unshared_cells']} unshared)",
            markup=False,
        )
        per_isax: dict[str, int] = {}
        for u in su["users"]:
            per_isax[u.split("@")[0]] = per_isax.get(u.split("@")[0], 0) + 1
        users = ", ".join(f"{n} x{k}" for n, k in per_isax.items())
        out.print(f"  users: {users}", markup=False)
    if res.unit.area_budget is not None:
        for line in budget_lines(res.unit.area_budget):
            out.print(line, markup=False)
    for name, rep in res.reports.items():
        for line in pipeline_lines(name, rep.get("pipelined_loops", [])):
            out.print(line, markup=False)
    if "yosys" in unit_doc:
        y = unit_doc["yosys"]
        assert isinstance(y, dict)
        verdict = "meets" if y["meets_clock"] else "MISSES"
        out.print(
            f"area: {y['cells']} cells ({y['flops']} flip-flops); logic depth {y['depth']} gates = {y['depth_ns']} ns -> {verdict} the {clock_ns:g} ns clock"
        )
    if "lint_warnings" in unit_doc:
        n = len(unit_doc["lint_warnings"])  # type: ignore[arg-type]
        out.print("lint: clean (verilator -Wall)" if n == 0 else f"lint: {n} warning(s)")
    if "cosim" in unit_doc:
        c = unit_doc["cosim"]
        assert isinstance(c, dict)
        out.print(f"co-simulation: {c['cases']} case(s), 0 mismatches against the interpreter")
    out.print(f"wrote {out_dir}/")


def pipeline_lines(isax: str, loops: list[dict[str, object]]) -> list[str]:
    """One line per pipelined loop: the II achieved (the kernel's states), its bounds and
    what limits it; and why a loop with a ``#[pipeline]`` directive was left alone."""
    lines = []
    for lp in loops:
        where = f"pipeline {isax} loop at {lp['source']}"
        if not lp["ii"] and not lp["requested"]:
            continue
        if not lp["ii"]:
            lines.append(f"{where}: not pipelined ({lp['not_pipelined']})")
            continue
        text = (
            f"{where}: II {lp['kernel_states']} (ResMII {lp['res_mii']}, RecMII {lp['rec_mii']}), "
            f"{lp['stages']} stages, iteration latency {lp['iteration_latency']} cycles "
            f"(was {lp['body_cycles']} cycles per iteration)"
        )
        if lp["limit"]:
            text += f"; limited by {lp['limit']}"
        if lp.get("kernel_limit"):
            text += (
                f"; the kernel takes {lp['kernel_states']} states, not the modulo schedule's "
                f"II {lp['ii']}, because an iteration waits for {lp['kernel_limit']}"
            )
        lines.append(text)
    return lines


def budget_lines(rep: dict[str, object]) -> list[str]:
    """What ``--area-budget`` chose and why, with the cycles it costs per ISAX."""
    est = rep.get("final_estimate_um2", rep["chosen_estimate_um2"])
    core = float(rep["core_um2"])  # type: ignore[arg-type]
    lines = [
        f"area budget {rep['fraction']:g} x core = {float(rep['budget_um2']):,.0f} um^2 "  # type: ignore[arg-type]
        f"(estimated): default {float(rep['default_estimate_um2']):,.0f} um^2 "  # type: ignore[arg-type]
        f"({100 * float(rep['default_estimate_um2']) / core:.1f} %), chosen "  # type: ignore[arg-type]
        f"{float(est):,.0f} um^2 ({100 * float(est) / core:.1f} %): {rep['why']}",  # type: ignore[arg-type]
        f"  chosen: {'; '.join(rep['chosen'])}",  # type: ignore[arg-type]
    ]
    before = rep["cycles_default"]
    after = rep["cycles_chosen"]
    assert isinstance(before, dict) and isinstance(after, dict)
    changed = [f"{n} {before[n][1]} -> {after[n][1]}" for n in after if after[n] != before[n]]
    lines.append("  fixed cycles per ISAX: " + (", ".join(changed) if changed else "unchanged"))
    return lines


def synth_target(
    platform: Path | None,
    soc: str | None,
    mem_latency: int | None = None,
    bus_width: int | None = None,
    max_burst_beats: int | None = None,
) -> Target:
    """The target ``aquas synth`` builds for: the platform file, else the SoC's
    descriptor, else the default one, with the command line's overrides applied on top
    (an override wins over the descriptor). ``mem_latency`` is the ISAX memory latency
    ``L = memory.latency + isax_master.setup_latency``: the DMA setup is kept and the
    memory latency becomes ``L - setup`` (when ``L`` is below the setup, the setup becomes
    ``L`` and the memory latency 0)."""
    from aquas.target import load_target

    target = load_target(platform, soc=soc)
    im: dict[str, int] = {}
    if mem_latency is not None:
        if mem_latency < 0:
            raise AquasError(f"--mem-latency must be >= 0, got {mem_latency}")
        setup = min(target.isax_master.setup_latency, mem_latency)
        im["setup_latency"] = setup
        target = target.replace(memory={"latency": mem_latency - setup})
    if bus_width is not None:
        im["bus_width"] = bus_width
    if max_burst_beats is not None:
        if not 1 <= max_burst_beats <= 256:
            raise AquasError(f"--max-burst-beats must be in 1..256, got {max_burst_beats}")
        im["max_burst_beats"] = max_burst_beats
    if im:
        try:
            target = target.replace(isax_master=im)
        except ValueError as e:  # the schema's checks (e.g. an L2 line narrower than a beat)
            raise AquasError(f"the command line's overrides make an invalid target: {e}") from None
    return target


def _target(name: str) -> Target:
    """``--reencode-for``: a built-in SoC's name, else a platform (packaged name or file)."""
    from aquas.target import load_target, target_names

    if name in target_names():
        return load_target(soc=name)
    return load_target(name)
