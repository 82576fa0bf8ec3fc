"""The final check's forked trials do not depend on what the process ran before.

A forked child has only the forking thread.  Garbage inherited from the parent can hold an
egglog ``EGraph`` whose destructor waits for the rayon worker threads the fork did not copy;
collecting it in a trial hung the trial, and the final check then refused a correct rewrite
("crashed or hung where the original did not") depending on test order and load.
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest
from egglog import bindings

from aquas.egraph.driver import match_file
from aquas.egraph.finalcheck import TRIALS, check_function

from helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]

KERNEL = """#include <stdint.h>
uint32_t mix(const uint32_t *restrict a, int n) {
    uint32_t s = 0;
    for (int i = 0; i < 8; i++) s += a[i] * 3u + (uint32_t)n;
    return s;
}
"""


class _Cycle:
    def __init__(self) -> None:
        self.egraph = bindings.EGraph()
        self.me = self


def test_a_trial_does_not_collect_inherited_garbage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right before every fork, an EGraph becomes cyclic garbage (as the matcher leaves it),
    after another EGraph's drop has started the rayon pool in this process, and the child
    would collect on its first allocation.  A child that collected it would hang, and every
    trial of a correct rewrite would be refused."""
    require_tool("gcc", "gcc")
    first = bindings.EGraph()
    first.run_program(*first.parse_program("(datatype T (A))"))
    del first
    fork = os.fork

    def fork_leaving_garbage() -> int:
        _Cycle()
        threshold = gc.get_threshold()
        gc.set_threshold(1)  # a collecting child collects at once
        pid = fork()
        if pid:
            gc.set_threshold(*threshold)
        return pid

    app = tmp_path / "mix.c"
    app.write_text(KERNEL)
    res = match_file(app, ROOT / "examples" / "crypto" / "kyber.isax", soc="picorv32")
    assert res.program is not None
    cf = next(f for f in res.program.functions if f.name == "mix")
    monkeypatch.setattr(os, "fork", fork_leaving_garbage)
    verdict = check_function(KERNEL, KERNEL, cf, res.extension, [])
    monkeypatch.undo()
    gc.collect()  # here, with the pool's threads, the garbage is dropped normally
    assert verdict.ok and verdict.trials == TRIALS, verdict.reason


SPIN = KERNEL.replace("uint32_t s = 0;", "uint32_t s = 0;\n    for (volatile int k = 0; ; k++) {}")
SLEEP = "#include <unistd.h>\n" + KERNEL.replace(
    "uint32_t s = 0;", "uint32_t s = 0;\n    sleep(60);"
)


@pytest.mark.parametrize(
    ("rewritten", "how"),
    [(SPIN, "spins: its CPU time"), (SLEEP, "sleeps: the wall-clock backstop")],
)
def test_a_rewrite_that_never_returns_is_refused(
    rewritten: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trial limits count the child's own CPU time (a loaded machine slows a trial
    without refusing it); a child that waits without computing is stopped by the
    wall-clock backstop. Either way the rewrite is refused, and quickly with small limits."""
    from aquas.egraph import finalcheck

    require_tool("gcc", "gcc")
    app = tmp_path / "mix.c"
    app.write_text(KERNEL)
    res = match_file(app, ROOT / "examples" / "crypto" / "kyber.isax", soc="picorv32")
    assert res.program is not None
    cf = next(f for f in res.program.functions if f.name == "mix")
    monkeypatch.setattr(finalcheck, "REWRITTEN_SECONDS", 0.5)
    monkeypatch.setattr(finalcheck, "WALL_FACTOR", 4.0)
    t0 = time.monotonic()
    verdict = check_function(KERNEL, rewritten, cf, res.extension, [])
    assert not verdict.ok, how
    assert "crashed or hung where the original did not" in verdict.reason, how
    assert time.monotonic() - t0 < 60, how


def test_cpu_seconds_reads_this_process() -> None:
    from aquas.egraph.finalcheck import _cpu_seconds

    t = _cpu_seconds(os.getpid())
    assert t is not None and t > 0
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    t2 = _cpu_seconds(os.getpid())
    assert t2 is not None and t2 - t >= 0.25
