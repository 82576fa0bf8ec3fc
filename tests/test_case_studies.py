"""The three application case studies beside point cloud (examples/{crypto,llm,dsp}/app):
each is plain C with no intrinsics; here on the host, with the reference each carries
(schoolbook multiplication, a dense evaluation of the sparse layer, the filter chain
written out directly over the whole signal), and through the
matcher on the project's target, which must find the kernels below and pass the final
check. `aquas run examples/<domain>/project.toml` measures them on the cores."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_cfront_structs import vdot_stub
from test_match_stateful import BIQUAD_STUB

from aquas.egraph.driver import match_file
from aquas.egraph.emit import rewrite_c
from aquas.project import load_project
from aquas.runtime.build import runtime_include_dirs
from aquas.target import load_target

ROOT = Path(__file__).resolve().parents[1]

# domain -> (the line the host reference prints, the kernels the matcher must offload)
CASES = {
    # fqpow: r = fqmul(r, base), base = fqmul(base, base) with the static inline helper
    # inlined; poly_ntt: its three loops, the whole forward NTT, as one ntt_fwd; poly_invntt:
    # its layers and the final scaling as one ntt_inv; basemul: r[1] = (fqmul(a0, b1) +
    # fqmul(a1, b0)) % q as ntt_bfly's sum field, one product a modmul_q call as its operand
    "crypto": (
        "host reference: 0 wrong coefficients",
        {
            ("fqmul", "modmul_q"),
            ("fqpow", "modmul_q"),
            ("poly_ntt", "ntt_fwd"),
            ("poly_invntt", "ntt_inv"),
            ("basemul", "ntt_bfly"),
        },
    ),
    "llm": (
        "host reference: 0 mismatches",
        {("dot_i8", "dot4_i8"), ("sparse_expand", "sparse_decomp_i8")},
    ),
    # the 32-tap dot product of the FIR over a fir_state * argument (one vdot32); each
    # biquad section's sample loop, its history in s[sec] (a stateful filter pattern)
    "dsp": (
        "host reference: 0 mismatches",
        {("fir_process", "vdot32"), ("biquad_cascade", "biquad")},
    ),
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


# The ISAXs as examples/{dsp,crypto}/*.isax define them, written independently of the
# matcher: vdot32, the sum of 32 products of i16 elements wrapping in 32 bits (addresses are
# 32-bit: the host program is linked without PIE so that its static buffers lie below
# 4 GiB); modmul_q, the product of the low halves mod 3329; ntt_bfly, the butterfly of
# kyber.isax's comment: a = rs1[15:0] mod q, t = rs1[31:16] * rs2[15:0] mod q, rd =
# {(a - t) mod q : 16, (a + t) mod q : 16}; ntt_fwd and ntt_inv, the transforms of the
# comment (twiddles 1..127 at rs2, block b of a layer uses entry 2^l + b forward,
# (64 >> m) + b inverse; the inverse difference is C's (u16)((a + q - b) % q)).
HOST_ISAX = {
    "dsp": vdot_stub(32) + BIQUAD_STUB,
    "crypto": """#include <stdint.h>
static inline uint32_t aquas_modmul_q(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)(a & 0xffffu) * (b & 0xffffu)) % 3329u);
}
static inline uint32_t aquas_ntt_bfly(uint32_t rs1, uint32_t rs2)
{
    int64_t a = (rs1 & 0xffffu) % 3329, t = ((int64_t)(rs1 >> 16) * (rs2 & 0xffffu)) % 3329;
    int64_t sum = (a + t) % 3329, diff = ((a - t) % 3329 + 3329) % 3329;
    return (uint32_t)diff << 16 | (uint32_t)sum;
}
static inline void aquas_ntt_fwd(uint32_t rs1, uint32_t rs2)
{
    uint16_t *p = (uint16_t *)(uintptr_t)rs1;
    const uint16_t *z = (const uint16_t *)(uintptr_t)rs2;
    for (int l = 0; l < 7; l++) {
        int len = 128 >> l;
        for (int b = 0; b < (1 << l); b++)
            for (int j = 2 * len * b; j < 2 * len * b + len; j++) {
                uint32_t t = (uint32_t)z[(1 << l) + b] * p[j + len] % 3329u;
                uint32_t a = p[j] % 3329u;
                p[j] = (uint16_t)((a + t) % 3329u);
                p[j + len] = (uint16_t)((a + 3329u - t) % 3329u);
            }
    }
}
static inline void aquas_ntt_inv(uint32_t rs1, uint32_t rs2)
{
    uint16_t *p = (uint16_t *)(uintptr_t)rs1;
    const uint16_t *z = (const uint16_t *)(uintptr_t)rs2;
    for (int m = 0; m < 7; m++) {
        int len = 2 << m;
        for (int b = 0; b < (64 >> m); b++)
            for (int j = 2 * len * b; j < 2 * len * b + len; j++) {
                int32_t a = p[j], c = p[j + len];
                uint16_t d = (uint16_t)((a + 3329 - c) % 3329); /* C's remainder */
                p[j] = (uint16_t)((a + c) % 3329);
                p[j + len] = (uint16_t)((uint32_t)z[(64 >> m) + b] * d % 3329u);
            }
    }
    for (int j = 0; j < 256; j++)
        p[j] = (uint16_t)(p[j] * 3303u % 3329u);
}
""",
}


@pytest.mark.parametrize("domain", sorted(HOST_ISAX))
def test_rewritten_application_is_bit_identical_on_the_host(domain: str, tmp_path: Path) -> None:
    """The rewrite `aquas match` writes for the case study (dsp: fir_process through
    vdot32 on a fir_state *, biquad_cascade through biquad with its history loaded,
    restored and saved; crypto: fqmul and fqpow through modmul_q, poly_ntt and
    poly_invntt through ntt_fwd and ntt_inv, basemul's r[1] through ntt_bfly), compiled on the host with the ISAXs written out in C, prints exactly what
    the original program prints."""
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "a host C compiler is needed (gcc)"
    _, want = CASES[domain]
    proj = load_project(ROOT / "examples" / domain / "project.toml")
    target = load_target(soc=proj.soc)
    (src,) = proj.match
    res = match_file(
        src, proj.spec, soc=target, include_dirs=[proj.root, *runtime_include_dirs(target)]
    )
    new = rewrite_c(res)
    assert {(d.function, d.isax) for d in res.matched} == want
    guards = new.count("/* aquas: the ranges do not overlap */")  # alias guards
    assert new.count("/* aquas: ") - guards == len(res.matched)
    app = ROOT / "examples" / domain / "app"
    others = [str(p) for p in sorted(app.glob("*.c")) if p.name != src.name]
    outputs = []
    for which, text in (("orig", src.read_text()), ("new", new)):
        d = tmp_path / which
        d.mkdir()
        (d / "aquas_rt.h").write_text(HOST_RT)
        (d / "aquas_isax.h").write_text(HOST_ISAX[domain])
        (d / src.name).write_text(text)
        exe = d / domain
        subprocess.run(
            [cc, "-O2", "-no-pie", f"-I{d}", f"-I{app}", *others, str(d / src.name),
             "-o", str(exe)],
            check=True,
        )  # fmt: skip
        outputs.append(subprocess.run([str(exe)], capture_output=True, text=True, check=True))
    assert outputs[0].stdout == outputs[1].stdout
    assert re.search(r"checksum [0-9a-f]{8}", outputs[1].stdout)
