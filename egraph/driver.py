"""``aquas match``: from an application file and an ISAX spec to decisions and rewritten code.

``match_file(app, spec)`` parses the application (C through :mod:`aquas.egraph.cfront`, or
MLIR in func/scf/arith/memref form), turns every selected function into the matcher's view
(statements with the ops they lowered to), derives the ISAX patterns and their scheduled
latencies, and runs :class:`~aquas.egraph.matcher.Matcher`.  Emission lives in
:mod:`aquas.egraph.emit`.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, FileLineColLoc, ModuleOp, StringAttr
from xdsl.ir import Block, Operation

from aquas.diagnostics import AquasError
from aquas.dialects import aquas as aq
from aquas.egraph import cfront
from aquas.egraph.matcher import (
    AppBlock,
    AppFunction,
    AppParam,
    AppStmt,
    Decision,
    Matcher,
    Options,
    Pattern,
    function_of,
    params_of_mlir,
    patterns_of,
)
from aquas.interpreter import find_extension
from aquas.reencode import EncodingMap, spec_for_target
from aquas.runtime.coherence import plan as coherence_plan
from aquas.runtime.header import isax_effects
from aquas.target import DEFAULT as DEFAULT_SOC
from aquas.target import Target, load_target


@dataclass
class MatchResult:
    app: Path
    kind: str  # "c" | "mlir"
    extension: aq.ExtensionOp
    patterns: list[Pattern]
    decisions: list[Decision]
    functions: list[str]
    skipped: list[AquasError] = field(default_factory=list)  # unsupported functions
    program: cfront.CProgram | None = None
    module: ModuleOp | None = None
    seconds: float = 0.0
    cflags: list[str] = field(default_factory=list)  # the preprocessor's -I/-D (final check)

    @property
    def matched(self) -> list[Decision]:
        return [d for d in self.decisions if d.status == "matched"]


LATENCY_CACHE = "latency"
"""The :func:`aquas.cachedir.cache_dir` kind of :func:`cached_latencies`."""


@functools.cache
def _code_fingerprint() -> str:
    """A digest of the code the ISAX latencies depend on: every ``.py``/``.json`` file of
    the installed ``aquas`` packages (scheduler, dialects, passes, operator library), and
    the Python and xDSL versions (a few milliseconds)."""
    import hashlib
    import sys

    import xdsl

    import aquas
    import aquas.dialects
    import aquas.synth

    h = hashlib.sha256(f"{sys.version_info[:2]} {xdsl.__version__}".encode())
    for root in (*aquas.__path__, *aquas.synth.__path__, *aquas.dialects.__path__):
        for f in sorted(Path(root).rglob("*")):
            if f.suffix in (".py", ".json") and f.is_file():
                h.update(f"{f.relative_to(root)}\0".encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def cached_latencies(
    module: ModuleOp, clock_ns: float, mem_latency: int, bus_width: int = 32
) -> dict[str, tuple[int, int]]:
    """:func:`aquas.synth.flow.isax_latencies` of ``module`` (default operator library,
    sharing, directive pipelining), kept in the user cache (``aquas.cachedir``, kind
    ``latency``) under a digest of the printed module, the arguments and the code
    (:func:`_code_fingerprint`): scheduling a spec takes 0.3-2 s, more than the matching
    of a small file. A missing or unreadable entry is computed (and written) again."""
    import hashlib
    import json

    from aquas.cachedir import cache_dir
    from aquas.outdir import write_atomic

    key = hashlib.sha256(
        f"{_code_fingerprint()}\0{clock_ns!r}\0{mem_latency}\0{bus_width}\0{module}".encode()
    ).hexdigest()
    path = cache_dir(LATENCY_CACHE) / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): (int(v[0]), int(v[1])) for k, v in data.items()}
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        pass
    from aquas.synth.flow import isax_latencies

    out = isax_latencies(module, clock_ns, mem_latency, bus_width=bus_width)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({k: list(v) for k, v in out.items()}))
    except (OSError, AquasError):
        pass  # a read-only cache: computed every time
    return out


def load_patterns(
    spec: Path | str,
    clock_ns: float = 10.0,
    soc: str | Target = DEFAULT_SOC,
    latencies: dict[str, tuple[int, int]] | None = None,
    *,
    prepared: tuple[ModuleOp, EncodingMap] | None = None,
    cache: bool = False,
) -> tuple[aq.ExtensionOp, list[Pattern]]:
    """The patterns of a spec, re-encoded into the opcodes ``soc``'s core routes
    (:func:`aquas.reencode.spec_for_target`). Their latencies are ``latencies`` (ISAX ->
    (min, max) cycles: those of the unit actually built, e.g. after its interface plans),
    else the spec as written scheduled at ``clock_ns`` and evaluated at the memory latency an
    ISAX sees on ``soc`` (response latency plus DMA setup). ``prepared``: that module and its
    map, when the caller already made them (the flow, so synthesis and the matcher see one
    module). An extension that cannot be re-encoded keeps its encodings; its unrouted ISAXs
    carry the reason, which the matcher gives when it refuses them.

    ``cache``: keep the scheduled latencies in the user cache (:func:`cached_latencies`;
    ``aquas match`` does, so that a command line call does not schedule the spec again)."""
    target = soc if isinstance(soc, Target) else load_target(soc=soc)
    mem_latency = target.isax_mem_latency
    module, emap = prepared or spec_for_target(spec, target, strict=False)
    ext = find_extension(module)
    if latencies is None and cache:
        latencies = cached_latencies(
            module, clock_ns, mem_latency, bus_width=target.isax_master.bus_width
        )
    if latencies is None:
        from aquas.synth.flow import isax_latencies

        latencies = isax_latencies(
            module, clock_ns, mem_latency, bus_width=target.isax_master.bus_width
        )
    pats = patterns_of(ext, latencies)
    isaxs = {i.sym_name.data: i for i in ext.isaxs()}
    for p in pats:  # the cache maintenance the runtime header performs after each call
        isax = isaxs[p.name]
        p.maintenance = coherence_plan(isax, target, isax_effects(isax).writes_mem).cycles
        p.reencode_error = emap.error
    return ext, pats


def match_file(
    app: Path | str,
    spec: Path | str,
    *,
    functions: Collection[str] | None = None,
    options: Options | None = None,
    clock_ns: float = 10.0,
    soc: str | Target = DEFAULT_SOC,
    patterns: tuple[aq.ExtensionOp, list[Pattern]] | None = None,
    include_dirs: Sequence[str | Path] = (),
    defines: Sequence[str] = (),
) -> MatchResult:
    """Match every selected function of ``app`` (C or MLIR) against the ISAXs of ``spec``.
    C is preprocessed with the source's directory, then ``include_dirs``, on the include
    path, with ``defines`` (``NAME[=VALUE]``); ``result.program.dependencies`` lists the
    files the preprocessor read."""
    t0 = time.perf_counter()
    app = Path(app)
    ext, pats = patterns or load_patterns(spec, clock_ns, soc)
    matcher = Matcher(pats, options or Options(core=soc))  # the cost model of the target core
    try:
        text = app.read_text()
    except OSError as e:
        raise AquasError(f"cannot read {app}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise AquasError(f"{app} is not UTF-8 text: {e.reason}", filename=str(app)) from None
    decisions: list[Decision] = []
    if app.suffix == ".mlir":
        module = cfront.parse_mlir(text, str(app))
        fns = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
        if functions is not None:
            unknown = set(functions) - {f.sym_name.data for f in fns}
            if unknown:
                raise AquasError(f"no function named {', '.join(sorted(unknown))} in {app}")
            fns = [f for f in fns if f.sym_name.data in functions]
        for fop in fns:
            af = function_of(fop, params_of_mlir(fop))
            _name_block_args(af)
            decisions += matcher.match_function(af)
        return MatchResult(
            app,
            "mlir",
            ext,
            pats,
            decisions,
            [f.sym_name.data for f in fns],
            module=module,
            seconds=time.perf_counter() - t0,
        )
    prog = cfront.parse_c(text, str(app), functions, include_dirs, defines)
    names = []
    helpers = frozenset(cf.name for cf in prog.functions)
    for cf in prog.functions:
        if not cf.selected or cf.func is None:
            continue
        names.append(cf.name)
        decisions += matcher.match_function(app_function(cf, text, helpers))
    return MatchResult(
        app,
        "c",
        ext,
        pats,
        decisions,
        names,
        list(prog.diagnostics),
        program=prog,
        seconds=time.perf_counter() - t0,
        cflags=[f"-I{app.parent or '.'}"]
        + [f"-I{d}" for d in include_dirs]
        + [f"-D{d}" for d in defines],
    )


# ---------------------------------------------------------------------------------------
# C functions as the matcher sees them
# ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _offsets(text: str) -> list[int]:
    """Offsets of the line starts (computed once per file, not once per function)."""
    starts = [0]
    i = text.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    return starts


def app_function(
    cf: cfront.CFunction, text: str, helpers: frozenset[str] = frozenset()
) -> AppFunction:
    """Group the ops of every block by the C statement they came from (via locations).
    ``helpers``: the file's functions; each statement records those its text calls."""
    assert cf.func is not None
    line_start = _offsets(text)
    stmts = [s for s in cf.stmts if s.kind != "block"]
    by_op: dict[Operation, cfront.CStmt] = {s.op: s for s in stmts if s.op is not None}
    owned: dict[Operation, cfront.CStmt] = {o: s for s in stmts for o in s.ops}

    def offset(op: Operation) -> int | None:
        loc = op.location
        if not isinstance(loc, FileLineColLoc):
            return None
        line, col = loc.line.data, loc.column.data
        if not 1 <= line <= len(line_start):
            return None
        return line_start[line - 1] + col - 1

    params = [
        AppParam(
            p.name,
            p.ctype.pointer,
            p.ctype.restrict,
            p.ctype.width,
            p.ctype.c_name(),
        )
        for p in cf.params
    ]
    blocks: list[AppBlock] = []

    def visit(block: Block, container: cfront.Span) -> None:
        inner = [
            s
            for s in stmts
            if container.start <= s.span.start
            and s.span.end <= container.end
            and (s.span.start, s.span.end) != (container.start, container.end)
        ]
        ops = list(block.ops)
        inside = {id(s) for s in inner}
        owners: list[cfront.CStmt | None] = []
        for op in ops:
            st = by_op.get(op)
            if st is None:
                off = offset(op)
                cands = [s for s in inner if off is not None and s.span.start <= off < s.span.end]
                widest = max((s.span.end - s.span.start for s in cands), default=0)
                top = [s for s in cands if s.span.end - s.span.start == widest]
                st = top[0] if top else None
                if len(top) > 1 and id(owned.get(op)) in inside:
                    # statements of one macro expansion all have the invocation's location:
                    # the one whose lowering added the op
                    st = owned[op]
            owners.append(st)
        # ops without a location of their own (constants) belong to the next statement
        for k in range(len(ops) - 2, -1, -1):
            if owners[k] is None and not _terminator(ops[k]):
                owners[k] = owners[k + 1]
        groups: list[AppStmt] = []
        for op, st in zip(ops, owners, strict=True):
            if groups and st is not None and groups[-1].src is st:
                groups[-1].ops.append(op)
            elif st is None:
                kind = "return" if isinstance(op, func.ReturnOp) else "implicit"
                value = op.operands[0] if kind == "return" and op.operands else None
                groups.append(AppStmt(kind, 0, 0, [op], value=value))
            else:
                called = (
                    frozenset(_CALL.findall(text, st.span.start, st.span.end)) & helpers
                    if helpers
                    else frozenset()
                )
                groups.append(
                    AppStmt(
                        st.kind,
                        st.line,
                        st.col,
                        [op],
                        span=(st.span.start, st.span.end),
                        target=st.target,
                        value=st.value,
                        iv=st.iv,
                        src=st,
                        calls=called,
                    )
                )
            for region in op.regions:
                for blk in region.blocks:
                    visit(blk, st.span if st is not None else container)
        blocks.append(AppBlock(block, groups))

    visit(cf.func.body.block, cfront.Span(cf.span.start, cf.span.end))
    blocks.reverse()  # outer blocks first
    af = AppFunction(cf.name, cf.func, params, blocks, line=cf.line)
    af.pointers = {v.name for v in (*cf.params, *cf.locals.values()) if v.ctype.pointer}
    for s in stmts:
        for name, v in s.writes.items():
            af.names.setdefault(v, name)
            af.assigned.add(name)
            af.assigned_at.setdefault(name, []).append(s.span.start if s.span else None)
    _name_block_args(af)
    for k, p in enumerate(cf.params):
        af.names[cf.func.body.block.args[k]] = p.name
    for s in stmts:
        if s.iv and isinstance(s.op, scf.ForOp):
            af.names[s.op.body.block.args[0]] = s.iv
    return af


_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _name_block_args(af: AppFunction) -> None:
    """Loop-carried block arguments take the C name of the loop result they become."""
    for op in af.func.walk():
        if isinstance(op, scf.ForOp):
            for j, r in enumerate(op.results):
                if r in af.names:
                    af.names.setdefault(op.body.block.args[j + 1], af.names[r])
        elif isinstance(op, scf.WhileOp):
            carried = op.attributes.get("aquas.carried")
            if isinstance(carried, ArrayAttr):  # the C frontend's names of the carried values
                for j, name in enumerate(carried.data):
                    assert isinstance(name, StringAttr)
                    af.names.setdefault(op.before_region.block.args[j], name.data)
                    if j < len(op.after_region.block.args):
                        af.names.setdefault(op.after_region.block.args[j], name.data)
            for j, r in enumerate(op.results):
                if r in af.names:
                    af.names.setdefault(op.before_region.block.args[j], af.names[r])
                    if j < len(op.after_region.block.args):
                        af.names.setdefault(op.after_region.block.args[j], af.names[r])


def _terminator(op: Operation) -> bool:
    return isinstance(op, func.ReturnOp | scf.YieldOp | scf.ConditionOp)


__all__ = ["MatchResult", "app_function", "load_patterns", "match_file"]
