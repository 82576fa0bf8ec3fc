"""The package works as installed: build the wheel, install it non-editable into a fresh
virtualenv, and run `aquas sim` and `aquas run` from there, outside the checkout.

Resources (target descriptors, RTL templates, runtime sources, the operator library) must
come from the installed package, and nothing may be written inside the installation."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_run import expected_checksum

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd: list[str | Path], **kw: object) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    assert r.returncode == 0, (
        f"{cmd}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    )
    return r


def _tree(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): p.stat().st_size
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the fresh venv's aquas executable, the installed package folder)."""
    tmp = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "dist", ROOT])
    wheels = list((tmp / "dist").glob("aquas-*.whl"))
    assert len(wheels) == 1, wheels
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", venv])
    _run([venv / "bin" / "python", "-m", "pip", "install", "-q", wheels[0]])
    r = _run(
        [
            venv / "bin" / "python",
            "-c",
            "import aquas, pathlib; print(pathlib.Path(aquas.__file__).parent)",
        ],
        cwd=tmp,
    )
    pkg = Path(r.stdout.strip())
    assert ROOT not in pkg.parents, f"imported from the checkout: {pkg}"
    return venv / "bin" / "aquas", pkg


def test_installed_sim_and_run(installed: tuple[Path, Path], tmp_path: Path) -> None:
    aquas, pkg = installed
    before = _tree(pkg)
    env = {**os.environ, "PATH": f"{aquas.parent}{os.pathsep}{os.environ['PATH']}"}

    # aquas sim: a C program on the primary SoC, built by the installed runtime
    prog = tmp_path / "hello.c"
    prog.write_text(
        '#include "aquas_rt.h"\nint main(void) { printf("sum=%d\\n", 40 + 2); return 7; }\n'
    )
    r = subprocess.run(
        [str(aquas), "sim", str(prog), "--soc", "vexriscv"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert "sum=42" in r.stdout, r.stdout + r.stderr
    assert "exit code: 7" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 4, r.stdout + r.stderr  # the program exited non-zero

    # aquas run: the small Kyber project (spec copied next to it: nothing from the checkout)
    proj = tmp_path / "kyber"
    shutil.copytree(ROOT / "tests" / "projects" / "kyber", proj)
    shutil.copy(ROOT / "examples" / "crypto" / "kyber.isax", proj / "kyber.isax")
    toml = proj / "project.toml"
    toml.write_text(toml.read_text().replace("../../../examples/crypto/kyber.isax", "kyber.isax"))
    _run([aquas, "run", toml, "-o", tmp_path / "out"], cwd=tmp_path, env=env)
    e2e = json.loads((tmp_path / "out" / "report.json").read_text())["end_to_end"]
    assert e2e["output"] == f"checksum {expected_checksum()}\n"
    assert e2e["outputs_identical"] is True
    assert 0 < e2e["isax_cycles"] < e2e["baseline_cycles"]

    after = _tree(pkg)
    assert after == before, f"files written inside the installation: {set(after) - set(before)}"
