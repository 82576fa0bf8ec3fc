"""Spec parsing: ``*.isax`` text → Lark parse tree, integer literals, syntax diagnostics."""

from __future__ import annotations

import functools
from pathlib import Path

import lark
from lark import Tree

from aquas.diagnostics import AquasError, SourceLoc
from aquas.spec.limits import MAX_CONST_BITS

_GRAMMAR = Path(__file__).with_name("isax.lark")


@functools.cache
def _parser() -> lark.Lark:
    """The LALR parser of the grammar. Building its tables takes about 0.3 s, more than
    lowering a spec; Lark keeps them in the user cache (``aquas.cachedir``, kind
    ``lark``), checked against a digest of the grammar, the options and Lark's version,
    and rebuilds them when the entry is missing, stale or unreadable."""
    from aquas.cachedir import cache_dir

    cache: str | bool = False
    try:
        folder = cache_dir("lark")
        folder.mkdir(parents=True, exist_ok=True)
        cache = str(folder / "isax-grammar.cache")
    except OSError:
        pass  # no usable cache directory: build the tables every time
    return lark.Lark(
        _GRAMMAR.read_text(),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=True,
        cache=cache,
    )


class LiteralTooLarge(ValueError):
    """An integer literal of more than :data:`MAX_CONST_BITS` bits."""


def parse_int(text: str) -> tuple[int, str | None, bool]:
    """(value, type suffix or None, written as a bit pattern) of an INT token.

    Raises :class:`LiteralTooLarge` for a value of more than ``MAX_CONST_BITS`` bits, without
    converting an arbitrarily long digit string first."""
    t = text.replace("_", "")
    suffix = None
    low = t.lower()
    base, bits_per_digit, pattern = 10, 3.33, False
    if low.startswith(("0x", "0b")):
        base, bits_per_digit, pattern = (16, 4.0, True) if low[1] == "x" else (2, 1.0, True)
        t = t[2:]
    for i, ch in enumerate(t):
        if ch in "ui":
            t, suffix = t[:i], t[i:]
            break
    significant = t.lstrip("0") or t[-1:]  # Python's digit limit counts leading zeros too
    if (len(significant) - 1) * bits_per_digit > MAX_CONST_BITS:
        raise LiteralTooLarge(text)
    value = int(significant, base)
    if value.bit_length() > MAX_CONST_BITS:
        raise LiteralTooLarge(text)
    return value, suffix, pattern


def _syntax_error(e: lark.exceptions.LarkError, source: str, filename: str) -> AquasError:
    line = getattr(e, "line", 1) or 1
    col = getattr(e, "column", 1) or 1
    if isinstance(e, lark.exceptions.UnexpectedEOF):
        lines = source.splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
        msg = "unexpected end of file"
    elif isinstance(e, lark.exceptions.UnexpectedCharacters):
        pos = e.pos_in_stream or 0
        ch = source[pos] if 0 <= pos < len(source) else "?"
        msg = f"unexpected character {ch!r}"
    elif isinstance(e, lark.exceptions.UnexpectedToken):
        tok = e.token
        shown = "end of file" if tok.type == "$END" else repr(str(tok))
        msg = f"syntax error: unexpected {shown}"
        if tok.type == "$END":
            lines = source.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
    else:
        msg = f"syntax error: {e}"
    expected = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or [])
    hint = None
    if expected:
        names = sorted({_describe_terminal(x) for x in expected if not x.startswith("__")})
        if names:
            hint = "expected " + ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
    return AquasError(msg, SourceLoc(filename, line, col), hint=hint, source=source)


def _describe_terminal(name: str) -> str:
    if name == "NAME":
        return "a name"
    if name == "INT":
        return "an integer"
    if name == "$END":
        return "end of file"
    try:
        pattern = _parser().get_terminal(name).pattern
    except KeyError:
        return name.lower()
    if isinstance(pattern, lark.lexer.PatternStr):
        return repr(pattern.value)
    return name.lower()


def parse_spec(source: str, filename: str = "<input>") -> Tree:
    """Parse spec text into a Lark tree; syntax errors raise :class:`AquasError`."""
    try:
        return _parser().parse(source)
    except lark.exceptions.LarkError as e:
        raise _syntax_error(e, source, filename) from None
