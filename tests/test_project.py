"""Project files of `aquas run`: validation (missing files, unknown keys, bad values) and the
CLI's error reporting. No simulator needed; the end-to-end run is tests/sim/test_run.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from aquas.cli import main
from aquas.diagnostics import AquasError
from aquas.project import load_project

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "crypto" / "kyber.isax"

GOOD = f"""
[project]
name = "demo"

[extension]
spec = "{SPEC}"
clock_ns = 8.0
cosim_cases = 10

[application]
sources = ["main.c", "k.c"]
match = ["k.c"]
functions = ["kern"]
opt = "-O3"
defines = {{ N = 4, FAST = true, NAME = "x" }}

[target]
soc = "picorv32"
max_cycles = 1000

[regions]
1 = "kernel"
0x10 = "other"
"""


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "k.c").write_text("int kern(int a) { return a; }\n")
    (tmp_path / "p.toml").write_text(GOOD)
    return tmp_path / "p.toml"


def edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))
    return path


def error_of(path: Path) -> str:
    with pytest.raises(AquasError) as e:
        load_project(path)
    return e.value.render()


def test_a_valid_project_is_read_with_every_value(proj: Path) -> None:
    p = load_project(proj)
    assert p.name == "demo"
    assert p.spec == SPEC.resolve()
    assert (p.clock_ns, p.cosim_cases) == (8.0, 10)
    assert [s.name for s in p.sources] == ["main.c", "k.c"]
    assert [s.name for s in p.match] == ["k.c"]
    assert p.functions == ("kern",)
    assert (p.entry, p.opt, p.soc, p.max_cycles) == ("main", "-O3", "picorv32", 1000)
    assert p.defines == {"N": 4, "FAST": True, "NAME": "x"}
    assert p.regions == {1: "kernel", 16: "other"}
    assert p.platform is None


def test_defaults(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "b.S").write_text("\n")
    (tmp_path / "p.toml").write_text(
        f'[project]\nname = "d"\n[extension]\nspec = "{SPEC}"\n'
        '[application]\nsources = ["a.c", "b.S"]\n'
    )
    p = load_project(tmp_path / "p.toml")
    # no clock_ns: None, the flow takes the core's critical path (aquas.area.default_clock)
    assert (p.clock_ns, p.cosim_cases, p.soc, p.opt, p.entry) == (
        None,
        100,
        "vexriscv",
        "-O2",
        "main",
    )
    assert [s.name for s in p.match] == ["a.c"]  # every C source, not assembly
    assert p.functions is None and p.regions == {} and p.max_cycles == 50_000_000
    assert p.area_budget is None


def test_area_budget_is_read(proj: Path) -> None:
    p = load_project(edit(proj, "cosim_cases = 10", "cosim_cases = 10\narea_budget = 0.25"))
    assert p.area_budget == 0.25


def test_isaxs_are_read(proj: Path) -> None:
    p = load_project(edit(proj, "cosim_cases = 10", 'cosim_cases = 10\nisaxs = ["ntt_bfly"]'))
    assert p.isaxs == ("ntt_bfly",)
    assert load_project(edit(proj, 'isaxs = ["ntt_bfly"]', "")).isaxs is None


def test_unknown_isax_is_refused_before_any_stage(proj: Path, tmp_path: Path) -> None:
    """The names are checked against the spec when the flow lowers it, before the first
    stage: the diagnostic names the project file, the key and the extension's ISAXs."""
    from aquas.flow import Flow

    p = load_project(edit(proj, "cosim_cases = 10", 'cosim_cases = 10\nisaxs = ["ntt_bfy"]'))
    with pytest.raises(AquasError) as e:
        Flow(p, tmp_path / "out").run()
    text = e.value.render()
    assert "'extension.isaxs': extension kyber has no ISAX ntt_bfy" in text
    assert str(proj) in text and "ntt_bfly" in text  # the hint lists the ISAXs
    assert not (tmp_path / "out" / "synth").exists()


def test_the_flow_sees_only_the_projects_isaxs(proj: Path, tmp_path: Path) -> None:
    """extension.isaxs: the module every stage sees holds those ISAXs and the scratchpads
    they use; without it, the whole extension."""
    from aquas.flow import Flow
    from aquas.interpreter import find_extension

    whole = Flow(load_project(proj), tmp_path / "a").spec_module()[0]
    assert {i.sym_name.data for i in find_extension(whole).isaxs()} == {
        "modmul_q",
        "ntt_bfly",
        "ntt_fwd",
        "ntt_inv",
    }
    p = load_project(edit(proj, "cosim_cases = 10", 'cosim_cases = 10\nisaxs = ["ntt_fwd"]'))
    flow = Flow(p, tmp_path / "b")
    ext = find_extension(flow.spec_module()[0])
    assert [i.sym_name.data for i in ext.isaxs()] == ["ntt_fwd"]
    assert flow.subset == ("ntt_fwd",)
    assert {s.sym_name.data for s in ext.scratchpads()} < {
        s.sym_name.data for s in find_extension(whole).scratchpads()
    }


def test_unit_isaxs_names_the_unused_ones() -> None:
    """Called: by the rewritten sources, through aquas_isax.h (a stateful rewrite calls
    its helper ISAXs beside the offloaded one)."""
    from aquas.flow import _calls_isax, unit_isaxs

    text = "x = aquas_a(p, q);\n(void)aquas_b_noflush(acc);\n/* aquas_c */ aquas_cc(1);"
    called = [n for n in ("a", "b", "c", "d") if _calls_isax(text, n)]
    assert called == ["a", "b"]
    assert unit_isaxs(["a", "b", "c", "d"], False, called) == {
        "built": ["a", "b", "c", "d"],
        "from_project": False,
        "called": ["a", "b"],
        "unused": ["c", "d"],
    }


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("[target]", "[targets]", "unknown table [targets]"),
        ('soc = "picorv32"', 'soc = "picorv32"\ncore = "x"', "unknown key 'target.core'"),
        ('name = "demo"', "", "missing required key 'project.name'"),
        ('name = "demo"', 'name = "a b"', "'project.name' must be a name"),
        ('sources = ["main.c", "k.c"]', "sources = []", "at least one source"),
        (
            'sources = ["main.c", "k.c"]',
            'sources = ["main.c", "nope.c"]',
            "file nope.c does not exist",
        ),
        ('sources = ["main.c", "k.c"]', 'sources = "main.c"', "must be a list of strings"),
        (
            'sources = ["main.c", "k.c"]',
            'sources = ["main.c", "main.c", "k.c"]',
            "lists a file twice",
        ),
        ('match = ["k.c"]', 'match = ["other.c"]', "file other.c does not exist"),
        ("clock_ns = 8.0", "clock_ns = 0", "'extension.clock_ns' must be > 0"),
        ("clock_ns = 8.0", 'clock_ns = "fast"', "'extension.clock_ns' must be a number"),
        ("cosim_cases = 10", "cosim_cases = -1", "'extension.cosim_cases' must be >= 0"),
        ("cosim_cases = 10", "cosim_cases = 1.5", "must be an integer"),
        ("cosim_cases = 10", "cosim_cases = true", "must be an integer"),
        ("cosim_cases = 10", "area_budget = 0", "'extension.area_budget' must be > 0"),
        ("cosim_cases = 10", 'area_budget = "small"', "'extension.area_budget' must be a number"),
        ("cosim_cases = 10", "isaxs = []", "'extension.isaxs' must name at least one ISAX"),
        ("cosim_cases = 10", 'isaxs = "ntt_bfly"', "'extension.isaxs' must be a list of strings"),
        ("cosim_cases = 10", 'isaxs = ["a", "a"]', "'extension.isaxs' lists an ISAX twice"),
        ("cosim_cases = 10", 'isaxs = ["a-b"]', "'extension.isaxs': 'a-b' is not an ISAX name"),
        (
            'soc = "picorv32"',
            'soc = "rocket"',
            "'target.soc' must be one of vexriscv, cv32e40x, picorv32",
        ),
        ("max_cycles = 1000", "max_cycles = 0", "'target.max_cycles' must be >= 1"),
        ('opt = "-O3"', 'opt = "-Ofast"', "'application.opt' must be one of"),
        ('functions = ["kern"]', 'functions = ["1x"]', "is not a C identifier"),
        ("N = 4,", '"bad name" = 4,', "is not a C identifier"),
        ('1 = "kernel"', 'one = "kernel"', "key 'one' is not a region id"),
        ('1 = "kernel"', '1 = ""', "'regions.1' must be a non-empty label"),
        ("[application]", '[application]\nentry = "start"', "no source defines a function 'start'"),
        ("[target]", '[target]\nplatform = "missing.toml"', "file missing.toml does not exist"),
    ],
)
def test_bad_projects_name_the_key(proj: Path, old: str, new: str, message: str) -> None:
    text = error_of(edit(proj, old, new))
    assert message in text
    assert str(proj) in text  # the diagnostic names the project file


def test_spec_and_match_checks(proj: Path, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("")
    assert "is not a .isax file" in error_of(edit(proj, f'spec = "{SPEC}"', 'spec = "x.txt"'))
    edit(proj, 'spec = "x.txt"', f'spec = "{SPEC}"')
    (tmp_path / "extra.c").write_text("int f(void) { return 1; }\n")
    assert "extra.c is not one of the sources" in error_of(
        edit(proj, 'match = ["k.c"]', 'match = ["extra.c"]')
    )


def test_not_toml_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text("[project\nname=")
    # located at the syntax error (line 1, column 9: the missing `]`)
    assert error_of(tmp_path / "p.toml").startswith(
        f"{tmp_path / 'p.toml'}:1:9: error: invalid TOML"
    )
    assert "does not exist" in error_of(tmp_path / "nope.toml")


def test_cli_reports_project_errors_without_traceback(proj: Path) -> None:
    edit(proj, 'soc = "picorv32"', 'soc = "rocket"')
    res = CliRunner().invoke(main, ["run", str(proj)])
    assert res.exit_code == 2
    assert "error: 'target.soc' must be one of" in res.output
    assert "Traceback" not in res.output
    res = CliRunner().invoke(main, ["run", str(proj), "--jobs", "0"])
    assert res.exit_code == 2 and "--jobs must be at least 1" in res.output
    edit(proj, 'soc = "rocket"', 'soc = "picorv32"')
    for bad in ("0", "nan", "-1"):
        res = CliRunner().invoke(main, ["run", str(proj), "--clock-ns", bad])
        assert res.exit_code == 2 and "--clock-ns must be a finite positive number" in res.output
        assert "Traceback" not in res.output


def test_a_packaged_platform_variant_by_name(proj: Path) -> None:
    from aquas.target import load_target

    edit(proj, 'soc = "picorv32"', 'soc = "vexriscv"\nplatform = "vexriscv-wide"')
    p = load_project(proj)
    assert p.platform is not None and str(p.platform) == "vexriscv-wide"
    assert load_target(p.platform, soc=p.soc).isax_master.bus_width == 128
    # a file of that name in the project wins, and must be a .toml file
    (proj.parent / "vexriscv-wide").write_text("")
    assert "is not a .toml file" in error_of(proj)


def test_a_stateful_isax_without_its_helper_is_not_offloaded(tmp_path: Path) -> None:
    """extension.isaxs keeping dot4_i8 but not dot4_clr, which presets its accumulator:
    the matcher sees only the kept ISAXs, so the dot products stay in software (nothing
    calls an ISAX the unit lacks) and sparse_decomp_i8 is still offloaded."""
    import dataclasses
    import re

    from aquas.egraph.driver import load_patterns, match_file
    from aquas.egraph.emit import rewrite_c
    from aquas.flow import Flow
    from aquas.runtime.build import runtime_include_dirs

    p = load_project(ROOT / "examples" / "llm" / "project.toml")
    assert p.isaxs is not None and "dot4_clr" in p.isaxs  # the example keeps the helper
    p = dataclasses.replace(p, isaxs=("dot4_i8", "sparse_decomp_i8"))
    flow = Flow(p, tmp_path / "out")
    ext, pats = load_patterns(p.spec, 5.67, flow.platform, None, prepared=flow.spec_module())
    (src,) = p.match
    res = match_file(
        src,
        p.spec,
        clock_ns=5.67,
        soc=flow.platform,
        patterns=(ext, pats),
        include_dirs=[p.root, *runtime_include_dirs(flow.platform)],
    )
    text = rewrite_c(res)
    assert {d.isax for d in res.matched} == {"sparse_decomp_i8"}
    assert set(re.findall(r"\baquas_(\w+)\s*\(", text)) == {"sparse_decomp_i8"}
