"""Shared pieces of the command line: consoles, the error boundary, IR I/O.

The error boundary (:func:`report_exception`) is the one place where an exception becomes
what the user sees: an :class:`~aquas.diagnostics.AquasError` is printed as a diagnostic
and exits with status 2; resource exhaustion caused by the input (out of memory, nesting
too deep) and interrupts are diagnostics too; anything else is an internal error (status 1)
with a bug-report hint.  No traceback is printed unless ``--debug`` is given.
"""

from __future__ import annotations

import io
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from aquas.diagnostics import AquasError, SourceLoc, read_source
from aquas.outdir import write_atomic

if TYPE_CHECKING:
    from rich.console import Console
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.utils.exceptions import ParseError

    from aquas.target import Target

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_USER",
    "err",
    "load_module",
    "make_context",
    "out",
    "parse_int",
    "print_ir",
    "report_exception",
    "write_atomic",
]

#: Exit statuses of every command (``aquas sim`` adds the program's own, see its help).
EXIT_INTERNAL = 1
EXIT_USER = 2
EXIT_INTERRUPTED = 130
BUG_HINT = (
    "this is a bug in aquas; please report it with the command line and its input files "
    "(rerun with --debug for the traceback)"
)


class _LazyConsole:
    """A :class:`rich.console.Console` made on first use: importing rich costs a tenth of
    a second that ``aquas --help`` and the commands that print no table need not pay."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def _get(self) -> Console:
        if self._console is None:
            from rich.console import Console

            stream = sys.stderr if self._stderr else sys.stdout
            # wide fixed width when piped, so tables stay readable in logs and CI output
            self._console = Console(
                stderr=self._stderr,
                highlight=False,
                soft_wrap=True,
                width=None if stream.isatty() else 160,
            )
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)


out = cast("Console", _LazyConsole(stderr=False))
err = cast("Console", _LazyConsole(stderr=True))


def make_context() -> Context:
    """The xDSL context with every aquas dialect (:func:`aquas.context.make_context`)."""
    from aquas.context import make_context

    return make_context()


# ---------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------


def soc_option(help: str) -> Callable[[F], F]:
    """``--soc NAME``: one of the target descriptors, the primary SoC by default."""
    from aquas.socs import DEFAULT, target_names

    return click.option(
        "--soc", type=click.Choice(target_names()), default=DEFAULT, show_default=True, help=help
    )


def clock_option() -> Callable[[F], F]:
    """``--clock-ns N``: the clock target; by default the target core's critical path."""
    return click.option(
        "--clock-ns",
        type=float,
        default=None,
        help="Target clock period (ns) [default: the target core's critical path on the cell "
        "library, or 10 ns when OpenSTA or the library is missing].",
    )


def resolve_clock_ns(clock_ns: float | None, target: Target) -> float:
    """``--clock-ns`` checked, or the target's default clock, said on stderr with its source."""
    from aquas.area import resolve_clock
    from aquas.diagnostics import check_clock

    if clock_ns is not None:
        check_clock(clock_ns)
        return clock_ns
    clock = resolve_clock(None, target, lambda m: err.print(m, markup=False))
    err.print(f"clock target {clock.ns:g} ns: {clock.note}", markup=False)
    return clock.ns


def print_ir(module: ModuleOp, debuginfo: bool = False) -> str:
    from xdsl.printer import Printer

    buf = io.StringIO()
    Printer(stream=buf, print_debuginfo=debuginfo).print_op(module)
    return buf.getvalue() + "\n"


def load_module(path: Path) -> ModuleOp:
    """An ``.isax`` spec (lowered) or an ``.mlir`` file (parsed and verified)."""
    if path.suffix == ".isax":
        from aquas.spec.frontend import lower_spec_file

        return lower_spec_file(path)
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError, VerifyException

    text = read_source(path, "input")
    try:
        module = Parser(make_context(), text, str(path)).parse_module()
    except ParseError as e:
        raise _parse_error(e, text, str(path)) from None
    try:
        module.verify()
    except VerifyException as e:
        raise AquasError(f"IR verification failed: {e}", filename=str(path)) from None
    return module


def _parse_error(e: ParseError, text: str, filename: str) -> AquasError:
    start = e.span.start
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1) + 1
    return AquasError(e.msg, SourceLoc(filename, line, col), source=text)


def parse_int(text: str, what: str) -> int:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        raise AquasError(f"{what}: '{text}' is not an integer (decimal, 0x.. or 0b..)") from None


def report_exception(e: BaseException, debug: bool) -> int:
    """Prints ``e`` as the user should see it; returns the exit status."""
    if debug:
        traceback.print_exception(e)
    if isinstance(e, AquasError):
        err.print(e.render(), markup=False)
        return EXIT_USER
    if isinstance(e, KeyboardInterrupt):
        err.print("interrupted", markup=False)
        return EXIT_INTERRUPTED
    if isinstance(e, MemoryError):
        err.print(
            "error: out of memory: the input needs more memory than this machine has\n"
            "  hint: reduce the size of the input (array sizes, trip counts, unrolling)",
            markup=False,
        )
        return EXIT_USER
    if isinstance(e, RecursionError):
        err.print(
            "error: the input is nested too deeply to process\n"
            "  hint: reduce the nesting of expressions, statements or tables",
            markup=False,
        )
        return EXIT_USER
    if isinstance(e, OSError) and e.filename is not None:
        # the environment, not aquas: a full disk, a permission, a vanished file
        err.print(f"error: {e.filename}: {e.strerror or e}", markup=False)
        return EXIT_USER
    text = str(e) or "(no message)"
    err.print(
        f"internal error: {type(e).__name__}: {text}\n  hint: {BUG_HINT}",
        markup=False,
    )
    return EXIT_INTERNAL


def is_debug() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().params.get("debug", False))
