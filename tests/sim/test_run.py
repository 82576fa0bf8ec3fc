"""`aquas run` end to end on a small project (tests/projects/kyber): synthesis, co-simulation,
matching, both builds on the PicoRV32 SoC in Verilator, output comparison, area, reports;
then the cache (nothing changed: every stage skipped; a changed source: only the stages
that depend on it) and the loud failure when the two builds' outputs differ."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aquas.diagnostics import AquasError
from aquas.flow import STAGES, run_project
from aquas.project import load_project

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "projects" / "kyber"
Q = 3329


def expected_checksum() -> int:
    """main.c's result, computed on the host from the C semantics (independent of aquas)."""
    m = 0xFFFFFFFF
    seed, a, b = 12345, [], []
    for _ in range(64):
        seed = (seed * 1103515245 + 12345) & m
        a.append((seed >> 8) % Q)
        seed = (seed * 1103515245 + 12345) & m
        b.append((seed >> 8) % Q)
    c = [(x & 0xFFFF) * (y & 0xFFFF) % Q for x, y in zip(a, b, strict=True)]
    for i in range(0, 64, 2):
        lo, t = c[i] % Q, (c[i + 1] * (b[i] & 0xFFFF)) % Q
        c[i], c[i + 1] = (lo + t) % Q, (lo + Q - t) % Q
    s = 0
    for x in c:
        s = (s * 31 + x) & m
    return s


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("kyber")
    for f in PROJECT.iterdir():
        shutil.copy(f, d / f.name)
    toml = d / "project.toml"
    toml.write_text(
        toml.read_text().replace(
            'spec = "../../../examples/crypto/kyber.isax"',
            f'spec = "{ROOT / "examples" / "crypto" / "kyber.isax"}"',
        )
    )
    return toml


@pytest.fixture(scope="module")
def first(project: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("out")
    return out, run_project(load_project(project), out, jobs=2)


def test_first_run_measures_both_builds(first) -> None:  # type: ignore[no-untyped-def]
    out, res = first
    doc = res.doc
    assert [s.name for s in res.stages] == list(STAGES)
    assert not any(s.cached for s in res.stages)
    e2e = doc["end_to_end"]
    assert e2e["output"] == f"checksum {expected_checksum()}\n"
    assert e2e["outputs_identical"] is True
    matched = {(m["function"], m["isax"]) for m in doc["matches"] if m["status"] == "matched"}
    assert matched == {("mulmod", "modmul_q"), ("butterfly", "ntt_bfly")}
    regions = {r["label"]: r for r in doc["regions"]}
    assert set(regions) == {"pointwise multiply", "butterflies"}
    for r in regions.values():
        assert r["count"] == 1
        assert 0 < r["isax_cycles"] < r["baseline_cycles"]
        assert r["speedup"] == r["baseline_cycles"] / r["isax_cycles"]
    assert 0 < e2e["isax_cycles"] < e2e["baseline_cycles"]
    area = doc["area"]
    assert area["core_module"] == "picorv32"
    assert area["unit"]["cells"] > 0 and area["core"]["cells"] > area["core"]["flops"] > 0
    assert area["overhead_percent"] == pytest.approx(
        100 * area["unit"]["cells"] / area["core"]["cells"]
    )
    assert doc["cosim"]["cases"] == 2 * 20 and not doc["cosim"]["mismatches"]
    assert {x["isax"] for x in doc["latency"]} == {"modmul_q", "ntt_bfly"}
    assert json.loads((out / "report.json").read_text()) == doc
    md = (out / "report.md").read_text()
    assert "| butterflies |" in md and "checksum" in md
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 3


def test_unchanged_project_skips_every_stage(first, project: Path) -> None:  # type: ignore[no-untyped-def]
    out, res1 = first
    res2 = run_project(load_project(project), out, jobs=2)
    assert all(s.cached for s in res2.stages)
    assert res2.doc["end_to_end"] == res1.doc["end_to_end"]


def test_changed_source_reruns_only_what_depends_on_it(first, project: Path) -> None:  # type: ignore[no-untyped-def]
    out, _ = first
    main_c = project.parent / "main.c"
    main_c.write_text(main_c.read_text() + "/* a comment: the same ELF */\n")
    res = run_project(load_project(project), out, jobs=2)
    assert {s.name for s in res.stages if not s.cached} == {"build"}
    main_c.write_text(main_c.read_text() + "int edited(void) { return 1; }\n")
    res = run_project(load_project(project), out, jobs=2)
    # main.c is not matched: synthesis, co-simulation, matching and area are unchanged
    assert {s.name for s in res.stages if not s.cached} == {"build", "sim"}


def test_differing_outputs_fail_loudly(
    first, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import aquas.sim.runner as runner

    out, _ = first
    real = runner.run

    def wrong_isax(binary, elf, *a, **k):  # type: ignore[no-untyped-def]
        r = real(binary, elf, *a, **k)
        if Path(elf).parent.name == "isax":
            r.output += "extra line\n"
        return r

    monkeypatch.setattr(runner, "run", wrong_isax)
    main_c = project.parent / "main.c"
    main_c.write_text(main_c.read_text() + "int edited_again(void) { return 2; }\n")
    with pytest.raises(AquasError, match="output differs from the baseline"):
        run_project(load_project(project), out, jobs=1)
    assert (out / "mismatch" / "isax.out").read_text().endswith("extra line\n")
    assert not (out / ".sim.tmp").exists()  # nothing half-written
