"""Regression tests of the reliability defects (issue "Reliability"): the CLI error
boundary, the output-directory guard, cache keys from the compiler's dependency set, the
link map of a platform file, the co-simulation budget, the e-graph thread defect and the
layering of the CLI.  Each test fails on the code before its fix."""

from __future__ import annotations

import gc
import os
import re
import shutil
import stat
import struct
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.outdir import MANIFEST, OutputDir, write_atomic

from helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
KYBER_SPEC = ROOT / "examples" / "crypto" / "kyber.isax"
KYBER_PROJECT = ROOT / "tests" / "projects" / "kyber"

SPEC = """
extension demo;
state acc: i8 = 5;

#[opcode(custom1), funct7(10)]
isax bump(rs1) -> rd { acc = acc + trunc<i8>(rs1); return zext<u32>(acc as u8); }
"""

LONG_SPEC = """
extension longrun;

#[opcode(custom1), funct7(1)]
isax spin(rs1) -> rd {
    var s: u32 = 0;
    for i in 0..1000000 { s += rs1; }
    return s;
}
"""


def invoke(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "demo.isax"
    p.write_text(SPEC)
    return p


@pytest.fixture
def kyber(tmp_path: Path) -> Path:
    """A copy of the small Kyber project whose spec path is absolute."""
    d = tmp_path / "kyber"
    shutil.copytree(KYBER_PROJECT, d)
    toml = d / "project.toml"
    toml.write_text(
        toml.read_text().replace('"../../../examples/crypto/kyber.isax"', f'"{KYBER_SPEC}"')
    )
    return toml


# ---------------------------------------------------------------------------------------
# The error boundary (D8, D10, Ctrl-C, internal errors)
# ---------------------------------------------------------------------------------------


def test_d8_malformed_pass_options_are_a_diagnostic(spec: Path) -> None:
    code, out = invoke("lower", str(spec), "-p", "cse{")
    assert code == 2
    assert "bad pass pipeline 'cse{'" in out
    assert "Traceback" not in out


def test_internal_errors_exit_1_with_bug_hint_and_no_traceback(
    spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aquas.cli.basic as basic

    def broken(path: Path) -> Any:
        raise ValueError("boom")

    monkeypatch.setattr(basic, "load_module", broken)
    code, out = invoke("lower", str(spec))
    assert code == 1
    assert "internal error: ValueError: boom" in out
    assert "please report it" in out
    assert "Traceback" not in out
    code, out = invoke("--debug", "lower", str(spec))
    assert code == 1 and "Traceback" in out


def test_base_exception_subclasses_do_not_escape(
    spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aquas.cli.basic as basic

    class Odd(BaseException):  # like xDSL's ArgSpecParseError
        pass

    def broken(path: Path) -> Any:
        raise Odd("odd")

    monkeypatch.setattr(basic, "load_module", broken)
    code, out = invoke("lower", str(spec))
    assert code == 1 and "internal error: Odd: odd" in out


def test_ctrl_c_is_reported_as_an_interrupt(spec: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aquas.cli.basic as basic

    def interrupted(path: Path) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(basic, "load_module", interrupted)
    code, out = invoke("lower", str(spec))
    assert code == 130 and out.strip() == "interrupted"


def test_a_failing_circt_import_is_not_called_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while CIRCT loads surfaced as an ImportError, reported as a missing package."""
    import builtins

    from aquas.synth.flow import export_verilog

    real_import = builtins.__import__

    def failing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "circt" or name.startswith("circt."):
            raise ImportError("interrupted while loading the CIRCT libraries")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing)
    with pytest.raises(ImportError, match="interrupted while loading"):
        export_verilog("hw.module @m() {}")


def test_memory_and_recursion_exhaustion_are_diagnostics(
    spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aquas.cli.basic as basic

    for exc, text in ((MemoryError, "out of memory"), (RecursionError, "nested too deeply")):

        def broken(path: Path, exc: type[BaseException] = exc) -> Any:
            raise exc()

        monkeypatch.setattr(basic, "load_module", broken)
        code, out = invoke("lower", str(spec))
        assert code == 2 and text in out and "internal error" not in out


def test_d10_bad_project_files_are_diagnostics(kyber: Path, tmp_path: Path) -> None:
    # not UTF-8
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[project]\nname = "caf\xe9"\n')
    code, out = invoke("run", str(bad))
    assert code == 2 and "latin1.toml:2:12" in out and "not valid UTF-8" in out
    # nested 20,000 levels deep
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 20000 + "]" * 20000 + "\n")
    code, out = invoke("run", str(deep))
    assert code == 2 and "nested too deeply" in out and "deep.toml" in out
    # a symlink loop as the project file, and as the spec
    loop = tmp_path / "loop.toml"
    loop.symlink_to(loop)
    code, out = invoke("run", str(loop))
    assert code == 2 and "symlink loop" in out
    (kyber.parent / "s.isax").symlink_to(kyber.parent / "s.isax")
    text = kyber.read_text()
    kyber.write_text(re.sub(r'spec = "[^"]*"', 'spec = "s.isax"', text))
    code, out = invoke("run", str(kyber))
    assert code == 2 and "'extension.spec'" in out and "symlink loop" in out


def test_d10_non_utf8_sources_are_located_diagnostics(kyber: Path) -> None:
    src = kyber.parent / "kernels.c"
    src.write_bytes(src.read_bytes() + b"/* \xff */\n")
    code, out = invoke("run", str(kyber))
    assert code == 2 and "kernels.c:" in out and "not valid UTF-8" in out
    code, out = invoke("match", str(src), "--ext", str(KYBER_SPEC))
    assert code == 2 and "not valid UTF-8" in out
    assert re.search(r"kernels\.c:\d+:4: error", out), out


def test_d10_output_directory_that_is_a_file_or_unwritable(kyber: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "taken"
    a_file.write_text("mine\n")
    code, out = invoke("run", str(kyber), "-o", str(a_file))
    assert code == 2 and "exists and is not a directory" in out
    assert a_file.read_text() == "mine\n"
    code, out = invoke("run", str(kyber), "-o", "/proc/aquas-cannot-be-here")
    assert code == 2 and "cannot create output directory" in out


def test_negative_and_out_of_range_options(spec: Path, tmp_path: Path) -> None:
    code, out = invoke("exec", str(spec), "--isax", "bump", "--repeat", "-1")
    assert code == 2 and "--repeat must be at least 1" in out
    code, out = invoke("exec", str(spec), "--isax", "bump", "--repeat", "0")
    assert code == 2
    code, out = invoke("exec", str(spec), "--isax", "bump", "--state", "acc=300")
    assert code == 2 and "does not fit the 8-bit state acc" in out
    code, out = invoke("exec", str(spec), "--isax", "bump", "--state", "acc=-128", "--json")
    assert code == 0
    code, out = invoke("sim", str(tmp_path / "x.elf"), "--max-cycles", "-5")
    assert code == 2 and "--max-cycles must be at least 1" in out


def test_d13_clock_and_latency_must_be_finite_and_non_negative(
    spec: Path, kyber: Path, tmp_path: Path
) -> None:
    for clock in ("nan", "inf", "-inf"):
        code, out = invoke("synth", str(spec), "--clock-ns", clock, "-o", str(tmp_path / "o"))
        assert code == 2 and "--clock-ns must be a finite positive number" in out
        code, out = invoke("match", "x.c", "--ext", str(spec), "--clock-ns", clock)
        assert code == 2 and "--clock-ns must be a finite positive number" in out
    code, out = invoke("synth", str(spec), "--mem-latency", "-1", "-o", str(tmp_path / "o"))
    assert code == 2 and "--mem-latency must be >= 0" in out
    assert not (tmp_path / "o").exists()
    for value in ("inf", "nan"):
        kyber.write_text(kyber.read_text().replace("clock_ns = 10.0", f"clock_ns = {value}"))
        code, out = invoke("run", str(kyber))
        assert code == 2 and "'extension.clock_ns' must be a finite number" in out
        kyber.write_text(kyber.read_text().replace(f"clock_ns = {value}", "clock_ns = 10.0"))


# ---------------------------------------------------------------------------------------
# The output-directory guard (D1, D5, D11, modes)
# ---------------------------------------------------------------------------------------


def test_d1_project_names_that_are_paths_are_refused(kyber: Path) -> None:
    for name in ("..", ".", ".hidden", "a/b", "x" * 101):
        kyber.write_text(re.sub(r'name = "[^"]*"', f'name = "{name}"', kyber.read_text()))
        code, out = invoke("run", str(kyber))
        assert code == 2 and "'project.name'" in out, (name, out)


def test_d1_only_what_aquas_created_is_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "synth"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work\n")
    with OutputDir(tmp_path) as g:
        tmp = g.temporary("synth")
        (tmp / "unit.sv").write_text("module m; endmodule\n")
        with pytest.raises(AquasError, match="was not created by aquas"):
            g.replace("synth", tmp)
    assert (mine / "thesis.tex").read_text() == "years of work\n"
    # what aquas created is replaced
    out = tmp_path / "out"
    with OutputDir(out) as g:
        for text in ("one", "two"):
            tmp = g.temporary("stage")
            (tmp / "f").write_text(text)
            g.replace("stage", tmp)
    assert (out / "stage" / "f").read_text() == "two"
    assert sorted(p.name for p in out.iterdir()) == [".aquas-manifest.json", ".aquas.lock", "stage"]


def test_d5_one_writer_per_output_directory(tmp_path: Path) -> None:
    with OutputDir(tmp_path / "o") as first:
        busy = r"in use by another aquas command \(pid \d+\)"
        with pytest.raises(AquasError, match=busy), OutputDir(tmp_path / "o"):
            pass
        assert first.path.is_dir()
    with OutputDir(tmp_path / "o"):  # released
        pass


def test_d5_a_concurrent_process_fails_cleanly(tmp_path: Path) -> None:
    import subprocess

    out = tmp_path / "o"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\nfrom aquas.outdir import OutputDir\n"
            f"with OutputDir(Path({str(out)!r})):\n"
            "    print('locked', flush=True)\n    time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(AquasError, match=f"pid {holder.pid}"), OutputDir(out):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_d11_a_failed_command_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "new"
    with pytest.raises(AquasError), OutputDir(out, transactional=True) as g:
        write_atomic(g.entry("a.sv"), "x")
        raise AquasError("co-simulation mismatch")
    assert not out.exists()
    # in an existing directory: the old outputs stay, the new ones go
    out.mkdir()
    (out / "keep.txt").write_text("k")
    with pytest.raises(AquasError), OutputDir(out, transactional=True) as g:
        write_atomic(g.entry("b.sv"), "x")
        raise AquasError("failed")
    assert sorted(p.name for p in out.iterdir() if p.name != ".aquas.lock") == [
        MANIFEST,
        "keep.txt",
    ]


def test_d11_synth_with_a_cosim_mismatch_writes_nothing(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aquas.synth.cosim as cosim

    def mismatching(*args: Any, **kwargs: Any) -> cosim.CosimResult:
        return cosim.CosimResult(1, ["bump: rd 0x1 != 0x2"], {})

    monkeypatch.setattr(cosim, "run_cosim", mismatching)
    out = tmp_path / "unit"
    code, text = invoke(
        "synth", str(spec), "--no-yosys", "--no-lint", "--cosim", "1", "-o", str(out)
    )
    assert code == 2 and "co-simulation mismatches" in text
    assert not out.exists()
    code, text = invoke("synth", str(spec), "--no-yosys", "--no-lint", "-o", str(out))
    assert code == 0
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "bump.json",
        "demo_isax_unit.mlir",
        "demo_isax_unit.sv",
        "unit.json",
    ]


def test_d11_match_output_naming_a_directory_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "dir"
    target.mkdir()
    src = KYBER_PROJECT / "kernels.c"
    code, out = invoke("match", str(src), "--ext", str(KYBER_SPEC), "-o", str(target))
    assert code == 2 and "is a directory" in out
    assert list(tmp_path.iterdir()) == [target] and not list(target.iterdir())


def test_outputs_respect_the_umask(spec: Path, tmp_path: Path) -> None:
    old = os.umask(0o022)
    os.umask(old)
    f = tmp_path / "ir.mlir"
    code, _ = invoke("lower", str(spec), "-o", str(f))
    assert code == 0
    assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~old


def test_overlong_isax_names_are_refused_before_writing(tmp_path: Path) -> None:
    name = "x" * 260
    p = tmp_path / "long.isax"
    p.write_text(SPEC.replace("bump", name))
    code, out = invoke("synth", str(p), "--no-yosys", "--no-lint", "-o", str(tmp_path / "o"))
    # refused by the spec frontend, at the name's location, before anything is written
    assert code == 2 and "long.isax:6:6: error: ISAX name of 260 characters is longer" in out
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------------------
# Cache keys (D2) and the link map (D12)
# ---------------------------------------------------------------------------------------


@pytest.fixture
def needs_riscv() -> None:
    require_tool("riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf")


@pytest.mark.usefixtures("needs_riscv")
def test_d2_dependency_set_has_headers_outside_the_project_dir(tmp_path: Path) -> None:
    from aquas.runtime.build import dependency_files

    proj = tmp_path / "proj"
    (proj / "inc").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "defs.h").write_text("#define A 1\n")
    (proj / "inc" / "defs.h").write_text("#define B 2\n")
    (proj / "main.c").write_text(
        '#include "../shared/defs.h"\n#include "inc/defs.h"\n#include "aquas_isax.h"\n'
        "int main(void) { return A + B; }\n"
    )
    deps = dependency_files([proj / "main.c"], [proj])
    assert (tmp_path / "shared" / "defs.h").resolve() in deps
    assert (proj / "inc" / "defs.h").resolve() in deps
    assert all(d.name != "aquas_isax.h" for d in deps)  # generated later: not a key input


@pytest.mark.usefixtures("needs_riscv")
def test_d2_editing_an_included_header_rebuilds(tmp_path: Path) -> None:
    from aquas.runtime.build import build_program

    (tmp_path / "shared").mkdir()
    header = tmp_path / "shared" / "defs.h"
    header.write_text("#define RESULT 1\n")
    src = tmp_path / "app" / "main.c"
    src.parent.mkdir()
    src.write_text('#include "../shared/defs.h"\nint main(void) { return RESULT; }\n')
    first = build_program([src], tmp_path / "out")
    header.write_text("#define RESULT 2\n")
    second = build_program([src], tmp_path / "out")
    assert first != second  # a new key: the stale ELF is not reused


@pytest.mark.usefixtures("needs_riscv")
def test_d2_run_stage_keys_follow_included_headers(kyber: Path) -> None:
    from aquas.flow import Flow
    from aquas.project import load_project

    shared = kyber.parent.parent / "shared"
    shared.mkdir()
    (shared / "defs.h").write_text("#define SCALE 1\n")
    main_c = kyber.parent / "main.c"
    main_c.write_text('#include "../shared/defs.h"\n' + main_c.read_text())
    flow = Flow(load_project(kyber), kyber.parent / "out")
    before = flow.dependencies(flow.p.sources)
    assert str((shared / "defs.h").resolve()) in before
    (shared / "defs.h").write_text("#define SCALE 2\n")
    assert flow.dependencies(flow.p.sources) != before


def _elf_entry(elf: Path) -> int:
    data = elf.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 1  # ELF32
    return int(struct.unpack_from("<I", data, 24)[0])


@pytest.mark.usefixtures("needs_riscv")
def test_d12_the_link_uses_the_platform_memory_map(kyber: Path) -> None:
    from aquas.flow import Flow
    from aquas.project import load_project
    from aquas.runtime.build import build_program

    plat = kyber.parent / "moved.toml"
    plat.write_text('base = "picorv32"\n[memory]\nram_base = 0x00100000\n')
    kyber.write_text(kyber.read_text().replace("[target]", '[target]\nplatform = "moved.toml"'))
    flow = Flow(load_project(kyber), kyber.parent / "out")
    assert flow.platform.memory.ram_base == 0x00100000
    elf = build_program(
        [kyber.parent / "main.c", kyber.parent / "kernels.c"],
        kyber.parent / "b",
        platform=flow.platform,
    )
    assert _elf_entry(elf) == 0x00100000


# ---------------------------------------------------------------------------------------
# D17: the co-simulation budget; D9: e-graphs and threads; the layering
# ---------------------------------------------------------------------------------------


def test_d17_cosim_budget_covers_a_long_isax(tmp_path: Path) -> None:
    from aquas.spec.frontend import lower_spec_file
    from aquas.synth.cosim import DEFAULT_BUDGET, cycle_budget
    from aquas.synth.flow import synthesize

    p = tmp_path / "long.isax"
    p.write_text(LONG_SPEC)
    res = synthesize(lower_spec_file(p), tmp_path / "o", 10.0, 4)
    rep = res.reports["spin"]
    assert rep["latency"]["cycles_max"] > 1_000_000 > DEFAULT_BUDGET
    assert cycle_budget(rep) > rep["latency"]["cycles_max"]


def test_d9_matcher_egraphs_are_freed_on_their_thread(
    kyber: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aquas.flow import Flow
    from aquas.project import load_project

    problems: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: problems.append(str(u.exc_value)))
    monkeypatch.setattr(threading, "excepthook", lambda a: problems.append(str(a.exc_value)))
    flow = Flow(load_project(kyber), tmp_path / "out")
    with OutputDir(flow.out) as guard:
        flow.guard = guard
        stage = guard.temporary("match")
        result = flow._match(stage)
    assert any(r["status"] == "matched" for r in result["rows"])
    # what a simulation thread of the next stage does: allocate, and so collect garbage
    t = threading.Thread(target=gc.collect)
    t.start()
    t.join()
    assert not [p for p in problems if "unsendable" in p], problems


def test_library_rooms_do_not_import_the_cli() -> None:
    offenders = []
    for room in ("synth", "egraph", "dialects"):
        for f in (ROOT / room).rglob("*.py"):
            if re.search(r"^\s*(from|import)\s+aquas\.cli", f.read_text(), re.M):
                offenders.append(str(f.relative_to(ROOT)))
    assert offenders == []
    assert not (ROOT / "synth" / "cli.py").exists() and not (ROOT / "egraph" / "cli.py").exists()


def test_stage_directories_of_an_older_aquas_are_adopted(tmp_path: Path) -> None:
    """Outputs written before the manifest existed are recognised by their stage.json."""
    from aquas.flow import _stage_record

    old = tmp_path / "synth"
    old.mkdir()
    (old / "stage.json").write_text('{"key": "k", "files": [], "result": {}}\n')
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "stage.json").write_text('{"notes": 1}\n')
    assert _stage_record(old / "stage.json") is not None
    assert _stage_record(tmp_path / "mine" / "stage.json") is None


def test_d10_output_file_in_an_unwritable_place(spec: Path) -> None:
    code, out = invoke("lower", str(spec), "-o", "/proc/aquas-cannot-be-here/ir.mlir")
    assert code == 2 and "cannot write /proc/aquas-cannot-be-here/ir.mlir" in out
    assert "Traceback" not in out and "internal error" not in out


def test_d12_build_and_sim_keys_follow_the_platform_file(kyber: Path) -> None:
    from aquas.flow import Flow
    from aquas.project import load_project

    plat = kyber.parent / "plat.toml"
    plat.write_text('base = "picorv32"\n[memory]\nlatency = 10\n')
    kyber.write_text(kyber.read_text().replace("[target]", '[target]\nplatform = "plat.toml"'))

    def key() -> str:
        return Flow(load_project(kyber), kyber.parent / "out").platform.fingerprint()

    before = key()
    plat.write_text(plat.read_text() + "# a comment changes no value: same builds\n")
    assert key() == before
    plat.write_text('base = "picorv32"\n[memory]\nlatency = 11\n')
    assert key() != before
