"""Project files of ``aquas run``: one TOML file from an ISAX spec to a measured speedup.

```toml
[project]
name = "pointcloud-icp"

[extension]
spec = "pointcloud.isax"        # the extension (one unit per SoC)
clock_ns = 10.0                 # synthesis target clock (default: the core's critical path)
cosim_cases = 200               # random co-simulation cases per ISAX (0: skip)
area_budget = 0.4               # optional: the unit's estimated area within 0.4 x the core's
isaxs = ["v3ddist", "vnearest"] # optional: build only these ISAXs (default: all)

[application]
sources = ["icp_main.c", "icp_kernels.c"]   # C / assembly, compiled with the runtime
match = ["icp_kernels.c"]       # the sources the matcher may rewrite (default: every .c)
functions = []                  # restrict matching to these functions (default: all)
entry = "main"                  # the program's entry function
opt = "-O2"
defines = { N_ITER = 3 }

[target]
soc = "vexriscv"                # vexriscv | picorv32
platform = "my_platform.toml"   # optional; default: the SoC's own (or a packaged variant: "vexriscv-wide")
max_cycles = 50_000_000

[regions]                       # AQUAS_REGION_BEGIN(id) regions to report, id = "label"
1 = "nearest neighbour"
```

Paths are relative to the project file.  :func:`load_project` checks everything a run
needs before any stage starts: unknown tables and keys, types, value ranges, files that
do not exist, ``match`` entries that are not sources.  Every problem is an
:class:`~aquas.diagnostics.AquasError` naming the file and the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aquas.diagnostics import AquasError, parse_toml, read_source
from aquas.outdir import check_name
from aquas.target import platform_names, target_names

OPT_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Project:
    path: Path  # the project file
    name: str
    spec: Path
    clock_ns: float | None  # None: the core's critical path
    cosim_cases: int
    sources: tuple[Path, ...]
    match: tuple[Path, ...]
    functions: tuple[str, ...] | None
    entry: str
    opt: str
    defines: dict[str, str | int | bool] = field(default_factory=dict)
    soc: str = "vexriscv"
    platform: Path | None = None
    max_cycles: int = 50_000_000
    regions: dict[int, str] = field(default_factory=dict)
    area_budget: float | None = None  # a fraction of the core's area (aquas synth --area-budget)
    isaxs: tuple[str, ...] | None = None  # the ISAXs the unit holds (None: the extension's)

    @property
    def root(self) -> Path:
        return self.path.parent


def load_project(path: Path | str) -> Project:
    """Read and validate a project file (see the module docstring)."""
    path = Path(path)
    doc = parse_toml(read_source(path, "project file"), str(path))
    return _Loader(path).project(doc)


class _Loader:
    def __init__(self, path: Path):
        self.path = path
        self.root = path.parent

    def fail(self, message: str, hint: str | None = None) -> AquasError:
        return AquasError(message, filename=str(self.path), hint=hint)

    def table(self, doc: dict[str, Any], name: str, keys: dict[str, bool]) -> dict[str, Any]:
        """Table ``name`` with only ``keys`` (value: required) present."""
        t = doc.get(name, {})
        if not isinstance(t, dict):
            raise self.fail(f"'{name}' must be a table ([{name}])")
        for k in t:
            if k not in keys:
                raise self.fail(
                    f"unknown key '{name}.{k}'", hint=f"known keys of [{name}]: {', '.join(keys)}"
                )
        for k, required in keys.items():
            if required and k not in t:
                raise self.fail(f"missing required key '{name}.{k}'")
        return t

    def file(self, value: Any, where: str, suffixes: tuple[str, ...]) -> Path:
        if not isinstance(value, str) or not value:
            raise self.fail(f"'{where}' must be a file name (a non-empty string)")
        try:
            p = (self.root / value).resolve()
            exists = p.is_file()
        except (OSError, RuntimeError):  # RuntimeError: Python 3.11's symlink-loop report
            raise self.fail(f"'{where}': {value} is a symlink loop or cannot be resolved") from None
        if p.suffix not in suffixes:
            raise self.fail(f"'{where}': {value} is not a {' / '.join(suffixes)} file")
        if not exists:
            raise self.fail(f"'{where}': file {value} does not exist (relative to the project)")
        return p

    def number(
        self,
        t: dict[str, Any],
        key: str,
        where: str,
        default: float,
        *,
        integer: bool,
        low: float,
        low_ok: bool = True,
    ) -> Any:
        v: Any = t.get(key, default)
        ok = isinstance(v, int) if integer else isinstance(v, int | float)
        if isinstance(v, bool) or not ok:
            raise self.fail(
                f"'{where}' must be {'an integer' if integer else 'a number'}, got {v!r}"
            )
        if isinstance(v, float) and not math.isfinite(v):  # nan passes every comparison
            raise self.fail(f"'{where}' must be a finite number, got {v!r}")
        if v < low or (v == low and not low_ok):
            rel = ">=" if low_ok else ">"
            raise self.fail(f"'{where}' must be {rel} {low}, got {v}")
        return v

    def strings(self, t: dict[str, Any], key: str, where: str) -> list[str] | None:
        v = t.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.fail(f"'{where}' must be a list of strings")
        return v

    def project(self, doc: dict[str, Any]) -> Project:
        tables = ("project", "extension", "application", "target", "regions")
        for k in doc:
            if k not in tables:
                raise self.fail(f"unknown table [{k}]", hint=f"known tables: {', '.join(tables)}")
        proj = self.table(doc, "project", {"name": True})
        try:
            # it names the default output directory build/<name>: '..' would be the cwd
            name = check_name(proj["name"], "'project.name'")
        except AquasError as e:
            raise self.fail(e.message) from None

        ext = self.table(
            doc,
            "extension",
            {
                "spec": True,
                "clock_ns": False,
                "cosim_cases": False,
                "area_budget": False,
                "isaxs": False,
            },
        )
        isaxs = self.strings(ext, "isaxs", "extension.isaxs")
        if isaxs is not None:
            # which names the spec has is checked when the flow lowers it (keep_isaxs)
            if not isaxs:
                raise self.fail(
                    "'extension.isaxs' must name at least one ISAX",
                    hint="leave it out to build every ISAX of the extension",
                )
            for n in isaxs:
                if not _IDENT.match(n):
                    raise self.fail(f"'extension.isaxs': '{n}' is not an ISAX name")
            if len(set(isaxs)) != len(isaxs):
                raise self.fail("'extension.isaxs' lists an ISAX twice")
        budget = (
            float(
                self.number(
                    ext,
                    "area_budget",
                    "extension.area_budget",
                    1.0,
                    integer=False,
                    low=0,
                    low_ok=False,
                )
            )
            if "area_budget" in ext
            else None
        )
        spec = self.file(ext["spec"], "extension.spec", (".isax",))
        # not given: the core's critical path (aquas.area.default_clock), set by the flow
        clock = (
            float(
                self.number(
                    ext, "clock_ns", "extension.clock_ns", 10.0, integer=False, low=0, low_ok=False
                )
            )
            if "clock_ns" in ext
            else None
        )
        cosim = int(
            self.number(ext, "cosim_cases", "extension.cosim_cases", 100, integer=True, low=0)
        )

        app = self.table(
            doc,
            "application",
            {
                "sources": True,
                "match": False,
                "functions": False,
                "entry": False,
                "opt": False,
                "defines": False,
            },
        )
        src_names = self.strings(app, "sources", "application.sources")
        if not src_names:
            raise self.fail("'application.sources' must list at least one source file")
        sources = [self.file(s, "application.sources", (".c", ".S", ".s")) for s in src_names]
        if len(set(sources)) != len(sources):
            raise self.fail("'application.sources' lists a file twice")
        match_names = self.strings(app, "match", "application.match")
        if match_names is None:
            match = [s for s in sources if s.suffix == ".c"]
        else:
            match = [self.file(m, "application.match", (".c",)) for m in match_names]
            for m, raw in zip(match, match_names, strict=True):
                if m not in sources:
                    raise self.fail(f"'application.match': {raw} is not one of the sources")
        fn_names = self.strings(app, "functions", "application.functions")
        for f in fn_names or []:
            if not _IDENT.match(f):
                raise self.fail(f"'application.functions': '{f}' is not a C identifier")
        entry = app.get("entry", "main")
        if not isinstance(entry, str) or not _IDENT.match(entry):
            raise self.fail("'application.entry' must be a C identifier")
        defined = re.compile(rf"\b{entry}\s*\([^;{{]*\)\s*{{")
        texts = {s: read_source(s, "source file") for s in sources}
        if not any(s.suffix == ".c" and defined.search(texts[s]) for s in sources):
            raise self.fail(f"'application.entry': no source defines a function '{entry}'")
        opt = app.get("opt", "-O2")
        if opt not in OPT_LEVELS:
            raise self.fail(
                f"'application.opt' must be one of {', '.join(OPT_LEVELS)}, got {opt!r}"
            )
        defines = app.get("defines", {})
        if not isinstance(defines, dict):
            raise self.fail("'application.defines' must be a table of NAME = value")
        for k, v in defines.items():
            if not _IDENT.match(k):
                raise self.fail(f"'application.defines': '{k}' is not a C identifier")
            if not isinstance(v, (str, int, bool)):
                raise self.fail(f"'application.defines.{k}' must be a string, integer or boolean")

        tgt = self.table(doc, "target", {"soc": False, "platform": False, "max_cycles": False})
        soc = tgt.get("soc", "vexriscv")
        if soc not in target_names():
            raise self.fail(f"'target.soc' must be one of {', '.join(target_names())}, got {soc!r}")
        platform = None
        if "platform" in tgt:
            packaged = tgt["platform"] in platform_names()
            if packaged and not (self.root / tgt["platform"]).exists():
                platform = Path(tgt["platform"])  # a packaged variant, by name
            else:
                platform = self.file(tgt["platform"], "target.platform", (".toml",))
        max_cycles = int(
            self.number(tgt, "max_cycles", "target.max_cycles", 50_000_000, integer=True, low=1)
        )

        regions: dict[int, str] = {}
        raw_regions = doc.get("regions", {})
        if not isinstance(raw_regions, dict):
            raise self.fail("'regions' must be a table of id = \"label\"")
        for k, v in raw_regions.items():
            try:
                rid = int(k, 0)
            except ValueError:
                raise self.fail(f"'regions': key '{k}' is not a region id (an integer)") from None
            if not 0 <= rid < 1 << 31:
                raise self.fail(f"'regions': id {rid} is out of range")
            if not isinstance(v, str) or not v:
                raise self.fail(f"'regions.{k}' must be a non-empty label")
            regions[rid] = v

        return Project(
            path=self.path.resolve(),
            name=name,
            spec=spec,
            clock_ns=clock,
            cosim_cases=cosim,
            sources=tuple(sources),
            match=tuple(match),
            functions=tuple(fn_names) if fn_names else None,
            entry=entry,
            opt=opt,
            defines=dict(defines),
            soc=soc,
            platform=platform,
            max_cycles=max_cycles,
            regions=regions,
            area_budget=budget,
            isaxs=tuple(isaxs) if isaxs is not None else None,
        )
