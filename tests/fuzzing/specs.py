"""Grammar-directed random ``.isax`` specs: valid programs and hostile mutations.

Valid programs are built with their types tracked (docs/spec-language.md: no implicit
conversions, literals take their context's type), so most of them pass ``aquas check`` and
go on to synthesis. Mutations start from a valid program or a template and break it the way
a careless or hostile user would.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fuzzing.cases import Case, case_rng

KEYWORDS = frozenset(
    "extension state scratchpad partition isax let var if else for in step return mem burst "
    "select sext zext trunc as".split()
)


@dataclass(frozen=True)
class Ty:
    width: int
    signed: bool

    def __str__(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.width}"


U1 = Ty(1, False)
U32 = Ty(32, False)
# Odd widths on purpose: the hardware generator and the golden model must agree on them.
WIDTHS = (1, 2, 3, 5, 7, 8, 9, 12, 13, 16, 17, 24, 31, 32, 33, 47, 63, 64)
ELEM_WIDTHS = (8, 16, 32, 64)  # burst element widths the language allows


@dataclass
class Spm:
    name: str
    ty: Ty
    size: int


@dataclass
class _Scope:
    values: dict[str, Ty] = field(default_factory=dict)  # readable names
    mutable: set[str] = field(default_factory=set)


class SpecGen:
    """Builds one valid spec; ``size`` scales statement counts and nesting."""

    def __init__(self, rng: random.Random, size: int = 1):
        self.r = rng
        self.size = size
        self.counter = 0
        self.states: dict[str, Ty] = {}
        self.spms: list[Spm] = []
        self.scopes: list[_Scope] = []
        self.params: list[str] = []
        self.loop_depth = 0

    # -- names and types -------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def ty(self) -> Ty:
        return Ty(self.r.choice(WIDTHS), self.r.random() < 0.4)

    def env(self) -> dict[str, Ty]:
        out: dict[str, Ty] = {p: U32 for p in self.params}
        out.update(self.states)
        for s in self.scopes:
            out.update(s.values)
        return out

    def literal(self, ty: Ty) -> str:
        r = self.r
        mx = (1 << ty.width) - 1
        v = r.choice([0, 1, mx, mx >> 1, r.randint(0, mx)])
        form = r.random()
        if form < 0.4:
            return f"{v:#x}{ty}"
        if form < 0.5 and ty.width <= 16:
            return f"{v:#b}{ty}"
        if ty.signed and v > mx >> 1:
            return f"{v:#x}{ty}"  # hex may fill the sign bit; decimal may not
        return f"{v}{ty}"

    # -- expressions -----------------------------------------------------------------
    def expr(self, ty: Ty, depth: int) -> str:
        r = self.r
        env = self.env()
        same = [n for n, t in env.items() if t == ty]
        if depth <= 0 or r.random() < 0.15:
            if same and r.random() < 0.7:
                return r.choice(same)
            return self.literal(ty)
        choices: list[Callable[[Ty, int], str]] = [
            self.e_arith,
            self.e_arith,
            self.e_shift,
            self.e_unary,
            self.e_select,
            self.e_conv,
        ]
        if not ty.signed:
            choices += [self.e_slice, self.e_concat]
        if ty == U1:
            choices += [self.e_cmp, self.e_cmp, self.e_logic, self.e_bit]
        if any(s.ty == ty for s in self.spms):
            choices.append(self.e_spm)
        if ty.width in ELEM_WIDTHS and self.params:
            choices.append(self.e_load)
        return r.choice(choices)(ty, depth - 1)

    def e_arith(self, ty: Ty, d: int) -> str:
        op = self.r.choice("+-*/%&|^")
        rhs = self.expr(ty, d)
        if self.r.random() < 0.2:  # an untyped literal adopts the other operand's type
            rhs = str(self.r.randint(0, min((1 << ty.width) - 1, 100) >> (1 if ty.signed else 0)))
        return f"({self.expr(ty, d)} {op} {rhs})"

    def e_shift(self, ty: Ty, d: int) -> str:
        amt = (
            str(self.r.randint(0, ty.width + 2))
            if self.r.random() < 0.5
            else self.expr(Ty(self.r.choice(WIDTHS), False), d)
        )
        return f"({self.expr(ty, d)} {self.r.choice(['<<', '>>'])} {amt})"

    def e_unary(self, ty: Ty, d: int) -> str:
        return f"({self.r.choice('-~')}{self.expr(ty, d)})"

    def e_select(self, ty: Ty, d: int) -> str:
        c, a, b = self.expr(U1, d), self.expr(ty, d), self.expr(ty, d)
        if self.r.random() < 0.5:
            return f"({c} ? {a} : {b})"
        return f"select({c}, {a}, {b})"

    def e_conv(self, ty: Ty, d: int) -> str:
        src = self.ty()
        inner = self.expr(src, d)
        if src.width < ty.width:
            return f"{self.r.choice(['sext', 'zext'])}<{ty}>({inner})"
        if src.width > ty.width:
            return f"trunc<{ty}>({inner})"
        if src.signed != ty.signed:
            return f"({inner} as {ty})"
        return inner

    def e_slice(self, ty: Ty, d: int) -> str:
        if ty.width == 64:
            return self.e_arith(ty, d)
        base = Ty(self.r.randint(ty.width + 1, 64), self.r.random() < 0.3)
        lo = self.r.randint(0, base.width - ty.width)
        return f"({self.expr(base, d)})[{lo + ty.width - 1}:{lo}]"

    def e_concat(self, ty: Ty, d: int) -> str:
        if ty.width < 2:
            return self.e_arith(ty, d)
        cut = self.r.randint(1, ty.width - 1)
        hi, lo = Ty(cut, self.r.random() < 0.3), Ty(ty.width - cut, self.r.random() < 0.3)
        return f"{{{self.expr(hi, d)}, {self.expr(lo, d)}}}"

    def e_cmp(self, ty: Ty, d: int) -> str:
        t = self.ty()
        op = self.r.choice(["==", "!=", "<", "<=", ">", ">="])
        return f"({self.expr(t, d)} {op} {self.expr(t, d)})"

    def e_logic(self, ty: Ty, d: int) -> str:
        if self.r.random() < 0.3:
            return f"(!{self.expr(U1, d)})"
        return f"({self.expr(U1, d)} {self.r.choice(['&&', '||'])} {self.expr(U1, d)})"

    def e_bit(self, ty: Ty, d: int) -> str:
        base = self.ty()
        if self.r.random() < 0.5:
            return f"({self.expr(base, d)})[{self.r.randint(0, base.width - 1)}]"
        return f"({self.expr(base, d)})[{self.expr(Ty(self.r.choice(WIDTHS), False), d)}]"

    def index(self, spm: Spm, d: int) -> str:
        loops = [n for n, t in self.env().items() if n.startswith("i") and t == U32]
        if loops and self.r.random() < 0.6:
            return f"({self.r.choice(loops)} % {spm.size})"
        if self.r.random() < 0.5:
            return str(self.r.randint(0, spm.size - 1))
        return f"({self.expr(U32, d)} % {spm.size})"

    def e_spm(self, ty: Ty, d: int) -> str:
        spm = self.r.choice([s for s in self.spms if s.ty == ty])
        return f"{spm.name}[{self.index(spm, d)}]"

    def address(self, width: int) -> str:
        off = self.r.randint(0, 16) * (width // 8)
        return f"{self.r.choice(self.params)} + {off}" if off else self.r.choice(self.params)

    def e_load(self, ty: Ty, d: int) -> str:
        return f"mem<{ty}>[{self.address(ty.width)}]"

    # -- statements ------------------------------------------------------------------
    def block(self, n: int, depth: int, ind: str) -> list[str]:
        self.scopes.append(_Scope())
        lines: list[str] = []
        for _ in range(n):
            lines += self.stmt(depth, ind)
        self.scopes.pop()
        return lines

    def stmt(self, depth: int, ind: str) -> list[str]:
        r = self.r
        kinds = ["let", "let", "var", "assign"]
        if depth > 0:
            kinds += ["if", "for"]
        if self.spms:
            kinds += ["spm_write"]
            if self.params and self.loop_depth == 0:
                kinds += ["burst"]
        if self.states:
            kinds.append("state")
        if self.params:
            kinds.append("store")
        k = r.choice(kinds)
        sc = self.scopes[-1]
        ed = r.randint(1, 3)
        if k in ("let", "var"):
            ty = self.ty()
            name = self.fresh("v" if k == "var" else "t")
            annot = f": {ty}" if r.random() < 0.8 else ""
            rhs = self.expr(ty, ed)
            if not annot and re.fullmatch(r"-?\d+", rhs):
                annot = f": {ty}"
            sc.values[name] = ty
            if k == "var":
                sc.mutable.add(name)
            return [f"{ind}{k} {name}{annot} = {rhs};"]
        if k == "assign":
            muts = [(n, t) for s in self.scopes for n, t in s.values.items() if n in s.mutable]
            if not muts:
                return self.stmt(0, ind)
            n, t = r.choice(muts)
            op = r.choice(["=", "+=", "-=", "*=", "&=", "|=", "^=", "<<=", ">>="])
            rhs = (
                self.expr(Ty(r.choice(WIDTHS), False), ed)
                if op in ("<<=", ">>=")
                else self.expr(t, ed)
            )
            return [f"{ind}{n} {op} {rhs};"]
        if k == "state":
            n, t = r.choice(list(self.states.items()))
            return [f"{ind}{n} {r.choice(['=', '+=', '^='])} {self.expr(t, ed)};"]
        if k == "spm_write":
            spm = r.choice(self.spms)
            op = r.choice(["=", "=", "+="])
            return [f"{ind}{spm.name}[{self.index(spm, 1)}] {op} {self.expr(spm.ty, ed)};"]
        if k == "store":
            w = r.choice(ELEM_WIDTHS)
            t = Ty(w, r.random() < 0.3)
            return [f"{ind}mem<{t}>[{self.address(w)}] = {self.expr(t, ed)};"]
        if k == "burst":
            spm = r.choice(self.spms)
            beats = r.randint(1, spm.size)
            off = r.randint(0, spm.size - beats)
            if r.random() < 0.5:
                return [
                    f"{ind}burst {spm.name}[{off} +: {beats}] <- mem[{self.address(spm.ty.width)}];"
                ]
            return [
                f"{ind}burst mem[{self.address(spm.ty.width)}] <- {spm.name}[{off} +: {beats}];"
            ]
        if k == "if":
            out = [f"{ind}if {self.expr(U1, ed)} {{"]
            out += self.block(r.randint(1, 3), depth - 1, ind + "    ")
            if r.random() < 0.5:
                out += [f"{ind}}} else {{"]
                out += self.block(r.randint(1, 3), depth - 1, ind + "    ")
            return [*out, f"{ind}}}"]
        # for
        lo = r.randint(0, 4)
        hi = lo + r.randint(0, 12)
        step = r.choice([1, 1, 1, 2, 3])
        trips = len(range(lo, hi, step))
        factors = [f for f in (2, 3, 4) if f <= trips]
        attr = r.choice(["", "#[unroll]", *(f"#[unroll({f})]" for f in factors)])
        var = self.fresh("i")
        head = f"{ind}for {var} in {lo}..{hi}" + (f" step {step}" if step != 1 else "")
        out = [f"{ind}{attr}"] if attr else []
        out.append(head + " {")
        self.scopes.append(_Scope({var: U32}))
        self.loop_depth += 1
        out += self.block(r.randint(1, 3), depth - 1, ind + "    ")
        self.loop_depth -= 1
        self.scopes.pop()
        return [*out, f"{ind}}}"]

    # -- whole spec ------------------------------------------------------------------
    def spec(self) -> str:
        r = self.r
        lines = [f"// generated spec, size {self.size}"]
        if r.random() < 0.8:
            lines.append(f"extension {self.fresh('ext')};")
        for _ in range(r.randint(0, 3)):
            ty, name = self.ty(), self.fresh("st")
            # a reset value is a plain constant: an untyped literal that fits the type
            init = (
                f" = {r.randint(0, (1 << (ty.width - ty.signed)) - 1)}" if r.random() < 0.5 else ""
            )
            lines.append(f"state {name}: {ty}{init};")
            self.states[name] = ty
        for _ in range(r.randint(0, 3)):
            ty = Ty(r.choice(ELEM_WIDTHS), r.random() < 0.3)
            size = r.choice([1, 2, 3, 4, 7, 8, 16, 23, 32])
            spm = Spm(self.fresh("buf"), ty, size)
            part = ""
            if r.random() < 0.5:
                part = f" partition({r.choice(['cyclic', 'block'])}, {r.randint(1, size)})"
            lines.append(f"scratchpad {spm.name}: [{ty}; {size}]{part};")
            self.spms.append(spm)
        funct7s = r.sample(range(128), r.randint(1, 3))
        for f7 in funct7s:
            self.params = r.choice([[], ["rs1"], ["rs2"], ["rs1", "rs2"], ["rs1", "rs2"]])
            has_rd = r.random() < 0.8
            opcode = r.choice(["custom0", "custom1", "custom2", "custom3", "0b0001011"])
            attrs = f"opcode({opcode}), funct7({f7})"
            if r.random() < 0.3:
                attrs += f", funct3({r.randint(0, 7)})"
            lines.append(f"#[{attrs}]")
            sig = f"isax {self.fresh('op')}({', '.join(self.params)})" + (
                " -> rd" if has_rd else ""
            )
            lines.append(sig + " {")
            self.scopes = [_Scope()]
            for _ in range(r.randint(1, 2 + 2 * self.size)):
                lines += self.stmt(min(2, self.size), "    ")
            if has_rd:
                lines.append(f"    return {self.expr(Ty(32, r.random() < 0.3), 3)};")
            elif len(lines) and not any(
                ln.startswith("    ") for ln in lines[-1:]
            ):  # an empty body is legal, keep one statement anyway
                lines.append("    let z: u1 = 0;")
            lines.append("}")
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------------------

TOKEN_RE = re.compile(
    r"0[xXbB][0-9a-fA-F_]+(?:[ui]\d+)?|\d[\d_]*(?:[ui]\d+)?|[A-Za-z_]\w*|\+:|<-|->|\.\.|"
    r"<<=|>>=|[-+*&|^]=|==|!=|<=|>=|<<|>>|&&|\|\||#\[|\S"
)
SOUP = (
    "extension state scratchpad partition isax let var if else for in step return mem burst "
    "select sext zext trunc as cyclic block unroll opcode funct3 funct7 custom0 rs1 rs2 rd "
    "u0 u1 u65 i128 bool 0 -1 0xff 3u8 + - * / % << >> == ? : ; , .. +: <- -> = += "
    "( ) [ ] { } #[ #"
).split()


def _tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in TOKEN_RE.finditer(text)]


def mutate_tokens(r: random.Random, text: str, how: str, soup: list[str] = SOUP) -> str:
    """``text`` with one to three tokens deleted, duplicated, inserted (from ``soup``) or
    swapped."""
    spans = _tokens(text)
    if not spans:
        return text + r.choice(soup)
    for _ in range(r.randint(1, 3)):
        spans = _tokens(text) or [(0, 0)]
        a, b = r.choice(spans)
        if how == "delete":
            text = text[:a] + text[b:]
        elif how == "duplicate":
            text = text[:a] + text[a:b] + " " + text[a:]
        elif how == "insert":
            text = text[:a] + r.choice(soup) + " " + text[a:]
        else:  # swap with another token
            c, d = r.choice(spans)
            if (a, b) > (c, d):
                a, b, c, d = c, d, a, b
            if b <= c:
                text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    return text


def _skeleton(body: str, decls: str = "", attrs: str = "opcode(custom0), funct7(3)") -> str:
    return f"extension fz;\n{decls}#[{attrs}]\nisax k(rs1, rs2) -> rd {{\n{body}\n}}\n"


def hostile(r: random.Random) -> tuple[str, str | bytes]:
    """One hostile spec: (family, text)."""
    pick = r.randrange(24)
    n = r.choice([10, 100, 1000])
    if pick == 0:
        digits = r.choice([400, 5000, 20000])
        return "huge_literal", _skeleton(f"    let a: u32 = {'9' * digits};\n    return a;")
    if pick == 1:
        sh = r.choice([64, 100000, 10**9])
        return "huge_shift", _skeleton(f"    let a: u32 = (1 << {sh}) >> {sh};\n    return a;")
    if pick == 2:
        hi = r.choice([10**6, 2**32, 10**30])
        return "huge_loop", _skeleton(
            f"    var a: u32 = 0;\n    #[unroll]\n    for i in 0..{hi} {{ a += i; }}\n    return a;"
        )
    if pick == 3:
        return "huge_nested_loops", _skeleton(
            "    var a: u32 = 0;\n    #[unroll]\n    for i in 0..1000 {\n"
            "        for j in 0..1000 { a += i ^ j; }\n    }\n    return a;"
        )
    if pick == 4:
        size = r.choice([65536, 2**20, 2**32, 10**12])
        return "huge_scratchpad", _skeleton(
            "    buf[rs1 % 7] = rs2;\n    return buf[rs2 % 5];", f"scratchpad buf: [u32; {size}];\n"
        )
    if pick == 5:
        beats = r.choice([257, 300, 4096, 2**20])
        return "huge_burst", _skeleton(
            f"    burst buf[0 +: {beats}] <- mem[rs1];\n    return buf[0];",
            f"scratchpad buf: [u32; {beats}];\n",
        )
    if pick == 6:
        body = "".join(f"    burst buf[0 +: 4] <- mem[rs1 + {16 * k}];\n" for k in range(n))
        return "many_bursts", _skeleton(body + "    return buf[1];", "scratchpad buf: [u32; 4];\n")
    if pick == 7:
        name = "x" * r.choice([120, 251, 300, 5000])
        text = _skeleton("    return rs1;").replace("isax k(", f"isax {name}(")
        if r.random() < 0.5:
            text = text.replace("extension fz;", f"extension {name}e;")
        return "long_name", text
    if pick == 8:
        return "duplicate_attribute", _skeleton(
            "    return rs1 + rs2;",
            attrs=r.choice(
                [
                    "opcode(custom0), funct7(0), funct7(1)",
                    "opcode(custom0), opcode(custom1), funct7(2)",
                    "opcode(custom0), funct7(2), funct3(1), funct3(2)",
                    "opcode(custom0), funct7(2), bogus(1)",
                ]
            ),
        )
    if pick == 9:
        return "duplicate_encoding", (
            "#[opcode(custom0), funct7(1)]\nisax a(rs1) -> rd { return rs1; }\n"
            "#[opcode(custom0), funct7(1)]\nisax b(rs1) -> rd { return rs1; }\n"
        )
    if pick == 10:
        uni = r.choice(
            ["é", "变量", "\u202e", "\U0001f600", "\x00", "\ufeff", "\uff4c\uff45\uff54", "\u200b"]
        )
        return "unicode", _skeleton(f"    let a{uni}: u32 = rs1; // {uni}\n    return a{uni};")
    if pick == 11:
        raw = _skeleton("    let a: u32 = rs1;\n    return a;").encode()
        pos = r.randrange(len(raw))
        return "non_utf8", raw[:pos] + r.choice(
            [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xfe\xfe"]
        ) + raw[pos:]
    if pick == 12:
        d = r.choice([100, 1000, 20000])
        return "deep_parens", _skeleton(f"    let a: u32 = {'(' * d}rs1{')' * d};\n    return a;")
    if pick == 13:
        d = r.choice([50, 500, 5000])
        return "deep_ifs", _skeleton(
            "    var a: u32 = 0;\n"
            + "    if rs1 != 0 {\n" * d
            + "    a += 1;\n"
            + "    }\n" * d
            + "    return a;"
        )
    if pick == 14:
        d = r.choice([20, 60, 200])
        body = "".join(f"for i{k} in 0..2 {{\n" for k in range(d)) + "a += 1;\n" + "}\n" * d
        return "deep_loops", _skeleton(f"    var a: u32 = 0;\n{body}    return a;")
    if pick == 15:
        expr = " + ".join(["rs1"] * r.choice([1000, 20000]))
        return "long_expression", _skeleton(f"    let a: u32 = {expr};\n    return a;")
    if pick == 16:
        w = r.choice(["u0", "u65", "i128", "u99999999999999999999", "bool", "U32", "u032"])
        return "bad_width", _skeleton(f"    let a: {w} = 0;\n    return rs1;")
    if pick == 17:
        return "empty", r.choice(
            ["", "\n", "// nothing\n", "/* open comment", "\ufeff", "extension;"]
        )
    if pick == 18:
        part = r.choice(
            [
                "cyclic, 0",
                "cyclic, 1000",
                "block, 3",
                "diagonal, 2",
                "cyclic, -1",
                "cyclic, 99999999999999999999",
            ]
        )
        return "bad_partition", _skeleton(
            "    buf[1] = rs1;\n    return buf[0];",
            f"scratchpad buf: [u32; 8] partition({part});\n",
        )
    if pick == 19:
        val = r.choice(["-1", "8", "128", "999999999999", "custom4", "0b1111111", "0x0B"])
        which = r.choice(["funct3", "funct7", "opcode"])
        attrs = {
            "funct3": f"opcode(custom0), funct7(1), funct3({val})",
            "funct7": f"opcode(custom0), funct7({val})",
            "opcode": f"opcode({val}), funct7(1)",
        }[which]
        return "bad_encoding", _skeleton("    return rs1;", attrs=attrs)
    if pick == 20:
        step = r.choice(["0", "-1", "4294967296", "rs1"])
        return "bad_loop", _skeleton(
            f"    var a: u32 = 0;\n    for i in 0..8 step {step} {{ a += i; }}\n    return a;"
        )
    if pick == 21:
        many = "".join(
            f"#[opcode(custom{k % 4}), funct7({k // 4 % 128}), funct3({k // 512 % 8})]\n"
            f"isax f{k}(rs1) -> rd {{ return rs1 + {k}; }}\n"
            for k in range(n)
        )
        return "many_isaxes", many
    if pick == 22:
        states = "".join(f"state s{k}: u64 = {k};\n" for k in range(n))
        return "many_states", _skeleton("    s0 += 1;\n    return trunc<u32>(s0);", states)
    off = r.choice(["-1", "4294967295", "9", "rs1"])
    return "bad_burst", _skeleton(
        f"    burst buf[{off} +: 4] <- mem[rs1];\n    return buf[0];", "scratchpad buf: [u32; 8];\n"
    )


def generate(seed: int, index: int) -> Case:
    """Case ``index`` of the spec stream ``seed``: 70% valid, 15% token mutants, 15% hostile."""
    r = case_rng("spec", seed, index)
    roll = r.random()
    valid = False
    if roll < 0.70:
        family, text = "valid", SpecGen(r, r.choice([1, 1, 2, 3])).spec()
        data: bytes = text.encode()
        valid = True
    elif roll < 0.85:
        how = r.choice(["delete", "duplicate", "insert", "swap"])
        base = SpecGen(r, 1).spec()
        family, data = f"mutant_{how}", mutate_tokens(r, base, how).encode()
    else:
        family, body = hostile(r)
        data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    return Case("spec", family, seed, index, "fuzz.isax", {"fuzz.isax": data}, valid=valid)


__all__ = ["SpecGen", "generate", "hostile", "mutate_tokens"]
