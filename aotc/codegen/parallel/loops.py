"""Outlining a loop into a function the runtime's ``parallel_for`` hook runs on threads.

A parallel loop is emitted as usual, but into an internal function
``int64_t body(void *ctx, int64_t begin, int64_t end)`` that runs chunks
``begin..end-1`` of it (see :mod:`aotc.abi`). The loop's code refers to values of the
kernel (pointers, strides, dims): after the body is emitted, every such value is
*captured*: stored by the kernel into a struct it passes as ``ctx`` and loaded from
there at the body's entry, its uses rewritten to the loaded copy. That keeps every
lowering rule unchanged: it emits into whichever function the builder is in.

The kernel then calls ``rt->parallel_for(rt, body, ctx, chunks)`` when the work is
large and the hook is set, else ``body(ctx, 0, chunks)`` itself: the chunking, and so
every result, is the same either way. The body never polls (only the caller's thread
may; the hook polls between chunks) and never outlines again: nested parallel loops
run serially inside their chunk.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.context import Lowering
from ..core.dtypes import I64, PTR, i64
from ..core.runtime import PARALLEL_FOR_FIELD, RUNTIME_STRUCT

BODY_TYPE = ir.FunctionType(I64, [PTR, I64, I64])
HOOK_TYPE = ir.FunctionType(I64, [PTR, PTR, PTR, I64])
#: Element operations from which a loop is handed to the thread pool: waking threads
#: costs tens of microseconds, so below this one thread is faster.
PARALLEL_WORK = 1 << 18
#: Element operations per chunk, at least (a chunk is also the unit of load balance).
CHUNK_WORK = 1 << 16
#: Chunks per loop, at most (partial results of reductions live in a fixed array).
MAX_CHUNKS = 64

_names = itertools.count()
#: Attributes of llvmlite instructions that are bookkeeping, not operands.
_NOT_OPERANDS = frozenset({"parent", "type", "metadata", "name", "_name", "opname",
                           "flags", "attributes", "source_etype", "_clear_string_cache"})


def chunk_count(b: ir.IRBuilder, work: ir.Value, extent: ir.Value) -> ir.Value:
    """How many chunks a loop of ``extent`` iterations doing ``work`` element operations
    in all is split into: a function of the sizes only, so results never depend on the
    number of threads; 1 to :data:`MAX_CHUNKS`, and at most ``extent`` (when > 0)."""
    want = b.sdiv(work, i64(CHUNK_WORK))
    want = b.select(b.icmp_signed("<", want, i64(MAX_CHUNKS)), want, i64(MAX_CHUNKS))
    want = b.select(b.icmp_signed("<", want, extent), want, extent)
    return b.select(b.icmp_signed("<", want, i64(1)), i64(1), want)


def chunk_bounds(b: ir.IRBuilder, extent: ir.Value, chunks: ir.Value, k: ir.Value
                 ) -> tuple[ir.Value, ir.Value]:
    """``[lo, hi)`` of chunk ``k`` of ``extent`` iterations split into ``chunks`` nearly
    equal runs (the first ``extent % chunks`` one longer); no product can overflow."""
    q, r = b.sdiv(extent, chunks), b.srem(extent, chunks)

    def start(j: ir.Value) -> ir.Value:
        extra = b.select(b.icmp_signed("<", j, r), j, r)
        return b.add(b.mul(j, q), extra)

    return start(k), start(b.add(k, i64(1)))


def _operands(instr: ir.Instruction) -> Iterator[tuple[str, Any]]:
    """Every attribute of ``instr`` that may hold a value it uses (llvmlite keeps some
    in ``operands`` and some in attributes of their own: a GEP's pointer, a phi's
    incomings)."""
    for key, value in vars(instr).items():
        if key not in _NOT_OPERANDS:
            yield key, value


def _foreign(value: Any, fn: ir.Function) -> bool:
    if isinstance(value, ir.Instruction):
        return value.parent.parent is not fn
    return isinstance(value, ir.Argument) and value.parent is not fn


def _substitute(value: Any, mapping: dict[int, ir.Value]) -> Any:
    """``value`` with the captured values replaced (inside lists, tuples, phi pairs)."""
    if isinstance(value, ir.Value):
        return mapping.get(id(value), value)
    if isinstance(value, (list, tuple)):
        items = [_substitute(v, mapping) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _foreign_values(value: Any, fn: ir.Function) -> Iterator[ir.Value]:
    if isinstance(value, ir.Value):
        if _foreign(value, fn):
            yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _foreign_values(v, fn)


def _capture(fn: ir.Function, ctx_arg: ir.Value, b: KernelBuilder) -> list[ir.Value]:
    """Load every value of another function that ``fn`` uses from ``ctx_arg`` (a struct
    of them, in the returned order) at ``fn``'s entry, and use the loaded copies."""
    captured: dict[int, ir.Value] = {}
    for block in fn.blocks:
        for instr in block.instructions:
            for _, value in _operands(instr):
                for v in _foreign_values(value, fn):
                    captured.setdefault(id(v), v)
    values = list(captured.values())
    struct = ir.LiteralStructType([v.type for v in values])
    mapping: dict[int, ir.Value] = {}
    entry = fn.entry_basic_block
    with b.goto_block(entry):
        for k, v in enumerate(values):
            slot = b.gep(ctx_arg, [i64(0), ir.Constant(ir.IntType(32), k)],
                         source_etype=struct)
            mapping[id(v)] = b.load(slot, typ=v.type, name=f"cap{k}")
    loads = set(map(id, mapping.values()))
    for block in fn.blocks:
        for instr in block.instructions:
            if id(instr) in loads:
                continue
            changed = False
            for key, value in list(_operands(instr)):
                new = _substitute(value, mapping)
                if new != value:
                    setattr(instr, key, new)
                    changed = True
            if changed and hasattr(instr, "_clear_string_cache"):
                instr._clear_string_cache()
    return values


class Outline:
    """``with Outline(ctx, "fusion") as (begin, end): ...`` emits the body into a new
    internal function running chunks ``begin..end-1``; afterwards the builder is back
    where it was, and :meth:`call` runs the chunks from the kernel. A ``serial`` outline
    (:mod:`.outline`: a function for compile time's sake) runs once, on this thread
    (:meth:`call_once`), and may itself split loops over threads."""

    def __init__(self, ctx: Lowering, label: str, serial: bool = False) -> None:
        self.ctx = ctx
        self.serial = serial
        parent = ctx.b.function
        self.fn = ir.Function(parent.module, BODY_TYPE, f"{parent.name}.{label}{next(_names)}")
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        for arg, name in zip(self.fn.args, ("ctx", "begin", "end"), strict=True):
            arg.name = name
        self.captures: list[ir.Value] = []

    def __enter__(self) -> tuple[ir.Value, ir.Value]:
        ctx, b, fn = self.ctx, self.ctx.b, self.fn
        fn.append_basic_block("entry")
        self._here = b.block
        self._saved = (ctx.dims, ctx.parallel, b._fail_blocks)
        # Sizes computed inside stay inside; threads only from a serial outline; error
        # exits of its own.
        ctx.dims, b._fail_blocks = ctx.dims.child(), {}
        ctx.parallel = ctx.parallel and self.serial
        b.position_at_end(fn.append_basic_block("start"))
        return fn.args[1], fn.args[2]

    def __exit__(self, kind: Any, *_: Any) -> None:
        ctx, b, fn = self.ctx, self.ctx.b, self.fn
        ctx.dims, ctx.parallel, b._fail_blocks = self._saved
        if kind is not None:
            return
        b.ret(i64(0))
        self.captures = _capture(fn, fn.args[0], b)
        with b.goto_block(fn.entry_basic_block):
            b.branch(fn.basic_blocks[1])
        b.position_at_end(self._here)

    def _frame(self) -> ir.Value:
        """The captured values, stored into a struct of the caller's for ``ctx``."""
        b = self.ctx.b
        struct = ir.LiteralStructType([v.type for v in self.captures])
        frame = b.entry_alloca(struct, name="outline.ctx")
        for k, v in enumerate(self.captures):
            b.store(v, b.gep(frame, [i64(0), ir.Constant(ir.IntType(32), k)],
                             source_etype=struct))
        return frame

    def _returning_errors(self, code: ir.Value) -> None:
        b = self.ctx.b
        with b.if_then(b.icmp_signed("!=", code, i64(0)), likely=False):
            b.ret(code)

    def call_once(self) -> None:
        """Run the body here, as one chunk; leave the kernel with its error code, if any."""
        self._returning_errors(self.code_of_call())

    def code_of_call(self) -> ir.Value:
        """Run the body here, as one chunk: its error code (0: none)."""
        return self.ctx.b.call(self.fn, [self._frame(), i64(0), i64(1)])

    def call(self, chunks: ir.Value, work: ir.Value) -> None:
        """Run every chunk: through the hook when ``work`` is large and the runtime has
        one, else here; leave the kernel with the failing chunk's code, if any."""
        ctx, b = self.ctx, self.ctx.b
        frame = self._frame()
        runtime, null = ctx.runtime, ir.Constant(PTR, None)
        hook_slot = b.entry_alloca(PTR, name="parallel.hook")
        b.store(null, hook_slot)
        big = b.and_(b.icmp_signed(">=", work, i64(PARALLEL_WORK)),
                     b.icmp_signed(">", chunks, i64(1)))
        with b.if_then(b.and_(big, b.icmp_unsigned("!=", runtime, null))):
            field = b.gep(runtime, [i64(0), ir.Constant(ir.IntType(32), PARALLEL_FOR_FIELD)],
                          source_etype=RUNTIME_STRUCT)
            b.store(b.load(field, typ=PTR), hook_slot)
        code_slot = b.entry_alloca(I64, name="parallel.code")
        hook = b.load(hook_slot, typ=ir.PointerType(HOOK_TYPE))
        with b.if_else(b.icmp_unsigned("!=", b.ptrtoint(hook, I64), i64(0))) as (pool, here):
            with pool:
                b.store(b.call(hook, [runtime, self.fn, frame, chunks]), code_slot)
            with here:
                b.store(b.call(self.fn, [frame, i64(0), chunks]), code_slot)
        self._returning_errors(b.load(code_slot, typ=I64))
