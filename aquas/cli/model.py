"""``aquas model``: predicted cycles of every ISAX from the memory-interface model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import click

from aquas.cli.common import clock_option, out, resolve_clock_ns, soc_option


@click.command(name="model")
@click.argument("spec", type=click.Path(path_type=Path))
@soc_option("Reference SoC whose descriptor gives the memory parameters.")
@click.option(
    "--platform",
    type=click.Path(path_type=Path),
    help="Platform file (a descriptor, or overrides of a built-in one) instead of --soc's.",
)
@click.option(
    "--plan",
    type=click.Choice(["auto", "as-written", "single", "burst"]),
    default="auto",
    show_default=True,
    help="Interface plan per ISAX, as aquas synth --interface applies it: auto (per ISAX "
    "the plan with the fewest predicted cycles), or one plan for every ISAX.",
)
@click.option(
    "--l2",
    type=click.Choice(["cold", "warm"]),
    default="cold",
    show_default=True,
    help="With an L2: cold (first access to each line misses) or warm (every access hits).",
)
@clock_option()
@click.option("--json", "as_json", is_flag=True, help="Print the predictions as JSON.")
@click.pass_context
def model(
    ctx: click.Context,
    spec: Path,
    soc: str,
    platform: Path | None,
    plan: str,
    l2: str,
    clock_ns: float | None,
    as_json: bool,
) -> None:
    """Predict the cycles of every ISAX of SPEC on a target, with their breakdown.

    Per ISAX: compute cycles (the synthesis schedule's states), transfer cycles (each
    memory access: request, DMA setup, memory latency or L2 hit/miss, beats,
    acknowledgement), their total from command handshake to response, and whether memory
    or compute bounds it, and the interface plan of each ISAX with the reason: the same
    choice ``aquas synth --interface`` makes on the same target. See
    docs/memory-model.md. Exit status 2 for bad input.
    """
    from rich.table import Table

    from aquas.cli.common import load_module
    from aquas.model.formulas import MemParams
    from aquas.model.plans import choose_plan
    from aquas.target import load_target

    explicit_soc = ctx.get_parameter_source("soc") == click.core.ParameterSource.COMMANDLINE
    target = load_target(platform, soc=soc if platform is None or explicit_soc else None)
    module = load_module(spec)
    clock_ns = resolve_clock_ns(clock_ns, target)
    mode: Literal["cold", "warm"] = "cold" if l2 == "cold" else "warm"
    choice = choose_plan(module, target, plan, l2=mode, clock_ns=clock_ns)
    p = MemParams.of(target, mode)
    params: dict[str, Any] = {
        "memory_latency": p.latency,
        "dma_setup": p.setup,
        "bus_bytes": p.bus_bytes,
        "max_burst_beats": p.max_burst_beats,
        "dma_channels": p.channels,
        "outstanding": p.outstanding,
        "l2": p.l2,
        "l2_hit_latency": p.l2_hit_latency if p.l2 != "off" else None,
        "l2_line_bytes": p.l2_line_bytes if p.l2 != "off" else None,
    }
    if as_json:
        doc = {
            "spec": str(spec),
            "soc": target.name,
            "params": params,
            "plan": choice.requested,
            "isaxs": [
                pr.as_dict()
                | {
                    "plan": choice.plans[pr.isax],
                    "reason": choice.reasons[pr.isax],
                    "considered": choice.considered.get(pr.isax, {}),
                }
                for pr in choice.predictions
            ],
        }
        out.print(json.dumps(doc, indent=2), markup=False)
        return
    l2_text = "no L2" if p.l2 == "off" else f"L2 {p.l2} (hit {p.l2_hit_latency})"
    out.print(
        f"{spec.name} on {target.name}: memory latency {p.latency}, DMA setup {p.setup}, "
        f"{8 * p.bus_bytes}-bit port, {p.channels} channel(s), bursts <= {p.max_burst_beats} "
        f"beats, {l2_text}",
        markup=False,
    )
    table = Table(title=None, show_lines=False)
    for col in ("isax", "plan", "cycles", "compute", "transfer", "bound"):
        table.add_column(col, justify="left" if col in ("isax", "plan", "bound") else "right")
    for pr in choice.predictions:
        table.add_row(
            pr.isax,
            choice.plans[pr.isax],
            f"{pr.total:.1f}",
            str(pr.compute_cycles),
            f"{pr.transfer_cycles:.1f}",
            pr.bound if pr.transfers else "compute (no memory)",
        )
    out.print(table)
    rows = [(pr, t) for pr in choice.predictions for t in pr.transfers]
    if rows:
        tt = Table(title="transfers (per ISAX call)")
        for col in ("isax", "op", "where", "bytes", "beats", "count", "cycles", "L2 misses"):
            tt.add_column(col, justify="right" if col not in ("isax", "op", "where") else "left")
        for pr, t in rows:
            tt.add_row(
                pr.isax,
                t.kind,
                t.where,
                str(t.bytes),
                str(t.beats),
                str(t.count),
                f"{t.cycles:.1f}",
                f"{t.l2_misses:.2f}" if p.l2 == "cold" else "-",
            )
        out.print(tt)
    for pr in choice.predictions:
        out.print(
            f"plan {pr.isax}: {choice.plans[pr.isax]} ({choice.reasons[pr.isax]})", markup=False
        )
    for pr in choice.predictions:
        for note in pr.notes:
            out.print(f"note: {pr.isax}: {note}", markup=False)
