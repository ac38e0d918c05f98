"""The IR builder every lowering rule receives.

It is llvmlite's :class:`~llvmlite.ir.IRBuilder` plus the two things a scalar rule may
need beyond instructions: the fast-math flags of the target (``fp_flags``) and a way to
leave the kernel with an error code (``fail_if``), which integer ``pow`` uses for
negative exponents. Keeping both on the builder keeps every rule's signature
``rule(builder, dtype, *args)``. It also carries the target's vector registers
(``vector_bytes``, ``fma``), which a rule that writes explicit vector code (the
matrix product's micro-kernel) must size itself by: code for a 32-byte machine must never
assume 64-byte registers, and ``llvm.fma`` without FMA hardware is a libm call. Anything
else such a rule needs to know of the machine it asks :attr:`KernelBuilder.isa`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from llvmlite import ir

from ..targets import for_module
from ..targets.isa import InstructionSet
from .dtypes import PTR, i64


def start_function(fn: ir.Function, fp_flags: tuple[str, ...], vector_bytes: int = 16,
                   fma: bool = False) -> KernelBuilder:
    """A builder positioned after ``fn``'s entry block, which holds only allocas (and is
    closed by :func:`finish_function`)."""
    fn.append_basic_block("entry")
    return KernelBuilder(fn.append_basic_block("start"), fp_flags, vector_bytes, fma)


def finish_function(b: KernelBuilder) -> None:
    """Return 0 from where the builder is, and let the entry block fall into the code."""
    b.ret(ir.Constant(ir.IntType(64), 0))
    entry, start = b.function.basic_blocks[:2]
    with b.goto_block(entry):
        b.branch(start)


class KernelBuilder(ir.IRBuilder):  # type: ignore[misc]  # llvmlite is untyped
    """An ``IRBuilder`` that knows the fast-math flags and the kernel's error exits."""

    def __init__(self, block: ir.Block, fp_flags: tuple[str, ...] = (),
                 vector_bytes: int = 16, fma: bool = False) -> None:
        super().__init__(block)
        self.fp_flags = fp_flags
        #: The width of the target's vector registers.
        self.vector_bytes = vector_bytes
        #: Whether the target has fused multiply-add instructions.
        self.fma = fma
        self._fail_blocks: dict[int, ir.Block] = {}

    @property
    def isa(self) -> InstructionSet:
        """The instruction set the module is generated for (from its triple)."""
        return for_module(self.module)

    def fail_if(self, cond: ir.Value, code: int) -> None:
        """Return ``code`` from the function when ``cond`` (i1) holds; continue otherwise."""
        fail = self._fail_blocks.get(code)
        if fail is None:
            fail = self.function.append_basic_block(f"fail.{code}")
            with self.goto_block(fail):
                self.ret(i64(code))
            self._fail_blocks[code] = fail
        ok = self.function.append_basic_block("ok")
        self.cbranch(cond, fail, ok)
        self.position_at_end(ok)

    def entry_alloca(self, ty: ir.Type, name: str = "",
                     function: ir.Function | None = None,
                     zero: bool = False) -> ir.AllocaInstr:
        """An ``alloca`` in the entry block (of ``function``, the current one by default),
        where SROA/mem2reg can promote it; ``zero``: zeroed there, once per call."""
        entry = (function or self.function).entry_basic_block
        with self.goto_block(entry):
            if entry.is_terminated:
                self.position_before(entry.terminator)
            else:
                self.position_at_start(entry)
            slot = self.alloca(ty, name=name)
            if zero:  # (None: a null pointer, or an aggregate's zeroinitializer)
                aggregate = isinstance(ty, (ir.PointerType, ir.ArrayType, ir.BaseStructType))
                self.store(ir.Constant(ty, None if aggregate else 0), slot)
        slot.type = PTR  # llvmlite types allocas as typed pointers; we use opaque ones
        return slot


@contextmanager
def internal_function(module: ir.Module, name: str, ret: ir.Type,
                      params: list[tuple[str, ir.Type]], vector_bytes: int = 16,
                      fma: bool = False
                      ) -> Iterator[tuple[KernelBuilder, dict[str, ir.Argument]]]:
    """Define internal ``ret name(params...)``; the body is the ``with`` block, which
    must end with a ``ret`` of its own. Its builder knows the target's vectors."""
    fn = ir.Function(module, ir.FunctionType(ret, [t for _, t in params]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    args = dict(zip((n for n, _ in params), fn.args, strict=True))
    for arg_name, arg in args.items():
        arg.name = arg_name
    entry = fn.append_basic_block("entry")
    b = KernelBuilder(fn.append_basic_block("start"), (), vector_bytes, fma)
    yield b, args
    with b.goto_block(entry):
        b.branch(fn.basic_blocks[1])


def existing(module: ir.Module, name: str) -> ir.Function | None:
    fn = module.globals.get(name)
    return fn if isinstance(fn, ir.Function) else None


def define_once(module: ir.Module, name: str, ret: ir.Type,
                params: list[tuple[str, ir.Type]],
                body: Callable[[KernelBuilder, dict[str, ir.Argument]], None],
                vector_bytes: int = 64) -> ir.Function:
    """Define internal ``name`` once per module (``body`` writes it, ending in a ``ret``;
    its builder has registers of ``vector_bytes``)."""
    found = existing(module, name)
    if found is not None:
        return found
    with internal_function(module, name, ret, params, vector_bytes) as (b, p):
        body(b, p)
    fn = module.globals[name]
    assert isinstance(fn, ir.Function)
    return fn
