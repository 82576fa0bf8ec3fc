"""Offload sites in a program: what the model says each ISAX call costs the core, and per
region the cycles the ISAX build should take.

Data flow (``aquas run``, its sim stage; docs/memory-model.md, "Sites and regions"):

* The ISAX build with site markers (``egraph.emit.instrumented``) runs on the ISS
  (:mod:`aquas.runtime.iss`), the ISAXs on the golden interpreter. For every ISAX call
  :func:`replay` records its ISAX, the site and the program's regions open around it,
  which of its resident bursts keep their claim (the unit's rule, replayed on the ISS's
  stores and the ISAX's own writes), and the D-cache lines its maintenance evicts.
* :func:`call_cost` prices one call from the synthesis report of its ISAX: the model's
  cycles of a call that fills its resident scratchpads, less the saving of each burst that
  keeps its claim, plus the coherence plan's maintenance (one line refill per evicted
  line, or the whole-cache invalidate), plus ``cost.call_overhead`` for a call made
  outside every site.
* The glue: the replay counts every instruction a site's entry executes in the ISAX
  build (operand moves, the loop around a strip-mined or stateful call, the elements
  left to software, the custom instruction's own issue) and prices each with the
  descriptor's software cost model (``cost.alu``, ``mul``, ``div``, ``load``, ``store``,
  ``branch``; :func:`instruction_cycles`).
* :func:`predict_regions`: a region of the ISAX build is the baseline's region with the
  software of its sites (measured in the baseline with site markers) replaced by the
  predicted cost of the calls made in it. The baseline with site markers is replayed
  too, for where its sites run: a site entered inside another one is part of the outer
  one's cycles, and a site whose entries fall in several regions, or inside other sites,
  splits its software cycles evenly over its entries.

The replay is functional: it fixes which calls keep their claims and how many lines each
evicts, which are properties of the program's addresses and stores, not cycles.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aquas.dialects import aquas as aq
from aquas.runtime.coherence import line_fill_cycles, line_refill_cycles
from aquas.runtime.coherence import plan as coherence_plan
from aquas.runtime.iss import Iss, golden_isax_handler
from aquas.target import Target

SITE_BASE = 0x5173_0000
"""Region id of site 0 in the builds with site markers (``egraph.emit.instrumented``): far
above the ids a program gives its own regions."""


@dataclass(frozen=True)
class Call:
    """One ISAX call of the program."""

    isax: str
    site: int | None  # the outermost open site's index, None outside every site
    regions: tuple[int, ...]  # the program's regions open around it
    kept: tuple[bool, ...]  # per resident burst of the ISAX, in report order
    evicted_lines: int
    glued: bool = False  # its site's glue was counted: no ``cost.call_overhead``


@dataclass
class Replay:
    calls: list[Call] = field(default_factory=list)
    site_regions: Counter[tuple[int, int]] = field(default_factory=Counter)
    """(site, region) -> how often the site was entered with the region open and no other
    site (a site inside another is part of the outer one's cycles)."""
    site_entries: Counter[int] = field(default_factory=Counter)
    """site -> how often it was entered, inside other sites or not."""
    region_entries: Counter[int] = field(default_factory=Counter)
    """region -> how often any site was entered with it open."""
    region_nested: Counter[int] = field(default_factory=Counter)
    """region -> how often a site was entered inside another one with it open."""
    site_glue: dict[int, float] = field(default_factory=dict)
    """site -> the priced instructions of its entries outside every other site."""
    region_glue: dict[int, float] = field(default_factory=dict)
    """region -> the priced instructions of the site entries made with it open."""


class _ClaimIss(Iss):
    """The ISS with the unit's resident claims: any store to a claimed bus block drops
    the claim (the snoop port, docs/isax-port.md)."""

    def __init__(self, platform: Target, bus_bytes: int):
        super().__init__(platform)
        self.bus_bytes = bus_bytes
        self.claims: dict[str, tuple[int, int, int]] = {}  # scratchpad -> (addr, lo, hi block)
        self.entries: list[tuple[int, tuple[int, ...], bool]] = []  # site, regions, nested
        self.outer: tuple[int, tuple[int, ...]] | None = None  # open outermost site, regions
        self.glue: list[tuple[int, tuple[int, ...], float]] = []  # per outer entry, priced
        self.prices: dict[int, float] = {}  # pc -> cycles of its instruction

    def write(self, addr: int, size: int, value: int) -> None:
        if self.claims:
            lo, hi = addr // self.bus_bytes, (addr + size - 1) // self.bus_bytes
            for spm, (_, clo, chi) in list(self.claims.items()):
                if lo <= chi and clo <= hi:
                    del self.claims[spm]
        p, v = self.p, value & 0xFFFFFFFF
        if addr == p.devices.region_begin and v >= SITE_BASE:
            nested = any(r >= SITE_BASE for r in self.region_open)
            regions = tuple(self.user_regions())
            self.entries.append((v - SITE_BASE, regions, nested))
            if not nested:  # count the instructions from here to its end marker
                self.outer = (v - SITE_BASE, regions)
                self.profile = Counter()
        elif addr == p.devices.region_end and self.outer and v == SITE_BASE + self.outer[0]:
            assert self.profile is not None
            self.glue.append((*self.outer, self.priced(self.profile)))
            self.outer, self.profile = None, None
        super().write(addr, size, value)

    def priced(self, profile: Counter[int]) -> float:
        total = 0.0
        for pc, n in profile.items():
            if pc not in self.prices:
                self.prices[pc] = instruction_cycles(self.read(pc, 4), self.p)
            total += n * self.prices[pc]
        return total

    def user_regions(self) -> list[int]:
        return sorted(r for r in self.region_open if r < SITE_BASE)


def instruction_cycles(insn: int, target: Target) -> float:
    """The descriptor's software cost of one RV32IM instruction (``[cost]``, the matcher's
    model): loads, stores, control transfers, multiplies and divides by their class,
    everything else (ALU, ``lui``/``auipc``, a custom instruction's own issue) as ALU."""
    c, opc = target.cost, insn & 0x7F
    if opc == 0x03:
        return c.load
    if opc == 0x23:
        return c.store
    if opc in (0x63, 0x67, 0x6F):
        return c.branch
    if opc == 0x33 and insn >> 25 == 1:
        return c.div if (insn >> 12) & 7 >= 4 else c.mul
    return c.alu


def replay(
    elf: Path,
    target: Target,
    ext: aq.ExtensionOp,
    reports: dict[str, dict[str, Any]],
    max_instructions: int = 50_000_000,
) -> Replay:
    """Runs ``elf`` (a build with site markers) on the ISS with the ISAXs of ``ext`` on the
    golden interpreter, and records every ISAX call and every entry into a site (module
    docstring). ``reports``: the synthesis report per ISAX (its
    ``interface.resident_bursts``)."""
    bus_bytes = target.isax_master.bus_width // 8
    iss = _ClaimIss(target, bus_bytes)
    golden = golden_isax_handler(ext)
    table = {(i.opcode_value, i.funct3_value, i.funct7_value): i for i in ext.isaxs()}
    spans = {i.sym_name.data: coherence_plan(i, target, _writes_memory(i)) for i in ext.isaxs()}
    line = target.dcache.line_bytes
    out = Replay()

    def handler(insn: int, rs1: int, rs2: int, _: Iss) -> int | None:
        isax = table.get((insn & 0x7F, (insn >> 12) & 7, insn >> 25))
        if isax is None:
            return golden(insn, rs1, rs2, iss)
        name = isax.sym_name.data
        regs = {"rs1": rs1, "rs2": rs2, "0": 0}
        kept = []
        for rb in reports.get(name, {}).get("interface", {}).get("resident_bursts", []):
            base = regs.get(rb["base"])
            if base is None:  # an address the replay cannot form: taken to refill
                kept.append(False)
                continue
            addr = (base + rb["offset"]) & 0xFFFFFFFF
            claim = iss.claims.get(rb["scratchpad"])
            kept.append(claim is not None and claim[0] == addr)
            if not kept[-1]:
                iss.claims[rb["scratchpad"]] = (
                    addr,
                    addr // bus_bytes,
                    (addr + rb["bytes"] - 1) // bus_bytes,
                )
        plan = spans[name]
        evicted = 0
        if plan.strategy == "evict-lines":
            for sp in plan.spans:
                a = (regs[sp.base or "0"] + sp.lo) & 0xFFFFFFFF
                evicted += (a + sp.size - 1) // line - a // line + 1 if sp.size > 0 else 0
        site = iss.outer[0] if iss.outer else None
        out.calls.append(
            Call(name, site, tuple(iss.user_regions()), tuple(kept), evicted, site is not None)
        )
        return golden(insn, rs1, rs2, iss)

    iss.custom = handler
    iss.load_elf(elf)
    res = iss.run(max_instructions)
    if res.timed_out or res.exit_code is None:
        raise RuntimeError(f"the ISS did not finish {elf.name} in {max_instructions} instructions")
    for site, regions, nested in iss.entries:
        out.site_entries[site] += 1
        for r in regions:
            out.region_entries[r] += 1
            if nested:
                out.region_nested[r] += 1
            else:
                out.site_regions[(site, r)] += 1
    for site, regions, cycles in iss.glue:
        out.site_glue[site] = out.site_glue.get(site, 0.0) + cycles
        for r in regions:
            out.region_glue[r] = out.region_glue.get(r, 0.0) + cycles
    return out


def _writes_memory(isax: aq.IsaxOp) -> bool:
    return any(isinstance(o, aq.StoreOp | aq.BurstWriteOp) for o in isax.walk())


def call_cost(call: Call, report: dict[str, Any], target: Target, isax: aq.IsaxOp) -> float:
    """The model's cycles of ``call`` for the core: the ISAX (resident bursts kept or
    filled) and its cache maintenance, and ``cost.call_overhead`` unless the call's site
    counted its instructions (module docstring)."""
    iface = report.get("interface", {})
    predicted = iface.get("predicted_cycles")
    cycles = float(report["latency"]["cycles_max"] if predicted is None else predicted)
    for rb, kept in zip(iface.get("resident_bursts", []), call.kept, strict=False):
        if kept:
            cycles -= rb["saving"]
    plan = coherence_plan(isax, target, _writes_memory(isax))
    maintenance = 0.0
    if plan.strategy == "evict-lines":
        # a glued call's eviction loop is in its glue: only the line fills are added
        per_line = line_fill_cycles(target) if call.glued else line_refill_cycles(target)
        maintenance = call.evicted_lines * per_line
    elif plan.strategy == "invalidate-all":
        maintenance = target.dcache.invalidate_cycles
    return cycles + maintenance + (0 if call.glued else target.cost.call_overhead)


def predict_regions(
    rep: Replay,
    soft: Replay,
    ext: aq.ExtensionOp,
    reports: dict[str, dict[str, Any]],
    target: Target,
    baseline: dict[str, dict[str, int]],
    baseline_sites: dict[str, dict[str, int]],
) -> dict[str, Any]:
    """Per site the predicted cycles per call, and per region of the program the
    predicted cycles of the ISAX build (module docstring). ``rep``: the replay of the ISAX
    build with site markers, ``soft``: of the baseline with site markers (where a site's
    function may also run inside another site, as the Kyber NTT's ``fqmul`` does inside
    ``poly_ntt``: only a site's entries outside every other site count, each with an even
    share of its cycles); ``baseline`` and ``baseline_sites``: the regions of the
    baseline without and with site markers, measured. A pair of markers costs cycles: the
    pairs inside an outer site (90 % of the Kyber ``fqmul`` entries) are part of its
    measured software, and are given back at the region's mean cost of a pair, what the
    markers add to the region over all its entries."""
    isaxs = {i.sym_name.data: i for i in ext.isaxs()}
    site_calls: Counter[int] = Counter()
    site_cost: dict[int, float] = {}
    region_cost: dict[int, float] = {}
    for c in rep.calls:
        cost = call_cost(c, reports[c.isax], target, isaxs[c.isax])
        if c.site is not None:
            site_calls[c.site] += 1
            site_cost[c.site] = site_cost.get(c.site, 0.0) + cost
        for r in c.regions:
            region_cost[r] = region_cost.get(r, 0.0) + cost
    # per entry into the site, which may make several ISAX calls (a strip-mined loop)
    sites = {
        str(s): {
            "isax_calls": n,
            "entries": rep.site_entries[s],
            "glue": round(rep.site_glue.get(s, 0.0), 1),
            "predicted_per_call": (site_cost[s] + rep.site_glue.get(s, 0.0))
            / max(1, rep.site_entries[s]),
        }
        for s, n in site_calls.items()
    }
    regions = {}
    for rid, b in baseline.items():
        r = int(rid)
        if r >= SITE_BASE:
            continue
        marked = baseline_sites.get(rid, b)["cycles"]
        pair = (marked - b["cycles"]) / soft.region_entries[r] if soft.region_entries[r] else 0.0
        software = 0.0
        for (s, reg), n in soft.site_regions.items():
            measured = baseline_sites.get(str(SITE_BASE + s))
            if reg == r and measured and soft.site_entries[s]:
                software += measured["cycles"] * n / soft.site_entries[s]
        calls, glue = region_cost.get(r, 0.0), rep.region_glue.get(r, 0.0)
        regions[rid] = {
            "software_in_sites": round(software, 1),
            "predicted_calls": round(calls, 1),
            "glue": round(glue, 1),
            "markers_inside_sites": round(soft.region_nested[r] * pair, 1),
            "predicted": round(
                b["cycles"] - software + soft.region_nested[r] * pair + calls + glue, 1
            ),
        }
    return {"sites": sites, "regions": regions}


__all__ = [
    "SITE_BASE",
    "Call",
    "Replay",
    "call_cost",
    "instruction_cycles",
    "predict_regions",
    "replay",
]
