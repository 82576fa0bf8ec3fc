"""The reports of ``aquas run``: JSON (every figure), Markdown and a self-contained HTML page.

The HTML page embeds its plots (matplotlib, PNG as data URIs), so it can be mailed or
archived as one file.  Plots: cycles per timed region and end to end (baseline vs ISAX),
the latency of every ISAX split into compute and memory-interface cycles, the unit's area
against the core's, and the unit's logic depth against the core's.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from aquas.outdir import write_atomic


def _fmt(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def summary_rows(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(what, baseline, isax, speedup) rows: every region, then end to end."""
    rows = [
        (r["label"], str(r["baseline_cycles"]), str(r["isax_cycles"]), _fmt(r["speedup"]) + "x")
        for r in doc["regions"]
    ]
    e = doc["end_to_end"]
    rows.append(
        ("end to end", str(e["baseline_cycles"]), str(e["isax_cycles"]), _fmt(e["speedup"]) + "x")
    )
    return rows


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def _enc(e: dict[str, Any]) -> str:
    return f"{e['opcode_name'] or hex(e['opcode'])} funct3={e['funct3']} funct7={e['funct7']}"


def encoding_section(doc: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The "Encoding" table (aquas.reencode's map) when an ISAX moved or could not."""
    enc = doc.get("encoding")
    if not enc or not (enc["moves"] or enc["error"]):
        return []
    routed = ", ".join(enc["routed"])
    if enc["error"]:
        return [
            (
                f"Encoding (not re-encoded: {enc['target']} routes only {routed})",
                ["extension", "reason"],
                [[enc["extension"], enc["error"]]],
            )
        ]
    return [
        (
            f"Encoding (re-encoded for {enc['target']}: its core routes only {routed})",
            ["ISAX", "spec encoding", f"encoding on {enc['target']}"],
            [[m["isax"], _enc(m["old"]), _enc(m["new"])] for m in enc["moves"]],
        )
    ]


def _um2(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


def area_timing_section(doc: dict[str, Any]) -> tuple[str, list[str], list[list[str]]]:
    """The "Area and timing" table on the cell library (aquas.area); the generic-gate table
    when the report has no cell-library figures (the tools were missing)."""
    area, timing = doc["area"], doc["timing"]
    unit, core = area["unit_um2"], area.get("core_um2")
    core_name = f"core ({area['core_module']})"

    def row(name: str, f: dict[str, Any] | None, cp: float | None, depth: Any) -> list[str]:
        if f is None:
            reason = area.get("core_unmeasured") or "not measured"
            return [name, reason, "", "", "", str(depth) if depth is not None else ""]
        return [
            name,
            _um2(f["logic"]),
            f"{_um2(f['memory'])} ({f['memory_bits']} bits)",
            _um2(f["total"]),
            _fmt(cp, 2),
            str(depth) if depth is not None else "",
        ]

    ratio = [
        "unit / core",
        _fmt(area.get("overhead_logic_percent"), 1) + " %",
        _fmt(area.get("overhead_memory_percent"), 1) + " %",
        "**" + _fmt(area["overhead_percent"], 1) + " %**",
        _fmt(timing["frequency_factor"]) + " (fmax factor)"
        if timing.get("frequency_factor") is not None
        else "",
        "",
    ]
    return (
        f"Area and timing ({area['method']})",
        ["", "logic um^2", "memory um^2", "total um^2", "critical path ns", "gate depth"],
        [
            row("ISAX unit", unit, timing["unit_critical_path_ns"], timing.get("unit_depth")),
            row(core_name, core, timing["core_critical_path_ns"], timing.get("core_depth")),
            ratio,
        ],
    )


def _sections(doc: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report's tables: (title, header, rows), shared by Markdown and HTML."""
    area, timing = doc["area"], doc["timing"]
    unit = area["unit"]
    # a core Yosys cannot read (the descriptor's core.area_unmeasured) has no figures
    core = area["core"] or {k: "not measured" for k in ("cells", "flops", "gates", "depth")}
    return [
        *encoding_section(doc),
        (
            "Cycles (baseline vs ISAX build)",
            ["region", "baseline", "ISAX", "speedup"],
            [list(r) for r in summary_rows(doc)],
        ),
        (
            "ISAX build per region, predicted vs measured (predicted: the baseline's "
            "region with the software of its rewritten regions, measured in the baseline "
            "with site markers, replaced by the model's cost of each ISAX call made in it "
            "and the instructions around the calls priced by the core's cost model; "
            "the calls replayed on the ISS, docs/memory-model.md)",
            ["region", "measured", "predicted", "error"],
            [
                [
                    r["label"],
                    str(r["isax_cycles"]),
                    _fmt(r.get("predicted_isax_cycles"), 0),
                    _fmt(
                        None if r.get("prediction_error") is None else 100 * r["prediction_error"],
                        1,
                    )
                    + " %",
                ]
                for r in doc["regions"]
                if r.get("predicted_isax_cycles") is not None
            ],
        ),
        (
            "Rewritten regions, as written vs offloaded (" + doc.get("sites_note", "") + ")",
            [
                "site",
                "ISAX",
                "calls (as written / offloaded)",
                "software / call",
                "offloaded / call",
                "predicted / call",
                "speedup",
            ],
            [
                [
                    f"{r['file']}:{r['line']} {r['function']}",
                    r["isax"],
                    f"{r['calls']} / {r.get('calls_offloaded', r['calls'])}",
                    _fmt(r["software_per_call"], 1),
                    _fmt(r["offloaded_per_call"], 1),
                    _fmt(r.get("predicted_per_call"), 1),
                    f"{_fmt(r['speedup'])}x"
                    if r["speedup"] is not None
                    else f"not measured: {r['why_not'] or 'not reached'}",
                ]
                for r in doc.get("sites", [])
            ],
        ),
        (
            "ISAX latency (at the platform's memory latency L; fixed = compute, control and "
            "bus beats, memory = cycles waiting on L)",
            ["ISAX", "cycles", "fixed", "memory latency", "interface ops", "bus beats"],
            [
                [
                    lat["isax"],
                    str(lat["cycles"]),
                    str(lat["compute_cycles"]),
                    str(lat["memory_cycles"]),
                    ", ".join(f"{k} {v}" for k, v in sorted(lat["interface_ops"].items())) or "-",
                    str(lat["memory_beats"]),
                ]
                for lat in doc["latency"]
            ],
        ),
        (
            "ISAX cycles, predicted vs measured ("
            + doc.get("isax_cycles_note", "predicted: the memory-interface model")
            + ")",
            [
                "ISAX",
                "plan",
                "predicted",
                "measured (mean)",
                "measured range",
                "calls",
                "error",
                "repeated call: predicted",
                "measured",
            ],
            [
                [
                    r["isax"],
                    r["plan"] or "-",
                    _fmt(r["predicted"], 1),
                    _fmt(r["measured_mean"], 1),
                    f"{r['measured_min']}..{r['measured_max']}" if r["calls"] else "n/a",
                    str(r["calls"]),
                    _fmt(None if r["error"] is None else 100 * r["error"], 1) + " %",
                    _fmt(r.get("predicted_kept"), 1),
                    _fmt(r.get("measured_kept"), 1),
                ]
                for r in doc.get("isax_cycles", [])
            ],
        ),
        area_timing_section(doc)
        if area.get("unit_um2")
        else (
            "Area and logic depth ("
            + area.get(
                "method",
                "Yosys generic gates, the same script for both; memories such as caches and "
                "scratchpads count as flip-flops",
            )
            + ")",
            ["", "cells", "flip-flops", "gates", "logic depth"],
            [
                [
                    "ISAX unit",
                    str(unit["cells"]),
                    str(unit["flops"]),
                    str(unit["gates"]),
                    str(unit["depth"]),
                ],
                [
                    f"core ({area['core_module']})",
                    str(core["cells"]),
                    str(core["flops"]),
                    str(core["gates"]),
                    str(core["depth"]),
                ],
                [
                    "unit / core",
                    _fmt(area["overhead_percent"], 1) + " %",
                    "",
                    "",
                    _fmt(timing["frequency_factor"]) + " (fmax factor)"
                    if timing["frequency_factor"] is not None
                    else area.get("core_unmeasured", ""),
                ],
            ],
        ),
        (
            "Matches",
            ["file", "function", "line", "ISAX", "status", "reason", "HW cycles", "SW cycles"],
            [
                [
                    m["file"],
                    m["function"],
                    str(m["line"]),
                    m["isax"],
                    m["status"],
                    m["reason"] or "",
                    str(m["hw_cycles"] or ""),
                    str(m["sw_cycles"] or ""),
                ]
                for m in doc["matches"]
                if m["status"] == "matched" or m["reason"] != "bound mismatch"
            ],
        ),
    ]


def _isaxs_line(doc: dict[str, Any]) -> list[str]:
    """Which ISAXs the unit holds, and those the program never calls (their area is
    spent for nothing: ``extension.isaxs`` leaves them out)."""
    u = doc.get("isaxs")
    if not u:
        return []
    src = "the project's extension.isaxs" if u["from_project"] else "the whole extension"
    line = f"- Unit: {len(u['built'])} ISAX(s), {src}: {', '.join(u['built'])}"
    if u["unused"]:
        line += (
            f"; never called in this program: {', '.join(u['unused'])} "
            "(extension.isaxs builds a unit without them)"
        )
    return [line]


def _headline(doc: dict[str, Any]) -> list[str]:
    e, a, t = doc["end_to_end"], doc["area"], doc["timing"]
    kernel = [r for r in doc["regions"] if r["speedup"] is not None]
    best = max(kernel, key=lambda r: r["speedup"]) if kernel else None
    lines = [
        f"- SoC: {doc['soc']}, clock target {doc['clock_ns']} ns, memory latency "
        f"{doc['memory_latency']} cycles; extension `{doc['extension']}`",
        f"- End to end: {e['baseline_cycles']} -> {e['isax_cycles']} cycles, "
        f"**{_fmt(e['speedup'])}x** (outputs identical)",
    ]
    if best is not None:
        lines.append(f"- Best region: {best['label']}, **{_fmt(best['speedup'])}x**")
    enc = doc.get("encoding")
    if enc and enc["moves"]:
        lines.append(
            f"- Encoding: {len(enc['moves'])} ISAX(s) re-encoded into {', '.join(enc['routed'])} "
            "(see Encoding)"
        )
    elif enc and enc["error"]:
        lines.append(f"- Encoding: not re-encoded for {enc['target']}: {enc['error']}")
    lines += _isaxs_line(doc)
    if a.get("unit_um2"):
        return lines + _headline_sta(doc)
    clock = (
        f"unit clock target {'met' if t['meets_clock'] else 'NOT met'} "
        f"({_fmt(t['unit_depth_ns'])} ns)"
    )
    if a["core"] is None:
        lines += [
            f"- Area: unit {a['unit']['cells']} cells; the core is not measured "
            f"({a.get('core_unmeasured', '')})",
            f"- Logic depth: unit {t['unit_depth']} gate levels; {clock}",
        ]
    else:
        impact = (
            "no frequency impact"
            if t["frequency_factor"] >= 1
            else "fmax x " + _fmt(t["frequency_factor"])
        )
        lines += [
            f"- Area: unit {a['unit']['cells']} cells = **{_fmt(a['overhead_percent'], 1)} %** "
            f"of the core ({a['core']['cells']} cells)",
            f"- Logic depth: unit {t['unit_depth']} vs core {t['core_depth']} gate levels "
            f"({impact}); {clock}",
        ]
    lines += [
        f"- Co-simulation against the golden interpreter: {doc['cosim']['cases']} random "
        "cases in all, no mismatch"
        if not doc["cosim"].get("skipped")
        else "- Co-simulation: skipped (cosim_cases = 0)",
    ]
    return lines


def _headline_sta(doc: dict[str, Any]) -> list[str]:
    """Area, timing and co-simulation lines of a report with cell-library figures."""
    a, t = doc["area"], doc["timing"]
    u, c = a["unit_um2"], a["core_um2"]
    unit = f"unit {_um2(u['total'])} um^2 (logic {_um2(u['logic'])} + memory {_um2(u['memory'])})"
    verdict = "met" if t["meets_clock"] else "NOT met"
    clock = f"clock target {_fmt(t['clock_ns'])} ns ({t['clock_note']}) {verdict}"
    if c is None:
        lines = [
            f"- Area on {a['library']}: {unit}; the core is not measured "
            f"({a.get('core_unmeasured', '')})",
            f"- Critical path (OpenSTA): unit {_fmt(t['unit_critical_path_ns'])} ns; {clock}",
        ]
    else:
        ff = t["frequency_factor"]
        impact = "no frequency loss" if ff >= 1 else "fmax x " + _fmt(ff)
        lines = [
            f"- Area on {a['library']}: {unit} = **{_fmt(a['overhead_percent'], 1)} %** of the "
            f"core ({_um2(c['total'])} um^2: logic {_um2(c['logic'])} + memory "
            f"{_um2(c['memory'])})",
            f"- Critical path (OpenSTA): unit {_fmt(t['unit_critical_path_ns'])} ns vs core "
            f"{_fmt(t['core_critical_path_ns'])} ns ({impact}); {clock}",
        ]
    if t.get("unit_map_ns") is not None:
        lines.append(
            f"- The unit is mapped by ABC for {_fmt(t['unit_map_ns'])} ns (timing closure: a "
            "narrow miss at the clock target, mapped again for delay; docs/synthesis.md)"
        )
    lines.append(
        f"- Co-simulation against the golden interpreter: {doc['cosim']['cases']} random "
        "cases in all, no mismatch"
        if not doc["cosim"].get("skipped")
        else "- Co-simulation: skipped (cosim_cases = 0)"
    )
    return lines


def markdown(doc: dict[str, Any]) -> str:
    lines = [f"# aquas run: {doc['project']}", "", *_headline(doc), ""]
    for title, head, rows in _sections(doc):
        lines += [f"## {title}", "", *_md_table(head, rows), ""]
    if doc["match_notes"]:
        lines += [
            "## Matcher notes",
            "",
            *[f"- `{n.splitlines()[0]}`" for n in doc["match_notes"]],
            "",
        ]
    lines += ["## Program output", "", "```", doc["end_to_end"]["output"].rstrip(), "```", ""]
    return "\n".join(lines)


def plots(doc: dict[str, Any]) -> dict[str, bytes]:
    """PNG images by name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: dict[str, bytes] = {}

    def save(name: str, fig: Any) -> None:
        buf = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        out[name] = buf.getvalue()

    rows = summary_rows(doc)
    labels = [r[0] for r in rows]
    base = [int(r[1]) for r in rows]
    isax = [int(r[2]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.5))
    y = range(len(rows))
    ax.barh([i + 0.2 for i in y], base, height=0.4, label="baseline", color="#999999")
    ax.barh([i - 0.2 for i in y], isax, height=0.4, label="ISAX", color="#1f77b4")
    for i, r in enumerate(rows):
        ax.text(max(base[i], isax[i]), i, f"  {r[3]}", va="center")
    ax.set_yticks(list(y), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.18 * max(base + isax + [1]))
    ax.set_xlabel("cycles")
    ax.set_title("Cycles: baseline vs ISAX build (label: speedup)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, frameon=False)
    save("cycles", fig)

    lat = doc["latency"]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(lat) + 1.5))
    names = [x["isax"] for x in lat]
    comp = [x["compute_cycles"] for x in lat]
    mem = [x["memory_cycles"] for x in lat]
    ax.barh(names, comp, label="fixed: compute, control, bus beats", color="#2ca02c")
    ax.barh(names, mem, left=comp, label="waiting on memory latency", color="#ff7f0e")
    ax.invert_yaxis()
    ax.set_xlabel("cycles per call")
    ax.set_title(f"ISAX latency (memory latency {doc['memory_latency']} cycles)")
    ax.legend(loc="lower right")
    save("latency", fig)

    a, t = doc["area"], doc["timing"]
    if a.get("unit_um2") and a.get("core_um2"):
        u, c = a["unit_um2"], a["core_um2"]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3))
        names = ["core", "ISAX unit"]
        logic, mem = [c["logic"], u["logic"]], [c["memory"], u["memory"]]
        ax1.bar(names, logic, color="#1f77b4", label="logic")
        ax1.bar(names, mem, bottom=logic, color="#ff7f0e", label="memory (SRAM)")
        ax1.set_ylabel(f"um^2 ({a['library']})")
        ax1.set_title(f"Area: unit = {_fmt(a['overhead_percent'], 1)} % of core")
        ax1.legend(loc="upper right")
        ax2.bar(
            names,
            [t["core_critical_path_ns"], t["unit_critical_path_ns"]],
            color=["#999999", "#1f77b4"],
        )
        ax2.axhline(t["clock_ns"], color="#d62728", linestyle="--", label="clock target")
        ax2.set_ylabel("ns")
        ax2.set_title("Critical path (OpenSTA)")
        ax2.legend(loc="lower right")
        save("area", fig)
        return out
    if a["core"] is None:  # nothing to compare the unit with
        return out
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3))
    ax1.bar(
        ["core", "ISAX unit"],
        [a["core"]["cells"], a["unit"]["cells"]],
        color=["#999999", "#1f77b4"],
    )
    ax1.set_ylabel("Yosys cells")
    ax1.set_title(f"Area: unit = {_fmt(a['overhead_percent'], 1)} % of core")
    ax2.bar(["core", "ISAX unit"], [t["core_depth"], t["unit_depth"]], color=["#999999", "#1f77b4"])
    ax2.set_ylabel("gate levels")
    ax2.set_title("Logic depth")
    save("area", fig)
    return out


def html_page(doc: dict[str, Any], images: dict[str, bytes]) -> str:
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>aquas run: {esc(doc['project'])}</title>",
        "<style>body{font-family:sans-serif;max-width:980px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
        "text-align:left}th{background:#f3f3f3}pre{background:#f7f7f7;padding:1em;overflow:auto}"
        "</style></head><body>",
        f"<h1>aquas run: {esc(doc['project'])}</h1><ul>",
    ]
    for line in _headline(doc):
        text = esc(line[2:]).replace("**", "")
        parts.append(f"<li>{text}</li>")
    parts.append("</ul>")
    for name in ("cycles", "latency", "area"):
        if name in images:
            data = base64.b64encode(images[name]).decode()
            parts.append(f"<img alt='{name}' src='data:image/png;base64,{data}'>")
    for title, head, rows in _sections(doc):
        parts.append(f"<h2>{esc(title)}</h2><table><tr>")
        parts += [f"<th>{esc(h)}</th>" for h in head]
        parts.append("</tr>")
        for r in rows:
            parts.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>")
        parts.append("</table>")
    parts.append(f"<h2>Program output</h2><pre>{esc(doc['end_to_end']['output'])}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_reports(doc: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    """Write report.json, report.md and report.html into ``out_dir``."""
    paths = {k: out_dir / f"report.{k}" for k in ("json", "md", "html")}
    write_atomic(paths["json"], json.dumps(doc, indent=2) + "\n")
    write_atomic(paths["md"], markdown(doc))
    write_atomic(paths["html"], html_page(doc, plots(doc)))
    return paths
