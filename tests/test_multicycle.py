"""Multi-cycle operators (synth/multicycle.py): the sequential divider against Python
integer division in RTL simulation, the oplib entry, and the schedule of ISAXs with `/`
and `%` (latency and occupancy)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from aquas.synth.flow import export_verilog
from aquas.synth.multicycle import divider_latency, divider_module
from aquas.synth.rtlgen import hw_text

ROOT = Path(__file__).resolve().parents[1]


def py_divrem(a: int, b: int, w: int, signed: bool) -> tuple[int, int]:
    """RISC-V division written out with Python integers (not aquas.intops)."""
    m = (1 << w) - 1
    if b == 0:
        return m, a
    if not signed:
        return a // b, a % b
    sa = a - (1 << w) if a >> (w - 1) else a
    sb = b - (1 << w) if b >> (w - 1) else b
    q = abs(sa) // abs(sb)
    if (sa < 0) != (sb < 0):
        q = -q
    r = sa - q * sb  # truncating division: the remainder has the dividend's sign
    return q & m, r & m


def corner_vectors(w: int) -> list[tuple[int, int, int]]:
    m = (1 << w) - 1
    mn = 1 << (w - 1)
    vals = [0, 1, 2, 3, m, m - 1, mn, mn - 1, mn + 1, 7, 3329]
    out = []
    for s in (0, 1):
        for a in vals:
            for b in (0, 1, m, mn, 2, 3, 3329, mn - 1):
                out.append((s, a & m, b & m))
    return out


def simulate_divider(w: int, vectors: list[tuple[int, int, int, int]], tmp: Path) -> list[str]:
    """Runs the divider under Icarus Verilog: vector i = (sgn, a, b, gap) starts in the
    cycle ``gap`` cycles after the previous start. Returns one line per cycle:
    ``cycle quo rem`` (hex), sampled mid-cycle."""
    name = f"t_div{w}"
    sv = export_verilog(hw_text(ModuleOp([divider_module(name, w)])))
    (tmp / "div.sv").write_text(sv)
    hexw = (w + 3) // 4
    lines = [f"{s:x} {a:0{hexw}x} {b:0{hexw}x} {g:x}" for s, a, b, g in vectors]
    (tmp / "vec.txt").write_text("\n".join(lines) + "\n")
    n = len(vectors)
    total = sum(v[3] for v in vectors) + 2 * w + 8
    tb = f"""
module tb;
  reg clk = 0, rst = 1, start = 0, sgn = 0;
  reg [{w - 1}:0] a = 0, b = 0;
  wire [{w - 1}:0] quo, rem;
  reg [{w - 1}:0] va [0:{n - 1}];
  reg [{w - 1}:0] vb [0:{n - 1}];
  reg vs [0:{n - 1}];
  integer vg [0:{n - 1}];
  integer fd, i, k, cyc, next_start, r;
  {name} dut(.clk(clk), .rst(rst), .start(start), .sgn(sgn), .a(a), .b(b), .quo(quo), .rem(rem));
  always #5 clk = ~clk;
  initial begin
    fd = $fopen("vec.txt", "r");
    for (i = 0; i < {n}; i = i + 1) begin
      r = $fscanf(fd, "%h %h %h %h\\n", vs[i], va[i], vb[i], vg[i]);
    end
    @(negedge clk); @(negedge clk); rst = 0;
    i = 0; next_start = vg[0];
    for (cyc = 0; cyc < {total}; cyc = cyc + 1) begin
      start = 0;
      if (i < {n} && cyc == next_start) begin
        start = 1; sgn = vs[i]; a = va[i]; b = vb[i];
        i = i + 1;
        if (i < {n}) next_start = cyc + vg[i];
      end else begin
        a = $random; b = $random; sgn = $random;  // ignored without start
      end
      #1 $display("%0d %h %h", cyc, quo, rem);
      @(negedge clk);
    end
    $finish;
  end
endmodule
"""
    (tmp / "tb.v").write_text(tb)
    subprocess.run(
        ["iverilog", "-g2012", "-o", "sim", "tb.v", "div.sv"],
        cwd=tmp,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(["vvp", "-n", "sim"], cwd=tmp, check=True, capture_output=True, text=True)
    return [ln for ln in out.stdout.splitlines() if ln and ln[0].isdigit()]


def check_timeline(w: int, vectors: list[tuple[int, int, int, int]], lines: list[str]) -> int:
    """Every cycle's outputs are the result of the latest operation started at least
    ``w + 2`` cycles before (exact latency; held until the next result). Returns the
    number of operations whose result was observed."""
    lat = divider_latency(w)
    starts, t = [], 0
    for _s, _a, _b, g in vectors:
        t += g
        starts.append(t)
    seen = set()
    for ln in lines:
        cyc_s, q_s, r_s = ln.split()
        cyc = int(cyc_s)
        done = [i for i, s in enumerate(starts) if s + lat <= cyc]
        if not done:
            continue
        i = done[-1]
        s, a, b, _ = vectors[i]
        want = py_divrem(a, b, w, bool(s))
        got = (int(q_s, 16), int(r_s, 16))
        assert got == want, (
            f"cycle {cyc}: op {i} ({'signed' if s else 'unsigned'} {a:#x} / {b:#x}, started "
            f"at {starts[i]}): got q={got[0]:#x} r={got[1]:#x}, want q={want[0]:#x} r={want[1]:#x}"
        )
        seen.add(i)
    return len(seen)


@pytest.mark.sim
@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs iverilog (scripts/setup.sh)")
@pytest.mark.parametrize("w", [8, 32, 64])
def test_divider_matches_python_division(w: int, tmp_path: Path) -> None:
    rng = random.Random(w)
    m = (1 << w) - 1
    vecs = corner_vectors(w)
    for _ in range(150):
        a = rng.getrandbits(w)
        b = rng.getrandbits(rng.choice([1, 3, w // 2, w]))  # small divisors too
        vecs.append((rng.getrandbits(1), a, b & m))
    # back to back at the unit's initiation interval (w + 1), or with idle cycles between
    gaps = [w + 1 if i % 3 else w + 1 + rng.randrange(1, 9) for i in range(len(vecs))]
    vectors = [(s, a, b, g) for (s, a, b), g in zip(vecs, gaps, strict=True)]
    lines = simulate_divider(w, vectors, tmp_path)
    assert check_timeline(w, vectors, lines) == len(vectors)


def test_python_reference_agrees_with_intops() -> None:
    from aquas import intops

    rng = random.Random(1)
    for w in (8, 32, 64):
        cases = [(s, a, b) for s, a, b in corner_vectors(w)]
        cases += [(rng.getrandbits(1), rng.getrandbits(w), rng.getrandbits(w)) for _ in range(200)]
        for s, a, b in cases:
            q, r = py_divrem(a, b, w, bool(s))
            ops = ("arith.divsi", "arith.remsi") if s else ("arith.divui", "arith.remui")
            assert intops.BY_ARITH[ops[0]].fn(a, b, w) == q
            assert intops.BY_ARITH[ops[1]].fn(a, b, w) == r
