"""Shared pieces of the command line: consoles, error handling, atomic writes, IR I/O.

Kept apart from ``aquas.cli`` so that subcommands living beside their code (``aquas.sim``,
``aquas.synth``) can use them without importing the command group itself.
"""

from __future__ import annotations

import functools
import io
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from aquas.diagnostics import AquasError, SourceLoc
from aquas.dialects import aquas as aq

F = TypeVar("F", bound=Callable[..., Any])

# Wide fixed width when piped, so tables stay readable in logs and CI output.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(
    stderr=True, highlight=False, soft_wrap=True, width=None if sys.stderr.isatty() else 160
)


# ---------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def make_context() -> Context:
    ctx = Context()
    for d in (builtin.Builtin, arith.Arith, scf.Scf, aq.Aquas):
        ctx.load_dialect(d)
    return ctx


def print_ir(module: ModuleOp, debuginfo: bool = False) -> str:
    buf = io.StringIO()
    Printer(stream=buf, print_debuginfo=debuginfo).print_op(module)
    return buf.getvalue() + "\n"


def load_module(path: Path) -> ModuleOp:
    """An ``.isax`` spec (lowered) or an ``.mlir`` file (parsed and verified)."""
    if path.suffix == ".isax":
        from aquas.spec.frontend import lower_spec_file

        return lower_spec_file(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise AquasError(f"cannot read input: {e.strerror}", filename=str(path)) from None
    except UnicodeDecodeError:
        raise AquasError("input is not valid UTF-8 text", filename=str(path)) from None
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


def user_errors(fn: F) -> F:
    """Turns AquasError into a diagnostic and exit status 2; internal errors into 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = click.get_current_context().find_root().params.get("debug", False)
        try:
            return fn(*args, **kwargs)
        except AquasError as e:
            if debug:
                traceback.print_exc()
            err.print(e.render(), markup=False)
            sys.exit(2)
        except click.exceptions.Exit:
            raise
        except (click.ClickException, click.Abort):
            raise
        except Exception as e:
            if debug:
                traceback.print_exc()
            err.print(
                f"internal error: {type(e).__name__}: {e}\n  hint: rerun with --debug for the traceback",
                markup=False,
            )
            sys.exit(1)

    return wrapper  # type: ignore[return-value]
