"""The ISS replay of a program's ISAX calls (aquas/model/sites.py) on the point-cloud case
study: which calls keep their resident scratchpads, how many D-cache lines each call's
maintenance evicts, and which region each call falls in. Builds the ISAX program with site
markers for VexRiscv (the RISC-V toolchain) and runs it on the ISS; no HDL simulator."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from aquas.egraph.driver import match_file
from aquas.egraph.emit import instrumented, rewrite_c
from aquas.interpreter import find_extension
from aquas.model.sites import call_cost, replay
from aquas.plans.choose import apply_interface
from aquas.project import load_project
from aquas.reencode import spec_for_target
from aquas.runtime.build import build_program, runtime_include_dirs
from aquas.runtime.header import write_header
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[2]
PC = ROOT / "examples" / "pointcloud"
CLOCK = 5.67


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    d = tmp_path_factory.mktemp("sites")
    p = load_project(PC / "project.toml")
    target = load_target(soc="vexriscv")
    module, _ = spec_for_target(p.spec, target, strict=False)
    ext = find_extension(module)
    header = write_header(ext, target, d / "include" / "aquas_isax.h")
    res = match_file(
        PC / "icp_kernels.c",
        p.spec,
        clock_ns=CLOCK,
        soc=target,
        include_dirs=[PC, header.parent, *runtime_include_dirs(target)],
    )
    rewrite_c(res)
    _, isax_text, sites = instrumented(res, 0)
    kernels = d / "icp_kernels.c"
    kernels.write_text(isax_text)
    elf = build_program(
        [PC / "icp_main.c", kernels],
        d / "build",
        platform=target,
        header_dirs=[header.parent, PC],
        opt=p.opt,
        defines=p.defines,
    )
    # the synthesis report's interface section: the plans and the model's predictions
    planned, _ = spec_for_target(p.spec, target, strict=False)
    choice = apply_interface(planned, "auto", CLOCK, 12, target=target)
    reports = {n: {"interface": choice.report(n)} for n in choice.plans}
    return replay(elf, target, ext, reports), reports, sites, target, ext


def test_calls_fall_in_their_regions_and_sites(calls) -> None:  # type: ignore[no-untyped-def]
    rep, _, sites, _, _ = calls
    site_of = {s.isax: s.index for s in sites}
    # 4 ICP iterations: 64 queries (region 1), 4 blocks scattered (region 2) and 4
    # blocks of residuals (region 4) each (examples/pointcloud/icp_main.c)
    assert Counter(c.isax for c in rep.calls) == {"vnearest": 256, "vcovmat3d": 16, "v3ddist": 16}
    region = {"vnearest": (1,), "vcovmat3d": (2,), "v3ddist": (4,)}
    for c in rep.calls:
        assert c.regions == region[c.isax] and c.site == site_of[c.isax] and c.glued
    # every site entry's instructions are priced; vnearest's entries run the same
    # straight-line code (operand moves, the call, the end marker), the same cycles each
    near = site_of["vnearest"]
    assert set(rep.site_glue) == set(site_of.values())
    assert rep.site_glue[near] % 256 == 0 and rep.site_glue[near] > 0
    assert rep.region_glue[1] == rep.site_glue[near]
    assert rep.region_glue[4] == rep.site_glue[site_of["v3ddist"]]
    assert rep.site_entries == {
        site_of["vnearest"]: 256,
        site_of["vcovmat3d"]: 16,
        site_of["v3ddist"]: 16,
    }


def test_resident_claims_replay_the_units_rule(calls) -> None:  # type: ignore[no-untyped-def]
    rep, reports, _, _, _ = calls
    bursts = [b["scratchpad"] for b in reports["vnearest"]["interface"]["resident_bursts"]]
    # the query point (a register scratchpad) is not resident: every call asks about
    # another source point, so its claim would never hold (aquas.plans.resident)
    assert bursts == ["ncl"]
    near = [dict(zip(bursts, c.kept, strict=True)) for c in rep.calls if c.isax == "vnearest"]
    # the target cloud is never written: only the first call fills it
    assert [k["ncl"] for k in near] == [False] + [True] * 255
    # v3ddist's blocks: each call reads another one, and the core rewrites the matched
    # points between iterations: every call fills
    assert not any(any(c.kept) for c in rep.calls if c.isax == "v3ddist")


def test_maintenance_evicts_the_lines_written(calls) -> None:  # type: ignore[no-untyped-def]
    rep, reports, _, target, ext = calls
    lines = target.dcache.line_bytes
    # v3ddist writes 16 words (64 bytes): 2 lines when they start on a line, else 3;
    # vnearest writes nothing
    assert {c.evicted_lines for c in rep.calls if c.isax == "v3ddist"} <= {
        64 // lines,
        64 // lines + 1,
    }
    assert {c.evicted_lines for c in rep.calls if c.isax == "vnearest"} == {0}
    isaxs = {i.sym_name.data: i for i in ext.isaxs()}
    # a call that keeps the cloud costs its burst's saving less than one that fills it
    kept = next(c for c in rep.calls if c.isax == "vnearest" and any(c.kept))
    filled = rep.calls[[c.isax for c in rep.calls].index("vnearest")]
    saving = next(
        b["saving"]
        for b in reports["vnearest"]["interface"]["resident_bursts"]
        if b["scratchpad"] == "ncl"
    )
    assert call_cost(filled, reports["vnearest"], target, isaxs["vnearest"]) - call_cost(
        kept, reports["vnearest"], target, isaxs["vnearest"]
    ) == pytest.approx(saving)
