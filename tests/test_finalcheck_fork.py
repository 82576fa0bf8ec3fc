"""The final check's forked trials do not depend on what the process ran before.

A forked child has only the forking thread.  Garbage inherited from the parent can hold an
egglog ``EGraph`` whose destructor waits for the rayon worker threads the fork did not copy;
collecting it in a trial hung the trial, and the final check then refused a correct rewrite
("crashed or hung where the original did not") depending on test order and load.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from egglog import bindings

from aquas.egraph.driver import match_file
from aquas.egraph.finalcheck import TRIALS, check_function
from tests.helpers import require_tool

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
