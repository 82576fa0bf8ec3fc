"""Small helpers shared by the tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from aquas.interpreter import ExecResult, IsaxState, Memory, execute, find_extension, find_isax
from aquas.spec.frontend import lower_spec, lower_spec_file


def run(
    src: str,
    isax: str | None = None,
    rs1: int = 0,
    rs2: int = 0,
    mem: Memory | None = None,
    state: IsaxState | None = None,
) -> ExecResult:
    """Lower ``src`` and execute one ISAX (the first one when ``isax`` is None)."""
    module = lower_spec(src, "test.isax")
    ext = find_extension(module)
    op = find_isax(ext, isax) if isax else next(ext.isaxs())
    return execute(op, rs1, rs2, mem, state)


def wrap_isax(body: str, params: str = "rs1, rs2", decls: str = "") -> str:
    """A one-ISAX spec whose body is ``body`` and which returns a value in rd."""
    return f"{decls}\n#[opcode(custom0), funct7(1)]\nisax t({params}) -> rd {{\n{body}\n}}\n"


def s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def require_tool(tool: str, package: str) -> str:
    """The path of an external tool a test needs. A missing tool fails the test loudly
    (scripts/setup.sh installs every tool, in CI too) instead of skipping it."""
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed (Debian package {package}; run scripts/setup.sh)")
    return path


def check_fixed_cycles(reports: dict[str, Any], stats: dict[str, Any], latency: int) -> None:
    """Each case's measured cycles against the schedule (no back-pressure, fixed L)."""
    for name, st in stats.items():
        lat = reports[name]["latency"]
        assert st["cases"] > 0, name
        for cycles, beats in zip(st["cycles"], st["beats"], strict=True):
            assert lat["cycles_min"] <= cycles <= lat["cycles_max"], name
            fixed_control = lat["control_min"] == lat["control_max"]
            fixed_mem = lat["per_mem_latency_min"] == lat["per_mem_latency_max"]
            if fixed_control and fixed_mem:
                want = lat["control_min"] + lat["per_mem_latency_min"] * latency + beats
                assert cycles == want, (name, cycles, beats)


def cosim_random(
    spec: Path,
    out_dir: Path,
    cases: int,
    seed: int,
    clock_ns: float = 10.0,
    lib: Any = None,
) -> Any:
    """Synthesizes ``spec`` at ``clock_ns`` (L = 4; ``lib``: an operator library, e.g. a
    derated one) into ``out_dir`` and co-simulates ``cases`` random cases per ISAX against
    the golden interpreter; asserts no mismatch and returns the synthesis result."""
    from aquas.synth.cosim import run_cosim
    from aquas.synth.flow import synthesize

    res = synthesize(lower_spec_file(spec), out_dir, clock_ns, mem_latency=4, lib=lib)
    cs = run_cosim(
        spec,
        res.verilog_path,
        res.unit.name,
        cases=cases,
        seed=seed,
        mode="random",
        cache_dir=Path(__file__).resolve().parents[1] / "build" / "cosim",
    )
    assert cs.mismatches == []
    isaxs = [i.sym_name.data for i in find_extension(lower_spec_file(spec)).isaxs()]
    assert {k: v["cases"] for k, v in cs.stats.items()} == dict.fromkeys(isaxs, cases)
    return res


def run_program_both_ways(
    spec: Path, program: Path, soc: str, unit: Path, tmp: Path, max_cycles: int
) -> tuple[Any, Any]:
    """Builds ``program`` for ``soc`` as plain C and with ``-DUSE_ISAX`` through the header
    generated from ``spec``; runs the first on the bare SoC and the second with the unit
    Verilog ``unit`` attached. Both must exit with 0. Returns (software run, ISAX run)."""
    import aquas.sim
    from aquas.runtime.build import build_program
    from aquas.runtime.header import write_header

    ext = find_extension(lower_spec_file(spec))
    write_header(ext, soc, tmp / "inc" / "aquas_isax.h", allow_unrouted=False)
    sw_elf = build_program([program], tmp / "sw", platform=soc)
    hw_elf = build_program(
        [program], tmp / "hw", platform=soc, header_dirs=[tmp / "inc"], defines={"USE_ISAX": "1"}
    )
    base = aquas.sim.run(aquas.sim.build(soc, quiet=True), sw_elf, max_cycles=max_cycles)
    fast = aquas.sim.run(
        aquas.sim.build(soc, None, [unit], quiet=True), hw_elf, max_cycles=max_cycles
    )
    for res in (base, fast):
        assert res.reason == "exit" and res.exit_code == 0, res.report
    return base, fast


def iss_outputs(
    res: Any,
    orig: str,
    new: str,
    main_c: str,
    tmp: Path,
    extra: str = "",
    calls: list[int] | None = None,
) -> list[str]:
    """A matched C file before (``orig``) and after (``new``) its rewrite, each linked with
    the driver ``main_c`` (and ``extra``, a third translation unit, e.g. definitions of
    extern arrays), built for PicoRV32 (RV32IM) and run on the ISS with the ISAXs of
    ``res`` (a MatchResult) by the golden model: the two console outputs. ``calls``, if
    given, receives the rs1 operand of every ISAX instruction the programs execute."""
    from aquas.egraph.emit import HEADER
    from aquas.runtime.build import build_program
    from aquas.runtime.header import write_header
    from aquas.runtime.iss import golden_isax_handler, run_elf

    outputs = []
    for which, text in (("orig", orig), ("new", new)):
        d = tmp / which
        d.mkdir()
        (d / "kernel.c").write_text(text)
        (d / "main.c").write_text(main_c)
        sources = [d / "main.c", d / "kernel.c"]
        if extra:
            (d / "extra.c").write_text(extra)
            sources.append(d / "extra.c")
        if which == "new":
            write_header(res.extension, "picorv32", d / HEADER)
        elf = build_program(
            sources, tmp / f"build-{which}", platform="picorv32", header_dirs=[d],
            cflags=["-fwrapv"],
        )  # fmt: skip
        golden = golden_isax_handler(res.extension)

        def handler(insn: int, rs1: int, rs2: int, iss: Any, golden: Any = golden) -> Any:
            if calls is not None:
                calls.append(rs1)
            return golden(insn, rs1, rs2, iss)

        run = run_elf(elf, "picorv32", custom=handler)
        assert run.exit_code == 0, run.output
        outputs.append(run.output)
    return outputs


def without(ext_pats: Any, *names: str) -> Any:
    """``(extension, patterns)`` without the ISAXs ``names``."""
    ext, pats = ext_pats
    return ext, [p for p in pats if p.name not in names]


def without_vdot32(ext_pats: Any) -> Any:
    """``(extension, patterns)`` of examples/dsp/dsp.isax without ``vdot32``. The matcher
    takes a dot product of 32 or more i16 elements in vdot32's chunks of 32; the tests that
    exercise strip-mining into vdot16's chunks of 16 match without it."""
    return without(ext_pats, "vdot32")


def kyber_scalar(directory: Path) -> Path:
    """examples/crypto/kyber.isax with its register ISAXs only (modmul_q, ntt_bfly): no
    whole-NTT ISAX and no scratchpad, written to ``directory``. The small unit the tests of
    sharing, area budgets and `%` against Barrett are about."""
    text = (Path(__file__).resolve().parents[1] / "examples/crypto/kyber.isax").read_text()
    text = text[: text.index("#[opcode(custom2), funct7(2)]")]
    text = "\n".join(x for x in text.splitlines() if not x.startswith("scratchpad ")) + "\n"
    out = directory / "kyber.isax"
    tmp = out.with_suffix(f".{os.getpid()}.tmp")  # several test processes may write it
    tmp.write_text(text)
    tmp.replace(out)
    return out
