"""C frontend, preprocessing: the host's C preprocessor (``gcc -E``) and the way back from
its output to the original source.

The translation unit is preprocessed for real (includes, conditionals, object- and
function-like macros) with ``-nostdinc`` and a small set of freestanding RV32 headers
(:data:`HEADERS`), so the host's x86 headers never describe the target.  GNU C extensions
that pycparser cannot parse are removed in a fixed way: ``__attribute__((...))`` and
``__extension__`` vanish through ``-D`` definitions, ``__inline``/``__restrict``/``__const``
and their ``__x__`` spellings become the C99 keywords, and an ``asm`` statement becomes the
call ``__asm__()`` (same lines and columns), which the lowering reports as an unsupported
call -- a function with inline assembly is never rewritten.

Locations: gcc's line markers give every output line its original file and line; columns
are recovered by aligning the tokens of each output line with the tokens of the original
line (a macro's expansion maps to the column of its invocation).  The same tokenizer gives
the statement scanner (:class:`_Text`) a view of the original text without comments and
directives, because matched statements are rewritten in the original source.
"""

from __future__ import annotations

import atexit
import difflib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from aquas.diagnostics import AquasError, SourceLoc
from aquas.egraph.cdecl import Span

_LINE_MARK_RE = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+):\s*(?P<msg>.*)$", re.S)

# Freestanding headers for an RV32 target (ILP32: int = long = 32 bits).  The integer
# typedefs themselves come from the frontend's prelude, which also serves files that use
# them without an include.
HEADERS: dict[str, str] = {
    "stdint.h": "\n".join(
        [
            "#ifndef __AQUAS_STDINT_H",
            "#define __AQUAS_STDINT_H",
            "#define INT8_MIN (-128)",
            "#define INT8_MAX 127",
            "#define UINT8_MAX 255",
            "#define INT16_MIN (-32768)",
            "#define INT16_MAX 32767",
            "#define UINT16_MAX 65535",
            "#define INT32_MIN (-2147483647 - 1)",
            "#define INT32_MAX 2147483647",
            "#define UINT32_MAX 4294967295u",
            "#define INT64_MIN (-9223372036854775807ll - 1)",
            "#define INT64_MAX 9223372036854775807ll",
            "#define UINT64_MAX 18446744073709551615ull",
            "#define INTPTR_MAX INT32_MAX",
            "#define UINTPTR_MAX UINT32_MAX",
            "#define SIZE_MAX UINT32_MAX",
            "#define INT8_C(c) c",
            "#define INT16_C(c) c",
            "#define INT32_C(c) c",
            "#define INT64_C(c) c ## ll",
            "#define UINT8_C(c) c",
            "#define UINT16_C(c) c",
            "#define UINT32_C(c) c ## u",
            "#define UINT64_C(c) c ## ull",
            "#endif",
        ]
    ),
    "stddef.h": "#ifndef NULL\n#define NULL ((void *)0)\n#endif\n",
    # `bool` is the prelude's typedef (reported by name as unsupported), not a macro
    "stdbool.h": "#define true 1\n#define false 0\n#define __bool_true_false_are_defined 1\n",
    "limits.h": "\n".join(
        [
            "#define CHAR_BIT 8",
            "#define SCHAR_MIN (-128)",
            "#define SCHAR_MAX 127",
            "#define UCHAR_MAX 255",
            # plain char is unsigned on RISC-V (psABI; gcc defines __CHAR_UNSIGNED__)
            "#define CHAR_MIN 0",
            "#define CHAR_MAX UCHAR_MAX",
            "#define SHRT_MIN (-32768)",
            "#define SHRT_MAX 32767",
            "#define USHRT_MAX 65535",
            "#define INT_MIN (-2147483647 - 1)",
            "#define INT_MAX 2147483647",
            "#define UINT_MAX 4294967295u",
            "#define LONG_MIN INT_MIN",
            "#define LONG_MAX INT_MAX",
            "#define ULONG_MAX UINT_MAX",
        ]
    ),
    "inttypes.h": "#include <stdint.h>\n",
    "stdarg.h": "typedef char *va_list;\n",
    # Declarations only matter for calls, which the subset does not lower: empty headers
    # keep files that include them (for code outside the matched functions) parseable.
    "string.h": "#include <stddef.h>\n",
    "stdlib.h": "#include <stddef.h>\n",
    "stdio.h": "#include <stddef.h>\n#include <stdarg.h>\n",
    "assert.h": "#define assert(x) ((void)0)\n",
}

# GNU C spellings pycparser does not know (see the module docstring).
DEFINES: tuple[str, ...] = (
    "__attribute__(x)=",
    "__attribute(x)=",
    "__extension__=",
    "__inline=inline",
    "__inline__=inline",
    "__restrict=restrict",
    "__restrict__=restrict",
    "__const=const",
    "__const__=const",
    "__volatile=volatile",
    "__volatile__=volatile",
    "__signed=signed",
    "__signed__=signed",
    "__riscv=1",
    "__riscv_xlen=32",
    "__ILP32__=1",
    "__CHAR_UNSIGNED__=1",
)

_ASM_RE = re.compile(r"\b(?:__asm__|__asm|asm)\b((?:\s*\b(?:volatile|inline|goto)\b)*)\s*\(")

_TOKEN_RE = re.compile(
    r"""(?P<ws>[ \t\r\f\v]+|\\\n)
    |(?P<nl>\n)
    |(?P<lc>//[^\n]*)
    |(?P<bc>/\*.*?\*/|/\*.*)
    |(?P<str>[LuU]?"(?:\\.|[^"\\\n])*"?)
    |(?P<chr>[LuU]?'(?:\\.|[^'\\\n])*'?)
    |(?P<num>\.?[0-9](?:[eEpP][+-]|[\w.])*)
    |(?P<id>[A-Za-z_]\w*)
    |(?P<punct>\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\#\#|\S)""",
    re.S | re.X,
)


@dataclass(frozen=True)
class Token:
    text: str
    offset: int  # in the text it was read from
    line: int  # 1-based, in that text
    col: int  # 1-based


def tokens(text: str, directives: bool = False) -> Iterator[Token]:
    """The C tokens of ``text`` (comments skipped); lines that are preprocessor directives
    are skipped too unless ``directives``."""
    line, line_start, at_bol, in_directive = 1, 0, True, False
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "nl":
            line, line_start, at_bol, in_directive = line + 1, m.end(), True, False
            continue
        if kind in ("ws", "lc", "bc"):
            if kind == "bc" or m.group(0) == "\\\n":
                nls = m.group(0).count("\n")
                if nls:
                    line += nls
                    line_start = m.start() + m.group(0).rfind("\n") + 1
            continue
        if at_bol and m.group(0) == "#" and not directives:
            in_directive = True
        at_bol = False
        if not in_directive:
            yield Token(m.group(0), m.start(), line, m.start() - line_start + 1)


def code_only(source: str) -> str:
    """``source`` with everything but code tokens (comments, directives) blanked to spaces;
    newlines stay, so every offset, line and column is that of the original."""
    out = [c if c == "\n" else " " for c in source]
    for t in tokens(source):
        out[t.offset : t.offset + len(t.text)] = t.text
    return "".join(out)


@dataclass
class ColumnMap:
    """Per original line of the main file: the columns of the preprocessed output's tokens
    and the original columns they come from."""

    lines: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)

    def column(self, line: int, col: int) -> int:
        entry = self.lines.get(line)
        if entry is None:
            return col
        pp, orig = entry
        i = bisect_right(pp, col) - 1
        return orig[max(i, 0)]


@dataclass
class Preprocessed:
    text: str  # the translation unit for pycparser, with gcc's line markers
    columns: ColumnMap
    dependencies: list[Path]  # files the preprocessor read (the source, then its headers)


def preprocess(
    source: str,
    filename: str,
    include_dirs: Sequence[str | Path] = (),
    defines: Sequence[str] = (),
) -> Preprocessed:
    """Run the C preprocessor over ``source`` (named ``filename``); see the module docstring.

    The include path is the source's directory, then ``include_dirs``, then the RV32
    headers. ``defines`` are ``NAME`` or ``NAME=VALUE`` (the compiler's ``-D``), so the
    matcher sees the code the program is built from. ``AQUAS_CPP`` names another
    gcc-compatible preprocessor command."""
    cmd = _cpp_command()
    here = Path(filename).resolve().parent
    _check_includes(source, filename, [here, *(Path(d) for d in include_dirs)])
    with tempfile.TemporaryDirectory(prefix="aquas-cpp-") as tmp:
        dep = Path(tmp) / "deps.d"
        argv = [*cmd, "-E", "-std=c99", "-undef", "-nostdinc", "-I", str(here)]
        for d in include_dirs:
            argv += ["-I", str(d)]
        # -I, not -isystem: gcc splits a line with line markers around every token that comes
        # from a system header's macro, which would break the line structure
        argv += ["-I", str(_headers_dir())]
        argv += [f"-D{d}" for d in DEFINES]
        argv += [f"-D{d}" for d in defines]
        argv += ["-MD", "-MF", str(dep), "-MT", "aquas-input", "-x", "c", "-"]
        marker = '#line 1 "' + filename.replace("\\", "\\\\").replace('"', '\\"') + '"\n'
        try:
            res = subprocess.run(
                argv, input=marker + source, capture_output=True, text=True, timeout=120
            )
        except OSError as e:
            raise _missing(cmd[0], str(e)) from None
        except subprocess.TimeoutExpired:
            raise AquasError(
                "the C preprocessor did not finish within 120 s", filename=filename
            ) from None
        if res.returncode != 0:
            raise _cpp_error(res.stderr, filename, source)
        deps = _dependencies(dep.read_text() if dep.exists() else "")
    main = Path(filename)
    dependencies = [main.resolve()] if main.is_file() else []
    dependencies += [d for d in deps if d not in dependencies]
    text = _strip_asm(res.stdout)
    return Preprocessed(text, _columns(source, text, filename), dependencies)


_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"(?P<q>[^"\n]+)"|<(?P<a>[^>\n]+)>)', re.M)


def _check_includes(source: str, filename: str, dirs: list[Path]) -> None:
    """Refuse an ``#include`` of a device or FIFO of the file itself, before gcc runs: gcc
    reads ``#include "/dev/zero"`` until it runs out of memory, and says where only then."""
    for m in _INCLUDE_RE.finditer(source):
        name = m.group("q") or m.group("a")
        found = next((p for p in (Path(d) / name for d in dirs) if p.exists()), None)
        if found is None or found.is_file() or found.is_dir():
            continue  # gcc reports a missing header or a directory itself, with its location
        line = source.count("\n", 0, m.start()) + 1
        col = m.start("q" if m.group("q") else "a") - (source.rfind("\n", 0, m.start()) + 1)
        raise AquasError(
            f"C preprocessor: '{name}' is not a regular file and cannot be included",
            SourceLoc(filename, line, col),
            source=source,
        )


def _cpp_command() -> list[str]:
    env = os.environ.get("AQUAS_CPP")
    cmd = shlex.split(env) if env else ["gcc"]
    if not cmd or shutil.which(cmd[0]) is None:
        raise _missing(cmd[0] if cmd else "", "not found on PATH")
    return cmd


def _missing(tool: str, why: str) -> AquasError:
    return AquasError(
        f"the C frontend needs a C preprocessor: '{tool}' cannot be run ({why})",
        hint="install gcc (Debian/Ubuntu: `apt-get install gcc`), or set AQUAS_CPP to a "
        "gcc-compatible preprocessor command",
    )


_CPP_DIAG_RE = re.compile(
    r"^(?P<file>[^\n:]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal )?error:\s*(?P<msg>.*)$",
    re.M,
)


def _cpp_error(stderr: str, filename: str, source: str) -> AquasError:
    m = _CPP_DIAG_RE.search(stderr)
    if m is None:
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        return AquasError(
            f"C preprocessor failed: {lines[-1] if lines else 'no message'}", filename=filename
        )
    file, msg = m.group("file"), m.group("msg")
    loc = SourceLoc(file, int(m.group("line")), int(m.group("col") or 1))
    hint = None
    if "No such file or directory" in msg:
        hint = (
            "the include path is the source's directory and the directories passed by the "
            "caller; standard headers beyond stdint.h, stddef.h, stdbool.h, limits.h, "
            "inttypes.h, stdarg.h, string.h, stdlib.h, stdio.h and assert.h are not provided"
        )
    return AquasError(
        f"C preprocessor: {msg}", loc, source=source if file == filename else None, hint=hint
    )


def _dependencies(text: str) -> list[Path]:
    """The prerequisites of a make rule written by ``-MD`` (escaped spaces kept)."""
    body = text.replace("\\\n", " ")
    _, _, deps = body.partition(":")
    names = re.findall(r"(?:\\.|[^\s\\])+", deps)
    skip = _headers_dir()
    out: list[Path] = []
    for n in names:
        n = re.sub(r"\\(.)", r"\1", n)
        if n in ("-", "<stdin>"):
            continue
        p = Path(n).resolve()
        if skip in p.parents or p in out:
            continue
        out.append(p)
    return out


@cache
def _headers_dir() -> Path:
    d = Path(tempfile.mkdtemp(prefix="aquas-include-")).resolve()
    atexit.register(shutil.rmtree, d, True)
    for name, text in HEADERS.items():
        (d / name).write_text(text + ("" if text.endswith("\n") else "\n"))
    return d


def _strip_asm(text: str) -> str:
    """Every ``asm [qualifiers] ( ... )`` becomes ``__asm__()`` padded to the same lines and
    columns (see the module docstring)."""
    out: list[str] = []
    pos = 0
    for m in _ASM_RE.finditer(text):
        if m.start() < pos:
            continue
        end = _close_paren(text, m.end() - 1)
        span = text[m.start() : end]
        repl = "__asm__()"
        keep = "".join(c if c == "\n" else " " for c in span[len(repl) :])
        if "\n" in span[: len(repl)]:
            repl = "".join("\n" if c == "\n" else "" for c in span) + repl
            keep = ""
        out.append(text[pos : m.start()] + repl + keep)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _close_paren(text: str, i: int) -> int:
    depth, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


_ALIGN_LIMIT = 4000  # tokens of one line (original and expanded) aligned by difflib

_MARKER_RE = re.compile(r'^#\s*(\d+)\s+"((?:\\.|[^"\\])*)"')


def _columns(source: str, pp: str, filename: str) -> ColumnMap:
    """Align the tokens of every output line of the main file with the original line's."""
    orig: dict[int, list[Token]] = {}
    for t in tokens(source):
        orig.setdefault(t.line, []).append(t)
    cmap = ColumnMap()
    cur_file, cur_line = "", 0
    for raw in pp.split("\n"):
        m = _MARKER_RE.match(raw)
        if m is not None:
            cur_file = re.sub(r"\\(.)", r"\1", m.group(2))
            cur_line = int(m.group(1))
            continue
        line = cur_line
        cur_line += 1
        if cur_file != filename or raw.lstrip().startswith("#") or not raw.strip():
            continue
        ppt = list(tokens(raw, directives=True))
        src = orig.get(line, [])
        if not ppt or not src or line in cmap.lines:
            continue  # a line split by markers: later parts keep gcc's own column padding
        pp_text, src_text = [t.text for t in ppt], [t.text for t in src]
        if pp_text == src_text:  # no macro on the line
            cmap.lines[line] = ([t.col for t in ppt], [t.col for t in src])
            continue
        if len(ppt) + len(src) > _ALIGN_LIMIT:
            continue  # the alignment is quadratic: gcc's own columns (its indentation) remain
        pp_cols: list[int] = []
        orig_cols: list[int] = []
        sm = difflib.SequenceMatcher(None, pp_text, src_text, False)
        for tag, i1, i2, j1, _j2 in sm.get_opcodes():
            for k in range(i1, i2):
                pp_cols.append(ppt[k].col)
                if tag == "equal":
                    orig_cols.append(src[j1 + k - i1].col)
                else:  # an expansion: the column of the invocation (or the next token)
                    orig_cols.append(src[min(j1, len(src) - 1)].col)
        cmap.lines[line] = (pp_cols, orig_cols)
    return cmap


class _Text:
    """Offsets of lines of the original source, and a lexical scanner over its code (comments
    and directives blanked, see :func:`code_only`)."""

    def __init__(self, source: str):
        self.source = source
        self.text = code_only(source)
        self.line_starts = [0]
        for m in re.finditer("\n", source):
            self.line_starts.append(m.end())

    def offset(self, line: int, col: int) -> int:
        line = min(max(line, 1), len(self.line_starts))
        return min(self.line_starts[line - 1] + max(col, 1) - 1, len(self.source))

    def skip_ws(self, i: int) -> int:
        while i < len(self.text) and self.text[i].isspace():
            i += 1
        return i

    def word_at(self, i: int) -> str:
        m = re.match(r"[A-Za-z_]\w*", self.text[i:])
        return m.group(0) if m else ""

    def match(self, i: int) -> int:
        """``i`` is at an opening bracket: the offset just past its partner."""
        depth, n = 0, len(self.text)
        while i < n:
            c = self.text[i]
            if c in "\"'":
                j = i + 1
                while j < n and self.text[j] != c:
                    j += 2 if self.text[j] == "\\" else 1
                i = j
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return n

    def to_semicolon(self, i: int) -> int:
        n = len(self.text)
        while i < n:
            c = self.text[i]
            if c in "([{\"'":
                i = self.match(i) if c in "([{" else self.match_quote(i)
                continue
            if c == ";":
                return i + 1
            i += 1
        return n

    def match_quote(self, i: int) -> int:
        q, j, n = self.text[i], i + 1, len(self.text)
        while j < n and self.text[j] != q:
            j += 2 if self.text[j] == "\\" else 1
        return j + 1

    def paren_after(self, i: int) -> Span:
        """The first ``( ... )`` at or after ``i``."""
        j = self.text.find("(", i)
        j = len(self.text) if j < 0 else j
        return Span(j, self.match(j))

    def stmt_end(self, i: int) -> int:
        i = self.skip_ws(i)
        if i >= len(self.text):
            return i
        if self.text[i] == "{":
            return self.match(i)
        w = self.word_at(i)
        if w in ("for", "while", "if"):
            end = self.stmt_end(self.paren_after(i).end)
            if w == "if":
                j = self.skip_ws(end)
                if self.word_at(j) == "else":
                    end = self.stmt_end(j + 4)
            return end
        if w == "do":
            j = self.skip_ws(self.stmt_end(i + 2))
            return self.to_semicolon(self.paren_after(j).end)
        return self.to_semicolon(i)

    def stmt_start(self, coord_off: int) -> int:
        """Walk back from a node's coordinate to the first token of its statement."""
        i = coord_off
        while i > 0 and self.text[i - 1] not in ";{})":
            i -= 1
        i = self.skip_ws(i)
        while i < coord_off and self.word_at(i) in ("else", "do"):
            i = self.skip_ws(i + len(self.word_at(i)))
        return i

    def trimmed(self, start: int, end: int) -> Span | None:
        while start < end and self.text[start].isspace():
            start += 1
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return Span(start, end) if end > start else None
