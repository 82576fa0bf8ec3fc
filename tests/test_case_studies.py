"""The three application case studies beside point cloud (examples/{crypto,llm,dsp}/app):
each is plain C with no intrinsics; here on the host, with the reference each carries
(schoolbook multiplication, a dense evaluation of the sparse layer), and through the
matcher on the project's target, which must find the kernels below and pass the final
check. `aquas run examples/<domain>/project.toml` measures them on the cores."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from aquas.egraph.driver import match_file
from aquas.egraph.emit import rewrite_c
from aquas.project import load_project
from aquas.runtime.build import runtime_include_dirs
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]

# domain -> (the line the host reference prints, the kernels the matcher must offload)
CASES = {
    # fqpow: base = fqmul(base, base) with the static inline helper inlined
    "crypto": (
        "host reference: 0 wrong coefficients",
        {("fqmul", "modmul_q"), ("fqpow", "modmul_q")},
    ),
    "llm": (
        "host reference: 0 mismatches",
        {("dot_i8", "dot4_i8"), ("sparse_expand", "sparse_decomp_i8")},
    ),
    "dsp": (None, set()),
}

HOST_RT = """#include <stdint.h>
#include <stdio.h>
#define AQUAS_REGION_BEGIN(id) ((void)(id))
#define AQUAS_REGION_END(id) ((void)(id))
"""


def _host_run(domain: str, tmp_path: Path, reference: bool) -> str:
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "a host C compiler is needed (gcc)"
    (tmp_path / "aquas_rt.h").write_text(HOST_RT)
    app = ROOT / "examples" / domain / "app"
    exe = tmp_path / f"{domain}-{reference}"
    flags = ["-DHOST_REFERENCE"] if reference else []
    srcs = sorted(str(p) for p in app.glob("*.c"))
    subprocess.run(
        [cc, "-O2", "-Wall", "-Werror", *flags, f"-I{tmp_path}", f"-I{app}", *srcs, "-o", exe],
        check=True,
    )
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("domain", sorted(CASES))
def test_application_agrees_with_its_host_reference(domain: str, tmp_path: Path) -> None:
    line, _ = CASES[domain]
    checked = _host_run(domain, tmp_path, reference=True)
    if line is not None:
        assert line in checked.splitlines()
    # without the reference (the SoC build) the program prints the same results
    plain = _host_run(domain, tmp_path, reference=False)
    assert [ln for ln in checked.splitlines() if not ln.startswith("host reference")] == (
        plain.splitlines()
    )
    assert re.search(r"checksum [0-9a-f]{8}", plain)


@pytest.mark.parametrize("domain", sorted(CASES))
def test_matcher_offloads_the_kernels(domain: str) -> None:
    _, want = CASES[domain]
    proj = load_project(ROOT / "examples" / domain / "project.toml")
    target = load_target(soc=proj.soc)
    (src,) = proj.match
    res = match_file(
        src,
        proj.spec,
        soc=target,
        include_dirs=[proj.root, *runtime_include_dirs(target)],
    )
    rewrite_c(res)  # the final check may refuse a rewrite
    assert {(d.function, d.isax) for d in res.matched} == want
