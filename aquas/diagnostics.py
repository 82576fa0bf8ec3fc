"""User-facing diagnostics: ``file:line:col: error: message``, the source line, a caret and
an optional one-line fix hint.  Every error a user can cause raises :class:`AquasError`;
the CLI prints it and exits with status 2."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import FileLineColLoc
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
