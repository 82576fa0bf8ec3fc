"""Keeps discardable attributes on ``arith.cmpi`` through printing and parsing.

MLIR's format for ``arith.cmpi`` has an attribute dictionary before the type
(``%c = arith.cmpi ult, %a, %b {aquas.state = 2 : i64} : i32``), but xDSL 0.74's custom
printer leaves it out and its parser does not accept it. aquas annotates ops with
discardable attributes (``aquas.state``/``aquas.cycle`` from ``aquas-schedule``), so a
comparison would silently lose them in a print/parse round trip. ``install()`` gives the
op MLIR's format; the IR without such attributes prints exactly as before.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.parser import Parser
from xdsl.printer import Printer

_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


def _print_cmpi(self: arith.CmpiOp, printer: Printer) -> None:
    printer.print_string(f" {_PREDICATES[self.predicate.value.data]}, ")
    printer.print_operand(self.lhs)
    printer.print_string(", ")
    printer.print_operand(self.rhs)
    printer.print_op_attributes(self.attributes)
    printer.print_string(" : ")
    printer.print_attribute(self.lhs.type)


def _parse_cmpi(cls: type[arith.CmpiOp], parser: Parser) -> arith.CmpiOp:
    predicate = parser.parse_identifier()
    parser.parse_punctuation(",")
    lhs = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    rhs = parser.parse_unresolved_operand()
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    ty = parser.parse_type()
    a, b = parser.resolve_operands([lhs, rhs], [ty, ty], parser.pos)
    op = cls(a, b, predicate)
    op.attributes.update(attrs)
    return op


def install() -> None:
    arith.CmpiOp.print = _print_cmpi  # type: ignore[method-assign]
    arith.CmpiOp.parse = classmethod(_parse_cmpi)  # type: ignore[method-assign, assignment]
