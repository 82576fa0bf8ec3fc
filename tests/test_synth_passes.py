"""Golden IR tests of the synthesis passes: hand-written input IR → the exact IR expected
after ``aquas-if-convert``, ``aquas-schedule``, ``aquas-forward-state``,
``aquas-fold-unsigned-compare`` and ``aquas-unroll`` (``convert-aquas-to-hw``'s is in
tests/test_hwgen.py). Expected texts are written by hand; the schedule's cycles are derived
in the comments from the operator library's delays."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.passes import PASSES, describe_passes, parse_pipeline
from aquas.spec.frontend import lower_spec_file
from aquas.synth.flow import build_unit
from aquas.synth.oplib import OperatorLibrary
from aquas.synth.prepare import prepare_pipeline
from aquas.synth.timing import CYCLE_ATTR, STATE_ATTR

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.isax"))
LIB = OperatorLibrary.load()


def context() -> Context:
    ctx = Context()
    for d in (builtin.Builtin, arith.Arith, scf.Scf, aq.Aquas):
        ctx.load_dialect(d)
    return ctx


def parse(text: str) -> ModuleOp:
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def show(module: ModuleOp) -> str:
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    return buf.getvalue() + "\n"


def run(text: str, pipeline: str) -> str:
    module = parse(text)
    parse_pipeline(pipeline).apply(context(), module)
    module.verify()
    return show(module)


def test_the_synthesis_passes_are_registered_with_summaries() -> None:
    assert {"aquas-if-convert", "aquas-schedule"} <= set(PASSES)
    summaries = dict(describe_passes())
    assert summaries["aquas-if-convert"].startswith("Turns each ``scf.if``")
    assert summaries["aquas-schedule"].startswith("Schedules every ISAX into FSM states")
    assert summaries["aquas-forward-state"].startswith("Forwards state writes")
    assert summaries["aquas-fold-unsigned-compare"].startswith("Folds compares")


# -- aquas-if-convert ----------------------------------------------------------------------

IF_INPUT = """\
builtin.module {
  aquas.extension @g {
    aquas.state @acc = 0 : i32
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %lt = arith.cmpi ult, %0, %1 : i32
      %d = scf.if %lt -> (i32) {
        %a = arith.subi %1, %0 : i32
        scf.yield %a : i32
      } else {
        %b = arith.subi %0, %1 : i32
        scf.yield %b : i32
      }
      %m = scf.if %lt -> (i32) {
        %z = arith.cmpi eq, %0, %1 : i32
        %n = scf.if %z -> (i32) {
          scf.yield %0 : i32
        } else {
          scf.yield %1 : i32
        }
        scf.yield %n : i32
      } else {
        scf.yield %1 : i32
      }
      scf.if %lt {
        aquas.state_write %d, @acc : i32
      }
      %e = arith.addi %d, %m : i32
      aquas.write_rd %e : i32
    }
  }
}
"""

# Pure branches move in front of their `if` (in program order) and each result becomes a
# select on the condition; the nested if collapses first, then its parent. The if holding
# a state write stays: it needs a branch in the state machine. A select takes over the
# name of the result it replaces (xDSL's replace_all_uses_with passes the name hint on).
IF_EXPECTED = """\
builtin.module {
  aquas.extension @g {
    aquas.state @acc = 0 : i32
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %lt = arith.cmpi ult, %0, %1 : i32
      %a = arith.subi %1, %0 : i32
      %b = arith.subi %0, %1 : i32
      %d = arith.select %lt, %a, %b : i32
      %z = arith.cmpi eq, %0, %1 : i32
      %n = arith.select %z, %0, %1 : i32
      %m = arith.select %lt, %n, %1 : i32
      scf.if %lt {
        aquas.state_write %d, @acc : i32
      }
      %e = arith.addi %d, %m : i32
      aquas.write_rd %e : i32
    }
  }
}
"""


def test_if_convert_golden() -> None:
    assert run(IF_INPUT, "aquas-if-convert") == IF_EXPECTED


def test_if_convert_is_idempotent() -> None:
    assert run(IF_EXPECTED, "aquas-if-convert") == IF_EXPECTED


# -- aquas-schedule ------------------------------------------------------------------------

SCHED_INPUT = """\
builtin.module {
  aquas.extension @g {
    aquas.scratchpad @buf : memref<4xi32> partition "none" 1
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %a = arith.addi %0, %1 : i32
      %b = arith.addi %a, %1 : i32
      %c = arith.addi %b, %1 : i32
      %x = aquas.load %c : i32
      %y = arith.addi %x, %1 : i32
      %2 = arith.constant 0 : i32
      %3 = arith.constant 1 : i32
      %r0 = aquas.spm_read @buf[%2] : i32
      %r1 = aquas.spm_read @buf[%3] : i32
      %s = arith.xori %r0, %r1 : i32
      %t = arith.ori %s, %y : i32
      aquas.write_rd %t : i32
    }
    aquas.isax @u opcode 11 funct3 0 funct7 1 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %p = arith.muli %0, %1 : i32
      aquas.write_rd %p : i32
    }
    aquas.isax @v opcode 11 funct3 0 funct7 2 uses ["rs1", "rd"] {
      %s = aquas.rs1 : i32
      %0 = arith.constant 0 : i32
      %1 = arith.constant 4 : i32
      %2 = arith.constant 1 : i32
      %3 = scf.for %i = %0 to %1 step %2 iter_args(%4 = %s) -> (i32) : i32 {
        %5 = arith.addi %4, %i : i32
        scf.yield %5 : i32
      }
      aquas.write_rd %3 : i32
    }
  }
}
"""

# clock-ns=6: 6 ns minus 1 ns of register/state selection leaves 5 ns per cycle.
# @t (states 2..5 = its segment's cycles 0..3):
#   cycle 0: %a 0-1.8 ns, %b 1.8-3.6 ns (32-bit add: 18 levels x 0.1 ns);
#   cycle 1: %c would end at 5.4 ns in cycle 0, so it starts cycle 1; the load issues
#            after it (its address is %c);
#   cycle 2: %y uses the load's result, registered from the bus; %r0 (no effect may
#            precede-in-time a memory access, so not before the load's cycle + 1);
#   cycle 3: %r1: the scratchpad has one bank with one port, taken by %r0 in cycle 2;
#            %s, %t and write_rd chain behind it (xor/or: 1 level each).
# @u: one 32-bit multiply (3.6 ns) fits one cycle: state 6.
# @v: state 7 initialises the loop registers (no op of the IR runs there), the body's
#     add is state 8, write_rd after the loop state 9. Constants, rs1/rs2 and
#     control-flow ops need no state and carry no annotation.
SCHED_EXPECTED = """\
builtin.module {
  aquas.extension @g {
    aquas.scratchpad @buf : memref<4xi32> partition "none" 1
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %a = arith.addi %0, %1 {aquas.state = 2 : i64, aquas.cycle = 0 : i64} : i32
      %b = arith.addi %a, %1 {aquas.state = 2 : i64, aquas.cycle = 0 : i64} : i32
      %c = arith.addi %b, %1 {aquas.state = 3 : i64, aquas.cycle = 1 : i64} : i32
      %x = aquas.load %c {aquas.state = 3 : i64, aquas.cycle = 1 : i64} : i32
      %y = arith.addi %x, %1 {aquas.state = 4 : i64, aquas.cycle = 2 : i64} : i32
      %2 = arith.constant 0 : i32
      %3 = arith.constant 1 : i32
      %r0 = aquas.spm_read @buf[%2] {aquas.state = 4 : i64, aquas.cycle = 2 : i64} : i32
      %r1 = aquas.spm_read @buf[%3] {aquas.state = 5 : i64, aquas.cycle = 3 : i64} : i32
      %s = arith.xori %r0, %r1 {aquas.state = 5 : i64, aquas.cycle = 3 : i64} : i32
      %t = arith.ori %s, %y {aquas.state = 5 : i64, aquas.cycle = 3 : i64} : i32
      aquas.write_rd %t {aquas.state = 5 : i64, aquas.cycle = 3 : i64} : i32
    }
    aquas.isax @u opcode 11 funct3 0 funct7 1 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %p = arith.muli %0, %1 {aquas.state = 6 : i64, aquas.cycle = 0 : i64} : i32
      aquas.write_rd %p {aquas.state = 6 : i64, aquas.cycle = 0 : i64} : i32
    }
    aquas.isax @v opcode 11 funct3 0 funct7 2 uses ["rs1", "rd"] {
      %s = aquas.rs1 : i32
      %0 = arith.constant 0 : i32
      %1 = arith.constant 4 : i32
      %2 = arith.constant 1 : i32
      %3 = scf.for %i = %0 to %1 step %2 iter_args(%4 = %s) -> (i32) : i32 {
        %5 = arith.addi %4, %i {aquas.state = 8 : i64, aquas.cycle = 0 : i64} : i32
        scf.yield %5 : i32
      }
      aquas.write_rd %3 {aquas.state = 9 : i64, aquas.cycle = 0 : i64} : i32
    }
  }
}
"""


def test_schedule_golden() -> None:
    assert LIB.delay_ns("add", 32) == pytest.approx(1.8)
    assert LIB.delay_ns("mul", 32) == pytest.approx(3.6)
    assert run(SCHED_INPUT, "aquas-schedule{clock-ns=6}") == SCHED_EXPECTED


def test_scheduled_ir_round_trips_and_rescheduling_replaces_the_annotations() -> None:
    annotated = parse(SCHED_EXPECTED)
    assert show(annotated) == SCHED_EXPECTED
    # a comparison carries its annotation through print and parse as well
    cmp = "%q = arith.cmpi ne, %s, %y {aquas.state = 5 : i64, aquas.cycle = 3 : i64} : i32"
    text = SCHED_EXPECTED.replace("      %t = arith.ori", f"      {cmp}\n      %t = arith.ori")
    assert cmp in show(parse(text))
    assert show(parse(text)) == text
    # a slower clock: the same pass on already-annotated IR gives fresh annotations
    at_20 = run(SCHED_EXPECTED, "aquas-schedule{clock-ns=20}")
    assert at_20 == run(SCHED_INPUT, "aquas-schedule{clock-ns=20}")
    assert "aquas.state = 9" not in at_20
    # 19 ns per cycle: %a..%c chain (5.4 ns), the load follows; %y, %r0 one cycle later; %r1 later
    assert "%c = arith.addi %b, %1 {aquas.state = 2 : i64, aquas.cycle = 0 : i64}" in at_20


def test_schedule_options_are_checked() -> None:
    with pytest.raises(AquasError, match="unknown algorithm 'ilp' \\(known: list\\)"):
        run(SCHED_INPUT, "aquas-schedule{algorithm=ilp}")
    with pytest.raises(AquasError, match="clock-ns must be a positive number"):
        run(SCHED_INPUT, "aquas-schedule{clock-ns=0}")
    with pytest.raises(ValueError, match="Incompatible types"):
        parse_pipeline("aquas-schedule{clock-ns=fast}")


def test_a_module_without_an_extension_has_nothing_to_schedule() -> None:
    assert run("builtin.module {\n}\n", "aquas-schedule") == "builtin.module {\n}\n"


def test_an_op_slower_than_the_clock_is_a_located_error() -> None:
    # (a multiply or a division slower than the clock runs on a multi-cycle unit instead,
    # tests/test_multicycle.py; an adder has none)
    text = SCHED_INPUT.replace(
        "%a = arith.addi %0, %1 : i32", '%a = arith.addi %0, %1 : i32 loc("m.isax":3:7)'
    )
    with pytest.raises(AquasError) as info:
        run(text, "aquas-schedule{clock-ns=2}")
    assert "arith.addi needs 1.80 ns, more than the 1.00 ns a 2 ns clock" in info.value.message
    assert info.value.loc is not None and (info.value.loc.line, info.value.loc.column) == (3, 7)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_the_pass_pipeline_schedules_what_synth_schedules(path: Path) -> None:
    """`aquas opt -p <prepare pipeline>,aquas-pipeline-loops,aquas-schedule` annotates
    every op with the state `aquas synth` puts it in."""
    unit = build_unit(lower_spec_file(path), 10.0, LIB)
    annotated = lower_spec_file(path)
    steps = prepare_pipeline(unit.balanced) + ",aquas-pipeline-loops,aquas-schedule"
    parse_pipeline(steps).apply(context(), annotated)
    annotated.verify()
    again = parse(show(annotated))
    got = [
        (o.name, o.attributes[STATE_ATTR], o.attributes[CYCLE_ATTR])
        for o in again.walk()
        if STATE_ATTR in o.attributes
    ]
    want = []
    for st in unit.states:
        # multi-cycle ops (kyber's sequential divider at 10 ns) carry their issue state
        for o in [*st.ops, *st.issues, *([st.wait] if st.wait is not None else [])]:
            want.append((o, st.id))
    assert len(got) == len(want) > 0
    # the same multiset of (op name, state); cycles are state offsets within a segment
    assert sorted((n, s.value.data) for n, s, _ in got) == sorted((o.name, sid) for o, sid in want)
    for _, s, c in got:
        assert isinstance(s, IntegerAttr) and isinstance(c, IntegerAttr)
        assert 0 <= c.value.data < s.value.data


def test_aquas_opt_prints_a_scheduled_ir(tmp_path: Path) -> None:
    from aquas.cli import main

    src = tmp_path / "in.mlir"
    src.write_text(SCHED_INPUT)
    result = CliRunner().invoke(
        main, ["opt", str(src), "-p", "aquas-unroll,aquas-if-convert,aquas-schedule{clock-ns=6}"]
    )
    assert result.exit_code == 0, result.output
    assert result.output == SCHED_EXPECTED


# -- aquas-forward-state ---------------------------------------------------------------------

FWD_INPUT = """\
builtin.module {
  aquas.extension @g {
    aquas.state @acc = 0 : i32
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %2 = aquas.state_read @acc : i32
      %3 = arith.addi %2, %0 : i32
      aquas.state_write %3, @acc : i32
      %4 = aquas.state_read @acc : i32
      %5 = arith.addi %4, %1 : i32
      aquas.state_write %5, @acc : i32
      %6 = aquas.state_read @acc : i32
      aquas.write_rd %6 : i32
    }
  }
}
"""

# The second read sees the first write (forwarded: %4 becomes %3), so the first write is
# overwritten unread and goes; the last read sees the second write. One state_read and one
# state_write remain: the unit writes acc_q once, with acc + rs1 + rs2.
FWD_EXPECTED = """\
builtin.module {
  aquas.extension @g {
    aquas.state @acc = 0 : i32
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rs2", "rd"] {
      %0 = aquas.rs1 : i32
      %1 = aquas.rs2 : i32
      %2 = aquas.state_read @acc : i32
      %3 = arith.addi %2, %0 : i32
      %4 = arith.addi %3, %1 : i32
      aquas.state_write %4, @acc : i32
      aquas.write_rd %4 : i32
    }
  }
}
"""


def test_forward_state_golden() -> None:
    assert run(FWD_INPUT, "aquas-forward-state") == FWD_EXPECTED


# -- aquas-fold-unsigned-compare ---------------------------------------------------------------

FOLD_INPUT = """\
builtin.module {
  aquas.extension @g {
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      %z = arith.constant 0 : i32
      %lt = arith.cmpi ult, %0, %z : i32
      %ge = arith.cmpi uge, %0, %z : i32
      %le = arith.cmpi ule, %0, %z : i32
      %gt = arith.cmpi ugt, %z, %0 : i32
      %r1 = arith.select %lt, %0, %z : i32
      %r2 = arith.select %ge, %r1, %z : i32
      %r3 = arith.select %le, %r2, %z : i32
      %r4 = arith.select %gt, %r3, %z : i32
      aquas.write_rd %r4 : i32
    }
  }
}
"""

# Unsigned x < 0 is false, x >= 0 true, x <= 0 is x == 0, and 0 > x (the swapped form) is
# false; each folded compare keeps its name.
FOLD_EXPECTED = (
    FOLD_INPUT.replace("%lt = arith.cmpi ult, %0, %z : i32", "%lt = arith.constant false")
    .replace("%ge = arith.cmpi uge, %0, %z : i32", "%ge = arith.constant true")
    .replace("%le = arith.cmpi ule, %0, %z : i32", "%le = arith.cmpi eq, %0, %z : i32")
    .replace("%gt = arith.cmpi ugt, %z, %0 : i32", "%gt = arith.constant false")
)


def test_fold_unsigned_compare_golden() -> None:
    assert FOLD_EXPECTED != FOLD_INPUT
    assert run(FOLD_INPUT, "aquas-fold-unsigned-compare") == FOLD_EXPECTED


# -- aquas-unroll -------------------------------------------------------------------------------

UNROLL_INPUT = """\
builtin.module {
  aquas.extension @g {
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      %s0 = arith.constant 0 : i32
      %lb = arith.constant 0 : i32
      %ub = arith.constant 4 : i32
      %st = arith.constant 1 : i32
      %s = scf.for %i = %lb to %ub step %st iter_args(%acc = %s0) -> (i32) : i32 {
        %x = arith.addi %acc, %i : i32
        %y = arith.xori %x, %0 : i32
        scf.yield %y : i32
      } {aquas.unroll = 2 : i64}
      aquas.write_rd %s : i32
    }
  }
}
"""

# Unroll by 2 of a 4-trip loop: a 2-trip loop (step 2, fresh bound constants; the old ones are
# left for DCE) whose body is the body twice, the second copy at i + 1 and chained on the
# first copy's result; the directive is consumed.
UNROLL_EXPECTED = """\
builtin.module {
  aquas.extension @g {
    aquas.isax @t opcode 11 funct3 0 funct7 0 uses ["rs1", "rd"] {
      %0 = aquas.rs1 : i32
      %s0 = arith.constant 0 : i32
      %lb = arith.constant 0 : i32
      %ub = arith.constant 4 : i32
      %st = arith.constant 1 : i32
      %1 = arith.constant 0 : i32
      %2 = arith.constant 4 : i32
      %3 = arith.constant 2 : i32
      %s = scf.for %4 = %1 to %2 step %3 iter_args(%5 = %s0) -> (i32) : i32 {
        %x = arith.addi %5, %4 : i32
        %y = arith.xori %x, %0 : i32
        %6 = arith.constant 1 : i32
        %7 = arith.addi %4, %6 : i32
        %x_1 = arith.addi %y, %7 : i32
        %y_1 = arith.xori %x_1, %0 : i32
        scf.yield %y_1 : i32
      }
      aquas.write_rd %s : i32
    }
  }
}
"""


def test_unroll_golden() -> None:
    assert run(UNROLL_INPUT, "aquas-unroll") == UNROLL_EXPECTED
