"""User-facing diagnostics: ``file:line:col: error: message``, the source line, a caret and
an optional one-line fix hint.  Every error a user can cause raises :class:`AquasError`;
the CLI prints it and exits with status 2."""

from __future__ import annotations

import errno
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdsl.ir import Operation


@dataclass(frozen=True)
class SourceLoc:
    filename: str
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


def loc_of(op: Operation) -> SourceLoc | None:
    """The spec location the frontend attached to ``op``, if any."""
    from xdsl.dialects.builtin import FileLineColLoc

    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return SourceLoc(loc.filename.data, loc.line.data, loc.column.data)
    return None


class AquasError(Exception):
    """An error caused by the user's input, reported without a traceback."""

    def __init__(
        self,
        message: str,
        loc: SourceLoc | None = None,
        *,
        hint: str | None = None,
        source: str | None = None,
        filename: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.hint = hint
        self.source = source
        self.filename = filename

    def render(self, source: str | None = None) -> str:
        """Format as ``file:line:col: error: msg`` plus source line, caret and hint."""
        src = source if source is not None else self.source
        if self.loc is not None:
            head = f"{self.loc}: error: {self.message}"
        elif self.filename:
            head = f"{self.filename}: error: {self.message}"
        else:
            head = f"error: {self.message}"
        lines = [head]
        if self.loc is not None and src is not None:
            text_lines = src.splitlines()
            if 1 <= self.loc.line <= len(text_lines):
                text = text_lines[self.loc.line - 1].expandtabs(1)
                lines.append(f"  {text}")
                lines.append("  " + " " * (max(self.loc.column, 1) - 1) + "^")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def read_source(path: Path | str, what: str) -> str:
    """The UTF-8 text of an input file (spec, C source, project or platform file).

    Every way of failing is a diagnostic naming the file: missing, unreadable, a symlink
    loop, or not UTF-8 (located at the first bad byte)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AquasError(f"{what} {path} does not exist") from None
    except OSError as e:
        reason = e.strerror or str(e)
        if e.errno == errno.ELOOP:
            reason = "too many levels of symbolic links (a symlink loop)"
        raise AquasError(f"cannot read {what} {path}: {reason}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise AquasError(
            f"{what} is not valid UTF-8 text (byte {data[e.start]:#04x})",
            SourceLoc(str(path), line, col),
        ) from None


# tomllib (Python < 3.14) gives the position only inside the message text
_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def parse_toml(text: str, filename: str) -> dict[str, Any]:
    """``tomllib.loads`` with its errors as located diagnostics."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _TOML_POS.search(msg)
        loc = SourceLoc(filename, int(m[1]), int(m[2])) if m else None
        raise AquasError(
            f"invalid TOML: {msg[: m.start()] if m else msg}",
            loc,
            filename=None if loc else filename,
            source=text,
        ) from None
    except RecursionError:
        raise AquasError(
            "the file is nested too deeply to read (tables or arrays inside each other)",
            filename=filename,
        ) from None


def check_clock(clock_ns: float, what: str = "--clock-ns") -> None:
    """A usable clock period: finite and positive (NaN and infinity compare oddly)."""
    import math

    if not math.isfinite(clock_ns) or clock_ns <= 0:
        raise AquasError(f"{what} must be a finite positive number of ns, got {clock_ns}")
