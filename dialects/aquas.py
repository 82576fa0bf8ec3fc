"""The ``aquas`` dialect: RISC-V custom instructions (ISAXs) and their interfaces.

One ``aquas.extension`` holds the ISAX-private state (``aquas.state`` registers and
``aquas.scratchpad`` arrays) and the ISAXs (``aquas.isax``) of one spec file. Inside an ISAX
body, plain computation uses the standard ``arith`` and ``scf`` dialects on *signless*
integers (signedness lives in the op, as in MLIR: ``divsi``/``divui``, ``extsi``/``extui``);
this dialect only adds what standard dialects cannot say:

* register operands and the result: ``aquas.rs1``, ``aquas.rs2``, ``aquas.write_rd``;
* single-shot accesses to the core's memory: ``aquas.load``, ``aquas.store``;
* burst transfers between the core's memory and a scratchpad: ``aquas.burst_read``,
  ``aquas.burst_write``;
* scratchpad and state accesses: ``aquas.spm_read``/``aquas.spm_write``,
  ``aquas.state_read``/``aquas.state_write``.

All addresses and scratchpad indices are ``i32`` (RV32).  Addresses are byte addresses;
memory is little-endian.  The dialect is data plus verifiers; flow logic lives elsewhere.
``docs/dialect.md`` documents every op.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I32,
    I64,
    ArrayAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from aquas.dialects import compat

# RISC-V major opcodes reserved for custom extensions (custom-0 .. custom-3).
CUSTOM_OPCODES: dict[str, int] = {
    "custom0": 0b0001011,
    "custom1": 0b0101011,
    "custom2": 0b1011011,
    "custom3": 0b1111011,
}
MEMORY_ACCESS_WIDTHS = (8, 16, 32, 64)
MAX_INT_WIDTH = 64
REGISTERS = ("rs1", "rs2", "rd")


def _int_width(t: Attribute) -> int:
    if not isinstance(t, IntegerType):
        raise VerifyException(f"expected an integer type, got {t}")
    return t.width.data


def _check_signless(t: Attribute, what: str) -> int:
    w = _int_width(t)
    if not t.signedness.data.name == "SIGNLESS":  # type: ignore[attr-defined]
        raise VerifyException(f"{what} must be a signless integer, got {t}")
    if not 1 <= w <= MAX_INT_WIDTH:
        raise VerifyException(f"{what} width must be 1..{MAX_INT_WIDTH}, got {w}")
    return w


def constant_value(v: SSAValue) -> int | None:
    """The integer value of ``v`` when it is defined by ``arith.constant``."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return int(owner.value.value.data)
    return None


def scratchpad_of(op: Operation) -> ScratchpadOp:
    """The scratchpad an op with a ``scratchpad`` symbol (burst, element read/write) names,
    looked up in its extension."""
    sym = op.scratchpad  # type: ignore[attr-defined]
    ext = op.parent_op()
    while ext is not None and not isinstance(ext, ExtensionOp):
        ext = ext.parent_op()
    assert ext is not None
    for p in ext.scratchpads():
        if p.sym_name.data == sym.root_reference.data:
            return p
    raise KeyError(sym)


def _enclosing(op: Operation, kind: type[IRDLOperation]) -> IRDLOperation | None:
    p = op.parent_op()
    while p is not None and not isinstance(p, kind):
        p = p.parent_op()
    return p


def _lookup(op: Operation, sym: SymbolRefAttr) -> Operation | None:
    ext = _enclosing(op, ExtensionOp)
    if ext is None:
        return None
    return SymbolTable.lookup_symbol(ext, sym)


# ---------------------------------------------------------------------------------------
# Declarations
# ---------------------------------------------------------------------------------------


@irdl_op_definition
class ExtensionOp(IRDLOperation):
    """An ISA extension: the ISAXs of one spec file and the state they share."""

    name = "aquas.extension"

    sym_name = prop_def(SymbolNameConstraint())
    body = region_def("single_block")

    traits = traits_def(SymbolOpInterface(), SymbolTable(), NoTerminator(), IsolatedFromAbove())

    assembly_format = "$sym_name attr-dict-with-keyword $body"

    def __init__(self, name: str, ops: list[Operation] | None = None):
        super().__init__(
            properties={"sym_name": StringAttr(name)},
            regions=[Region(Block(ops or []))],
        )

    def isaxs(self) -> Iterator[IsaxOp]:
        yield from (o for o in self.body.block.ops if isinstance(o, IsaxOp))

    def states(self) -> Iterator[StateOp]:
        yield from (o for o in self.body.block.ops if isinstance(o, StateOp))

    def scratchpads(self) -> Iterator[ScratchpadOp]:
        yield from (o for o in self.body.block.ops if isinstance(o, ScratchpadOp))

    def verify_(self) -> None:
        seen: dict[tuple[int, int, int], str] = {}
        for isax in self.isaxs():
            key = (isax.opcode_value, isax.funct3_value, isax.funct7_value)
            if key in seen:
                raise VerifyException(
                    f"ISAX @{isax.sym_name.data} has the same encoding "
                    f"(opcode={key[0]:#09b}, funct3={key[1]}, funct7={key[2]:#09b}) "
                    f"as @{seen[key]}"
                )
            seen[key] = isax.sym_name.data
        for op in self.body.block.ops:
            if not isinstance(op, IsaxOp | StateOp | ScratchpadOp):
                raise VerifyException(
                    f"aquas.extension may only contain aquas.isax, aquas.state and "
                    f"aquas.scratchpad, found {op.name}"
                )


@irdl_op_definition
class StateOp(IRDLOperation):
    """A persistent ISAX-private register with a reset value."""

    name = "aquas.state"

    sym_name = prop_def(SymbolNameConstraint())
    init = prop_def(IntegerAttr)

    traits = traits_def(SymbolOpInterface(), HasParent(ExtensionOp))

    assembly_format = "$sym_name `=` $init attr-dict"

    def __init__(self, name: str, width: int, init: int = 0):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "init": IntegerAttr(init, IntegerType(width)),
            }
        )

    @property
    def width(self) -> int:
        return _int_width(self.init.type)

    def verify_(self) -> None:
        w = _check_signless(self.init.type, "state type")
        v = int(self.init.value.data)
        if not -(1 << (w - 1)) <= v < (1 << w):
            raise VerifyException(f"state init {v} does not fit i{w}")


PARTITION_KINDS = ("none", "cyclic", "block")
#: How a scratchpad is built: ``auto`` picks SRAM when a bank holds more than
#: ``SRAM_AUTO_WORDS`` elements, registers otherwise (docs/synthesis.md).
SPM_IMPLS = ("auto", "sram", "regs")
SRAM_AUTO_WORDS = 64
#: Ports of an SRAM bank: 1RW or 2RW.
SRAM_PORTS = (1, 2)


@irdl_op_definition
class ScratchpadOp(IRDLOperation):
    """An ISAX-private on-chip array, optionally partitioned into banks.

    ``cyclic``: element ``k`` lives in bank ``k % factor`` at row ``k / factor``.
    ``block``: element ``k`` lives in bank ``k / ceil(size / factor)``.
    Contents persist across ISAX invocations and are zero at reset.

    ``impl`` (an attribute, absent = ``auto``) says how synthesis builds the banks: ``regs``
    (flip-flops, combinational reads), ``sram`` (memories with a registered read port,
    ``ports`` of them per bank: 1RW or 2RW), or ``auto`` (SRAM when a bank holds more than
    ``SRAM_AUTO_WORDS`` elements). The golden semantics do not depend on it.
    """

    name = "aquas.scratchpad"

    sym_name = prop_def(SymbolNameConstraint())
    memref = prop_def(MemRefType)
    partition = prop_def(StringAttr)
    factor = prop_def(IntegerAttr[I64])
    impl = opt_attr_def(StringAttr)
    ports = opt_attr_def(IntegerAttr[I64])

    traits = traits_def(SymbolOpInterface(), HasParent(ExtensionOp))

    assembly_format = "$sym_name `:` $memref `partition` $partition $factor attr-dict"

    def __init__(self, name: str, width: int, size: int, partition: str = "none", factor: int = 1):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "memref": MemRefType(IntegerType(width), [size]),
                "partition": StringAttr(partition),
                "factor": IntegerAttr(factor, i64),
            }
        )

    @property
    def size(self) -> int:
        return int(self.memref.get_shape()[0])

    @property
    def width(self) -> int:
        return _int_width(self.memref.get_element_type())

    @property
    def factor_value(self) -> int:
        return int(self.factor.value.data)

    @property
    def impl_value(self) -> str:
        """The spec's directive: ``auto`` (the default), ``sram`` or ``regs``."""
        return self.impl.data if self.impl is not None else "auto"

    @property
    def ports_value(self) -> int:
        """SRAM ports per bank (1 unless the spec asks for 2RW)."""
        return int(self.ports.value.data) if self.ports is not None else 1

    @property
    def bank_words(self) -> int:
        """Elements of the largest bank."""
        return -(-self.size // self.factor_value)

    def set_impl(self, impl: str, ports: int = 1) -> None:
        """Sets the directive; the defaults (``auto``, 1 port) leave no attribute, so specs
        without the directive print as before."""
        self.attributes.pop("impl", None)
        self.attributes.pop("ports", None)
        if impl != "auto":
            self.attributes["impl"] = StringAttr(impl)
        if ports != 1:
            self.attributes["ports"] = IntegerAttr(ports, i64)

    def verify_(self) -> None:
        if self.impl_value not in SPM_IMPLS:
            raise VerifyException(
                f"impl must be one of {', '.join(SPM_IMPLS)}, got {self.impl_value!r}"
            )
        if self.ports_value not in SRAM_PORTS:
            raise VerifyException(f"SRAM ports must be 1 or 2, got {self.ports_value}")
        shape = self.memref.get_shape()
        if len(shape) != 1 or shape[0] <= 0:
            raise VerifyException("scratchpad must be a 1-D memref with a positive size")
        _check_signless(self.memref.get_element_type(), "scratchpad element type")
        if self.partition.data not in PARTITION_KINDS:
            raise VerifyException(
                f"partition must be one of {', '.join(PARTITION_KINDS)}, "
                f"got {self.partition.data!r}"
            )
        f = self.factor_value
        if f < 1 or f > shape[0]:
            raise VerifyException(f"partition factor must be in 1..{shape[0]}, got {f}")
        if self.partition.data == "none" and f != 1:
            raise VerifyException("an unpartitioned scratchpad must have factor 1")


@irdl_op_definition
class IsaxOp(IRDLOperation):
    """One custom instruction: its R-type encoding and its body.

    ``uses`` lists which of ``rs1``, ``rs2`` and ``rd`` the instruction reads or writes.
    The body is a single block without terminator; when ``rd`` is used, its last
    top-level op is ``aquas.write_rd``.
    """

    name = "aquas.isax"

    sym_name = prop_def(SymbolNameConstraint())
    opcode = prop_def(IntegerAttr[I32])
    funct3 = prop_def(IntegerAttr[I32])
    funct7 = prop_def(IntegerAttr[I32])
    uses = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")

    traits = traits_def(
        SymbolOpInterface(), HasParent(ExtensionOp), NoTerminator(), IsolatedFromAbove()
    )

    assembly_format = (
        "$sym_name `opcode` $opcode `funct3` $funct3 `funct7` $funct7 `uses` $uses "
        "attr-dict-with-keyword $body"
    )

    def __init__(
        self,
        name: str,
        opcode: int,
        funct3: int,
        funct7: int,
        uses: list[str],
        ops: list[Operation] | None = None,
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "opcode": IntegerAttr(opcode, i32),
                "funct3": IntegerAttr(funct3, i32),
                "funct7": IntegerAttr(funct7, i32),
                "uses": ArrayAttr([StringAttr(u) for u in uses]),
            },
            regions=[Region(Block(ops or []))],
        )

    @property
    def opcode_value(self) -> int:
        return int(self.opcode.value.data)

    @property
    def funct3_value(self) -> int:
        return int(self.funct3.value.data)

    @property
    def funct7_value(self) -> int:
        return int(self.funct7.value.data)

    @property
    def used(self) -> tuple[str, ...]:
        return tuple(u.data for u in self.uses.data)

    def verify_(self) -> None:
        if self.opcode_value not in CUSTOM_OPCODES.values():
            raise VerifyException(
                f"opcode {self.opcode_value:#09b} is not a RISC-V custom opcode "
                "(custom0..custom3: 0b0001011, 0b0101011, 0b1011011, 0b1111011)"
            )
        if not 0 <= self.funct3_value < 8:
            raise VerifyException(f"funct3 must be in 0..7, got {self.funct3_value}")
        if not 0 <= self.funct7_value < 128:
            raise VerifyException(f"funct7 must be in 0..127, got {self.funct7_value}")
        used = self.used
        for u in used:
            if u not in REGISTERS:
                raise VerifyException(f"uses may only name rs1, rs2, rd; got {u!r}")
        if len(set(used)) != len(used):
            raise VerifyException("uses lists a register twice")
        for op in self.body.walk():
            if isinstance(op, ReadRs1Op | ReadRs2Op) and op.REG not in used:
                raise VerifyException(f"{op.name} in an ISAX that does not use {op.REG}")
        writes = [op for op in self.body.walk() if isinstance(op, WriteRdOp)]
        if "rd" in used:
            last = self.body.block.last_op
            if len(writes) != 1 or last is not writes[0]:
                raise VerifyException(
                    "an ISAX that uses rd must end with exactly one top-level aquas.write_rd"
                )
        elif writes:
            raise VerifyException("aquas.write_rd in an ISAX that does not use rd")


# ---------------------------------------------------------------------------------------
# Register operands and result
# ---------------------------------------------------------------------------------------


class _ReadRegOp(IRDLOperation):
    REG: ClassVar[str]
    result = result_def(I32)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[i32])


@irdl_op_definition
class ReadRs1Op(_ReadRegOp):
    """The 32-bit value of source register rs1."""

    name = "aquas.rs1"
    REG: ClassVar[str] = "rs1"


@irdl_op_definition
class ReadRs2Op(_ReadRegOp):
    """The 32-bit value of source register rs2."""

    name = "aquas.rs2"
    REG: ClassVar[str] = "rs2"


@irdl_op_definition
class WriteRdOp(IRDLOperation):
    """Writes the instruction's 32-bit result to rd."""

    name = "aquas.write_rd"
    value = operand_def(I32)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue | Operation):
        super().__init__(operands=[value])


# ---------------------------------------------------------------------------------------
# Single-shot memory access (through the core's memory interface)
# ---------------------------------------------------------------------------------------


def _check_access_width(t: Attribute) -> None:
    w = _int_width(t)
    if w not in MEMORY_ACCESS_WIDTHS:
        raise VerifyException(
            f"memory access width must be one of {MEMORY_ACCESS_WIDTHS}, got i{w}"
        )


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Loads one naturally aligned little-endian value from the core's memory."""

    name = "aquas.load"
    addr = operand_def(I32)
    result = result_def(IntegerType)
    traits = traits_def(MemoryReadEffect())
    assembly_format = "$addr attr-dict `:` type($result)"

    def __init__(self, addr: SSAValue | Operation, width: int):
        super().__init__(operands=[addr], result_types=[IntegerType(width)])

    def verify_(self) -> None:
        _check_access_width(self.result.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Stores one naturally aligned little-endian value to the core's memory."""

    name = "aquas.store"
    value = operand_def(IntegerType)
    addr = operand_def(I32)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$value `,` $addr attr-dict `:` type($value)"

    def __init__(self, value: SSAValue | Operation, addr: SSAValue | Operation):
        super().__init__(operands=[value, addr])

    def verify_(self) -> None:
        _check_access_width(self.value.type)


# ---------------------------------------------------------------------------------------
# Scratchpads and bursts
# ---------------------------------------------------------------------------------------


def _scratchpad(op: Operation, sym: SymbolRefAttr) -> ScratchpadOp:
    target = _lookup(op, sym)
    if target is None:
        raise VerifyException(f"{op.name}: no scratchpad named {sym}")
    if not isinstance(target, ScratchpadOp):
        raise VerifyException(f"{op.name}: {sym} is not an aquas.scratchpad")
    return target


def _state(op: Operation, sym: SymbolRefAttr) -> StateOp:
    target = _lookup(op, sym)
    if target is None:
        raise VerifyException(f"{op.name}: no state named {sym}")
    if not isinstance(target, StateOp):
        raise VerifyException(f"{op.name}: {sym} is not an aquas.state")
    return target


class _BurstOp(IRDLOperation):
    addr = operand_def(I32)
    offset = operand_def(I32)
    scratchpad = prop_def(SymbolRefAttr)
    length = prop_def(IntegerAttr[I64])
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self,
        scratchpad: str,
        offset: SSAValue | Operation,
        addr: SSAValue | Operation,
        length: int,
    ):
        super().__init__(
            operands=[addr, offset],
            properties={
                "scratchpad": SymbolRefAttr(scratchpad),
                "length": IntegerAttr(length, i64),
            },
        )

    @property
    def length_value(self) -> int:
        return int(self.length.value.data)

    def verify_(self) -> None:
        n = self.length_value
        if n <= 0:
            raise VerifyException(f"burst length must be positive, got {n}")
        spm = _scratchpad(self, self.scratchpad)
        if spm.width not in MEMORY_ACCESS_WIDTHS:
            raise VerifyException(
                f"bursts need scratchpad elements of 8, 16, 32 or 64 bits; "
                f"{self.scratchpad} has i{spm.width}"
            )
        off = constant_value(self.offset)
        if off is not None and not (off >= 0 and off + n <= spm.size):
            raise VerifyException(
                f"burst of {n} elements at offset {off} does not fit scratchpad "
                f"{self.scratchpad} of {spm.size} elements"
            )
        if n > spm.size:
            raise VerifyException(
                f"burst of {n} elements is longer than scratchpad {self.scratchpad} "
                f"({spm.size} elements)"
            )


@irdl_op_definition
class BurstReadOp(_BurstOp):
    """Copies ``length`` consecutive elements from memory at ``addr`` into the scratchpad
    starting at element ``offset``. Element size is the scratchpad's element width,
    rounded up to whole bytes."""

    name = "aquas.burst_read"
    assembly_format = "$addr `->` $scratchpad `[` $offset `]` `length` $length attr-dict"


@irdl_op_definition
class BurstWriteOp(_BurstOp):
    """Copies ``length`` consecutive scratchpad elements starting at ``offset`` to memory
    at ``addr``."""

    name = "aquas.burst_write"
    assembly_format = "$scratchpad `[` $offset `]` `->` $addr `length` $length attr-dict"


@irdl_op_definition
class SpmReadOp(IRDLOperation):
    """Reads element ``index`` of a scratchpad.

    With a predicate (``if %p``, made by ``aquas-pipeline-loops`` for a stage of a
    predicated kernel, never written in a spec) the read happens only when ``%p`` is true;
    its value is undefined otherwise (the golden interpreter gives 0), so ``index`` may
    then be out of bounds."""

    name = "aquas.spm_read"
    index = operand_def(I32)
    pred = opt_operand_def(IntegerType(1))
    scratchpad = prop_def(SymbolRefAttr)
    result = result_def(IntegerType)
    traits = traits_def(MemoryReadEffect())
    assembly_format = "$scratchpad `[` $index `]` (`if` $pred^)? attr-dict `:` type($result)"

    def __init__(
        self,
        scratchpad: str,
        index: SSAValue | Operation,
        width: int,
        pred: SSAValue | Operation | None = None,
    ):
        super().__init__(
            operands=[index, [] if pred is None else [pred]],
            properties={"scratchpad": SymbolRefAttr(scratchpad)},
            result_types=[IntegerType(width)],
        )

    def verify_(self) -> None:
        spm = _scratchpad(self, self.scratchpad)
        _verify_spm_access(self, spm, self.index, self.result.type, self.pred is not None)


@irdl_op_definition
class SpmWriteOp(IRDLOperation):
    """Writes element ``index`` of a scratchpad; with a predicate (``if %p``, as for
    ``aquas.spm_read``) only when ``%p`` is true."""

    name = "aquas.spm_write"
    value = operand_def(IntegerType)
    index = operand_def(I32)
    pred = opt_operand_def(IntegerType(1))
    scratchpad = prop_def(SymbolRefAttr)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$value `,` $scratchpad `[` $index `]` (`if` $pred^)? attr-dict `:` type($value)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        scratchpad: str,
        index: SSAValue | Operation,
        pred: SSAValue | Operation | None = None,
    ):
        super().__init__(
            operands=[value, index, [] if pred is None else [pred]],
            properties={"scratchpad": SymbolRefAttr(scratchpad)},
        )

    def verify_(self) -> None:
        spm = _scratchpad(self, self.scratchpad)
        _verify_spm_access(self, spm, self.index, self.value.type, self.pred is not None)


def _verify_spm_access(
    op: Operation, spm: ScratchpadOp, index: SSAValue, t: Attribute, predicated: bool
) -> None:
    if t != spm.memref.get_element_type():
        raise VerifyException(
            f"{op.name}: type {t} does not match scratchpad element type "
            f"{spm.memref.get_element_type()}"
        )
    idx = constant_value(index)
    # a predicated access may be out of bounds (its predicate is then false)
    if idx is not None and not 0 <= idx < spm.size and not predicated:
        raise VerifyException(
            f"{op.name}: index {idx} out of bounds for scratchpad @{spm.sym_name.data} "
            f"of {spm.size} elements"
        )


# ---------------------------------------------------------------------------------------
# State registers
# ---------------------------------------------------------------------------------------


@irdl_op_definition
class StateReadOp(IRDLOperation):
    """Reads a state register."""

    name = "aquas.state_read"
    state = prop_def(SymbolRefAttr)
    result = result_def(IntegerType)
    traits = traits_def(MemoryReadEffect())
    assembly_format = "$state attr-dict `:` type($result)"

    def __init__(self, state: str, width: int):
        super().__init__(
            properties={"state": SymbolRefAttr(state)}, result_types=[IntegerType(width)]
        )

    def verify_(self) -> None:
        st = _state(self, self.state)
        if self.result.type != st.init.type:
            raise VerifyException(
                f"aquas.state_read: type {self.result.type} does not match state type "
                f"{st.init.type}"
            )


@irdl_op_definition
class StateWriteOp(IRDLOperation):
    """Writes a state register; the new value is visible to later reads and persists
    across invocations. With a predicate (``if %p``, as for ``aquas.spm_read``) only when
    ``%p`` is true."""

    name = "aquas.state_write"
    value = operand_def(IntegerType)
    pred = opt_operand_def(IntegerType(1))
    state = prop_def(SymbolRefAttr)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$value `,` $state (`if` $pred^)? attr-dict `:` type($value)"

    def __init__(
        self, value: SSAValue | Operation, state: str, pred: SSAValue | Operation | None = None
    ):
        super().__init__(
            operands=[value, [] if pred is None else [pred]],
            properties={"state": SymbolRefAttr(state)},
        )

    def verify_(self) -> None:
        st = _state(self, self.state)
        if self.value.type != st.init.type:
            raise VerifyException(
                f"aquas.state_write: type {self.value.type} does not match state type "
                f"{st.init.type}"
            )


Aquas = Dialect(
    "aquas",
    [
        ExtensionOp,
        StateOp,
        ScratchpadOp,
        IsaxOp,
        ReadRs1Op,
        ReadRs2Op,
        WriteRdOp,
        LoadOp,
        StoreOp,
        BurstReadOp,
        BurstWriteOp,
        SpmReadOp,
        SpmWriteOp,
        StateReadOp,
        StateWriteOp,
    ],
    [],
)

UNROLL_ATTR = "aquas.unroll"
"""Discardable ``scf.for`` attribute: unroll factor requested by the spec (i64)."""

PIPELINE_ATTR = "aquas.pipeline"
"""Discardable ``scf.for`` attribute: the spec's ``#[pipeline]`` directive (i64): the II to
aim for, 0 for the lowest the loop allows, -1 for ``#[pipeline(off)]``."""

KERNEL_CYCLE_ATTR = "aquas.kernel_cycle"
"""Discardable attribute on an op of a pipelined loop's kernel (i64): its cycle in the
kernel by the modulo schedule, the earliest the FSM builder schedules it in."""

ROM_ATTR = "aquas.rom"
"""Discardable unit attribute on the ``arith`` ops of a ROM read (spec ``rom``): its
multiplexer tree and the computation of its index. ``aquas-fold-constants`` folds these
ops once unrolling makes their operands constants, so a ROM read at an unrolled index
becomes its entry."""

NOALIAS_ATTR = "aquas.noalias"
"""Discardable ``aquas.isax`` unit attribute (the spec's ``#[noalias]``): the caller
guarantees that the bytes the ISAX addresses through ``rs1``, through ``rs2`` and through
absolute addresses are three disjoint regions. Interface plans may rely on it."""

MUL_UNITS_ATTR = "aquas.mul_units"
"""Discardable ``aquas.isax`` attribute (the spec's ``#[mul_units(N)]``, i64): at most
``N`` multipliers of each width in one cycle of the ISAX (synth/binding.py)."""

MAX_MUL_UNITS = 64
"""The largest ``N`` of ``#[mul_units(N)]``."""

# aquas IR carries discardable attributes on arith ops; xDSL's cmpi format drops them.
compat.install()

__all__ = [
    "CUSTOM_OPCODES",
    "KERNEL_CYCLE_ATTR",
    "NOALIAS_ATTR",
    "PIPELINE_ATTR",
    "ROM_ATTR",
    "UNROLL_ATTR",
    "Aquas",
    "BurstReadOp",
    "BurstWriteOp",
    "ExtensionOp",
    "IsaxOp",
    "LoadOp",
    "ReadRs1Op",
    "ReadRs2Op",
    "ScratchpadOp",
    "SpmReadOp",
    "SpmWriteOp",
    "StateOp",
    "StateReadOp",
    "StateWriteOp",
    "StoreOp",
    "WriteRdOp",
]
