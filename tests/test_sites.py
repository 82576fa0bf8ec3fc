"""Site markers (egraph/emit.instrumented): each rewritten region of an application file
between region markers of its own, as written and as rewritten, for `aquas run` to measure
both (docs/memory-model.md, "Sites and regions")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aquas.egraph.driver import match_file
from aquas.egraph.emit import _between_markers, _Unmarked, instrumented, rewrite_c
from aquas.model.sites import SITE_BASE
from aquas.runtime.build import runtime_include_dirs

ROOT = Path(__file__).resolve().parents[1]
PC = ROOT / "examples" / "pointcloud"

MARKER_LINE = re.compile(r"AQUAS_(REGION_(BEGIN|END)\(0x[0-9a-f]+\)|PIN\(\w+\));")


@pytest.fixture(scope="module")
def point_cloud():  # type: ignore[no-untyped-def]
    res = match_file(
        PC / "icp_kernels.c",
        PC / "pointcloud.isax",
        clock_ns=5.67,
        soc="vexriscv",
        include_dirs=[PC, *runtime_include_dirs("vexriscv")],
    )
    rewritten = rewrite_c(res)
    return res, rewritten, *instrumented(res, 4)


def _unmarked(text: str) -> str:
    """``text`` without the site markers, their pins, braces and the runtime include."""
    text = text.replace('#include "aquas_rt.h"\n', "")
    text = MARKER_LINE.sub("", text)
    text = re.sub(
        r"\{ \w+ aquas_site_value = \((.*?)\);\s*\s*return aquas_site_value; \}",
        r"return \1;",
        text,
    )
    return re.sub(r"\s+", "", text.replace("{", "").replace("}", ""))


def test_every_rewritten_region_of_the_point_cloud_is_a_site(point_cloud) -> None:  # type: ignore[no-untyped-def]
    _, rewritten, base, isax, sites = point_cloud
    assert [(s.function, s.isax, s.instrumented) for s in sites] == [
        ("icp_nearest", "vnearest", True),
        ("icp_block_dist", "v3ddist", True),
        ("icp_block_scatter", "vcovmat3d", True),
    ]
    # numbered from the index given, one region id each, far above the program's own
    assert [s.region for s in sites] == [SITE_BASE + 4, SITE_BASE + 5, SITE_BASE + 6]
    for s in sites:
        for text in (base, isax):
            assert text.count(f"AQUAS_REGION_BEGIN({s.region:#x});") == 1
            assert text.count(f"AQUAS_REGION_END({s.region:#x});") == 1
    # without the markers: the file as written, and as rewrite_c rewrote it
    source = (PC / "icp_kernels.c").read_text()
    assert _unmarked(base) == re.sub(r"\s+", "", source.replace("{", "").replace("}", ""))
    assert _unmarked(isax) == _unmarked(rewritten)
    assert '#include "aquas_rt.h"' in base and '#include "aquas_isax.h"' in isax


def test_markers_pin_the_live_scalars(point_cloud) -> None:  # type: ignore[no-untyped-def]
    _, _, base, isax, _ = point_cloud
    # icp_block_dist: reads a, b and total (declared before the loop); total is read
    # after it (the return): pinned before the end marker in both builds
    assert "AQUAS_REGION_BEGIN(0x51730005); AQUAS_PIN(a); AQUAS_PIN(b); AQUAS_PIN(total);" in base
    assert "AQUAS_PIN(total); AQUAS_REGION_END(0x51730005);" in base
    assert "AQUAS_PIN(total); AQUAS_REGION_END(0x51730005);" in isax
    # the loop counter i is declared inside the site: not pinned before it exists
    assert "AQUAS_PIN(i)" not in base and "AQUAS_PIN(i)" not in isax
    # icp_block_scatter's region ends in its return: the value is kept, the site ends,
    # then the function returns it
    assert (
        "{ uint32_t aquas_site_value = ((uint32_t)(sxx + syy + szz)); "
        "AQUAS_PIN(aquas_site_value); AQUAS_REGION_END(0x51730006); return aquas_site_value; }"
    ) in base


def test_a_region_that_may_leave_early_is_not_measured() -> None:
    body = "for (i = 0; i < n; i++) { if (a[i]) goto out; s += a[i]; }"
    got = _between_markers(body, SITE_BASE, "    ", True, "uint32_t", ["n"], ["s"])
    assert isinstance(got, _Unmarked) and got.why == "the region may leave by goto"
    # a return before the last statement would skip the end marker too
    body = "if (n == 0) return 0; s = n * 3; return s;"
    got = _between_markers(body, SITE_BASE, "", False, "uint32_t", ["n"], [])
    assert isinstance(got, _Unmarked) and got.why == "the region may leave by return"


def test_a_void_return_ends_the_site_first() -> None:
    got = _between_markers("x[0] = n; return;", SITE_BASE + 1, "", True, None, ["n"], [])
    assert got == (
        "{ AQUAS_REGION_BEGIN(0x51730001); AQUAS_PIN(n);\n"
        "x[0] = n; { AQUAS_REGION_END(0x51730001); return; } }"
    )


def test_region_predictions_count_only_outermost_sites() -> None:
    """``predict_regions`` on replays written by hand: site 0 (a ``fqmul``) runs 100 times
    in the baseline, 90 of them inside site 1 (a ``poly_ntt`` that calls it), 10 on its
    own in region 2; site 1 runs twice in region 1. Only site 0's 10 outer entries count
    for region 2 (a tenth of its 5,000 cycles); site 1's 200,000 cycles hold the rest,
    and the markers of the 90 entries inside it, which are given back."""
    from aquas.interpreter import find_extension
    from aquas.model.sites import Call, Replay, predict_regions
    from aquas.reencode import spec_for_target
    from aquas.target import load_target

    target = load_target(soc="vexriscv")
    module, _ = spec_for_target(ROOT / "examples" / "crypto" / "kyber.isax", target, strict=False)
    ext = find_extension(module)
    reports = {
        "ntt_bfly": {"interface": {"predicted_cycles": 6}},
        "modmul_q": {"interface": {"predicted_cycles": 5}},
    }
    soft = Replay()
    isax_entries = {1: 2, 0: 5}  # site 0 makes two ISAX calls per entry in the ISAX build
    soft.site_entries.update({0: 100, 1: 2})
    soft.site_regions.update({(0, 2): 10, (1, 1): 2})
    # region 1: site 1 twice, site 0 90 times inside it; region 2: site 0 10 times
    soft.region_entries.update({1: 92, 2: 10})
    soft.region_nested.update({1: 90})
    isax = Replay(
        calls=[Call("ntt_bfly", 1, (1,), (), 0)] * 2 + [Call("modmul_q", 0, (2,), (), 0)] * 10
    )
    isax.site_entries.update(isax_entries)
    got = predict_regions(
        isax,
        soft,
        ext,
        reports,
        target,
        {"1": {"cycles": 200_000, "count": 1}, "2": {"cycles": 3_000, "count": 1}},
        {
            # the markers add 920 cycles to region 1 (92 entries, 10 a pair) and 100 to
            # region 2
            "1": {"cycles": 200_920, "count": 1},
            "2": {"cycles": 3_100, "count": 1},
            str(SITE_BASE): {"cycles": 5_000, "count": 100},
            str(SITE_BASE + 1): {"cycles": 200_000, "count": 2},
        },
    )
    overhead = target.cost.call_overhead  # neither ISAX writes memory: no maintenance
    # region 1: site 1's 200,000 cycles hold the 90 pairs of markers inside it (900)
    assert got["regions"]["1"]["predicted"] == 200_000 - 200_000 + 900 + 2 * (6 + overhead)
    assert got["regions"]["2"]["predicted"] == 3_000 - 5_000 * 10 / 100 + 10 * (5 + overhead)
    assert got["sites"] == {
        # the hand-written calls counted no glue: each pays cost.call_overhead
        "1": {"isax_calls": 2, "entries": 2, "glue": 0.0, "predicted_per_call": 6 + overhead},
        "0": {
            "isax_calls": 10,
            "entries": 5,
            "glue": 0.0,
            "predicted_per_call": 2 * (5 + overhead),
        },
    }


# A few RV32 encodings (the RISC-V unprivileged spec, chapter 2 and the M extension), to
# hand-assemble the glue test's program.
def _r(f7: int, rs2: int, rs1: int, f3: int, rd: int, opc: int) -> int:
    return (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc


def _lui(rd: int, value: int) -> int:
    return (value & 0xFFFFF000) | (rd << 7) | 0x37


def _sw(rs2: int, rs1: int) -> int:  # sw rs2, 0(rs1)
    return _r(0, rs2, rs1, 2, 0, 0x23)


def _elf(path: Path, base: int, words: list[int]) -> Path:
    """A minimal ELF32 executable: one PT_LOAD segment of ``words`` at ``base``."""
    import struct

    code = b"".join(struct.pack("<I", w) for w in words)
    ident = b"\x7fELF\x01\x01\x01" + bytes(9)
    header = ident + struct.pack("<HHIIIIIHHHHHH", 2, 0xF3, 1, base, 52, 0, 0, 52, 32, 1, 0, 0, 0)
    ph = struct.pack("<8I", 1, 84, base, base, len(code), len(code), 5, 4)
    path.write_bytes(header + ph + code)
    return path


def test_the_replay_prices_the_glue_of_a_site(tmp_path: Path) -> None:
    """The instructions a site's entry executes in the ISAX build are priced with the
    descriptor's software cost model, the custom instruction's own issue as an ALU
    instruction; a call inside a site then pays no ``cost.call_overhead``, a call outside
    every site does."""
    from aquas.interpreter import find_extension
    from aquas.model.sites import call_cost, replay
    from aquas.reencode import spec_for_target
    from aquas.target import load_target

    target = load_target(soc="vexriscv")
    module, _ = spec_for_target(ROOT / "examples" / "crypto" / "kyber.isax", target, strict=False)
    ext = find_extension(module)
    modmul = next(i for i in ext.isaxs() if i.sym_name.data == "modmul_q")
    custom = _r(modmul.funct7_value, 11, 10, modmul.funct3_value, 10, modmul.opcode_value)
    d = target.devices
    t0, t1, t2, t3, t4, a0, a1, a2 = 5, 6, 7, 28, 29, 10, 11, 12
    program = [
        _lui(t0, d.region_begin),  # the device addresses sit on 4 KiB boundaries + 0x10..
        _r(0, 0, 0, 0, 0, 0x13) | ((d.region_begin & 0xFFF) << 20) | (t0 << 15) | (t0 << 7),
        _lui(t1, d.region_end),
        _r(0, 0, 0, 0, 0, 0x13) | ((d.region_end & 0xFFF) << 20) | (t1 << 15) | (t1 << 7),
        _lui(t2, SITE_BASE + 1),  # site 1 (SITE_BASE is 4 KiB aligned)
        _r(0, 0, 0, 0, 0, 0x13) | (1 << 20) | (t2 << 15) | (t2 << 7),
        _lui(t3, d.exit),
        _r(0, 0, 0, 0, 0, 0x13) | ((d.exit & 0xFFF) << 20) | (t3 << 15) | (t3 << 7),
        _lui(t4, target.memory.ram_base),
        custom,  # outside every site
        _sw(t2, t0),  # site 1 begins
        _r(0, a1, a0, 0, a0, 0x33),  # add a0, a0, a1
        _r(0, 0, t4, 2, a1, 0x03),  # lw a1, 0(t4)
        _r(1, a1, a0, 0, a2, 0x33),  # mul a2, a0, a1
        custom,  # the call inside the site
        _r(0, 0, 0, 1, 0, 0x63),  # bne x0, x0: not taken
        _sw(t2, t1),  # site 1 ends
        _sw(0, t3),  # exit(0)
    ]
    elf = _elf(tmp_path / "glue.elf", target.memory.ram_base, program)
    reports = {"modmul_q": {"interface": {"predicted_cycles": 5}}}
    rep = replay(elf, target, ext, reports)
    c = target.cost
    # add, lw, mul, the custom instruction, bne, and the end marker's store
    glue = c.alu + c.load + c.mul + c.alu + c.branch + c.store
    assert rep.site_glue == {1: glue}
    assert rep.region_glue == {}  # no program region was open
    outside, inside = rep.calls
    assert (outside.site, outside.glued) == (None, False)
    assert (inside.site, inside.glued) == (1, True)
    assert call_cost(outside, reports["modmul_q"], target, modmul) == 5 + c.call_overhead
    assert call_cost(inside, reports["modmul_q"], target, modmul) == 5
