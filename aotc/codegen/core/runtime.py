"""The caller's ``aotc_runtime`` (see :mod:`aotc.abi`): polling, and error details.

Long-running loops stay interruptible: they poll the runtime now and then. A kernel gets
an ``aotc_runtime *``, which may carry a ``poll`` hook: the wrapper's checks for pending
signals (Ctrl-C) with the GIL taken for a moment. Runtime loops (``for_loop``,
``while_loop``, ``scan``) call it after about :data:`POLL_WORK` element operations,
counted from the body's static size (an iteration of a body over 1000-element arrays
counts 1000), so a tight scalar loop polls every million iterations and a loop over big
arrays every iteration, both roughly every millisecond. A nonzero answer leaves the
kernel with :data:`~aotc.abi.INTERRUPTED`.

Counted loops poll between chunks of iterations, so the loop running a chunk stays as
clean (and vectorizable) as before; ``while`` loops count as they go.

A size check that fails inside the kernel leaves its two sides in ``runtime->detail``
for the message (:func:`set_detail`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

from ... import abi
from ...ir import Atom, Eqn, Program, Var, bound_uppers
from ...ops.core import REDUCTION
from ...ops.fusion import fusion_p
from ...ops.linalg import dot_general_p
from ...ops.shape import update_slice_p
from ...shapes import DimExpr, Shape, size, upper_bound
from ..memory.planner import BufferPlan
from ..memory.viewkinds import VIEW_PRIMITIVES
from .builder import KernelBuilder
from .dtypes import I64, PTR, i64

#: Element operations between two polls.
POLL_WORK = 1 << 20

POLL_TYPE = ir.FunctionType(I64, [PTR])
#: ``aotc_runtime {poll; int64_t detail[DETAILS]; parallel_for; random;
#: argument_bits; threads; heap}``, see :mod:`aotc.abi`.
RUNTIME_STRUCT = ir.LiteralStructType([PTR, ir.ArrayType(I64, abi.DETAILS), PTR, PTR, I64,
                                        I64, PTR])
#: The fields of ``parallel_for``, ``random``, ``argument_bits``, ``threads`` and
#: ``heap`` in :data:`RUNTIME_STRUCT`.
PARALLEL_FOR_FIELD, RANDOM_FIELD, ARGUMENT_BITS_FIELD, THREADS_FIELD, HEAP_FIELD = \
    2, 3, 4, 5, 6


def body_work(*bodies: Program, plan: BufferPlan | None = None) -> DimExpr:
    """Element operations one iteration does, statically: one per equation, plus the size
    of every array it makes. A view makes none; an update the buffer plan does in place
    writes only its block (``y[i] = ...`` in a loop over ``y`` touches one element, not
    ``y``: counted as all of ``y``, a recurrence polled the runtime at every iteration).
    Nested loops poll by themselves and count once here, and so does a nested loop or
    branch whose result takes over an operand's buffer (``BufferPlan.reuse``: the
    versioned inner loop of a row loop counted as the whole output, and polled every
    fourth row, half of a 500x500 loop's time)."""
    work = DimExpr.const(1)
    uppers = bound_uppers(*bodies)  # sizes bound inside: not known where this is read
    for body in bodies:
        for eqn in body.eqns:
            work = work + 1
            if eqn.prim in VIEW_PRIMITIVES:
                continue
            made: tuple[Atom, ...] = eqn.outs
            if eqn.prim is update_slice_p and plan is not None and eqn in plan.updates:
                made = eqn.inputs[1:2]  # in place: the block only
            elif plan is not None:
                made = tuple(v for k, v in enumerate(eqn.outs) if (eqn, k) not in plan.reuse)
            for shape in [*(out.type.shape for out in made), *_swept(eqn)]:
                elements = upper_bound(size(shape), uppers)
                if shape and elements is not None:
                    work = work + elements
    return work


def _swept(eqn: Eqn) -> list[Shape]:
    """The shapes an equation reads whole beyond what it makes: a reduction's or a
    product's operands, a fused loop's iteration space (``np.sum(x * 0.5)`` makes one
    number from all of ``x``: counted as one element, a ``while`` loop around it polled
    every 200,000 sums, seconds apart under emulation)."""
    if eqn.prim is fusion_p:
        return [tuple(eqn.params["shape"])]
    if eqn.prim.has(REDUCTION) or eqn.prim is dot_general_p:
        return [v.type.shape for v in eqn.inputs if isinstance(v, Var)]
    return []


def poll(b: KernelBuilder, runtime: ir.Value) -> None:
    """Call ``runtime->poll(runtime)`` when both are set; leave the kernel with
    INTERRUPTED when it answers nonzero."""
    null = ir.Constant(PTR, None)
    with b.if_then(b.icmp_unsigned("!=", runtime, null), likely=True):
        slot = b.gep(runtime, [i64(0), ir.Constant(ir.IntType(32), 0)],
                     source_etype=RUNTIME_STRUCT)
        hook = b.load(slot, typ=ir.PointerType(POLL_TYPE))
        with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(hook, I64), i64(0)), likely=True):
            stop = b.call(hook, [runtime])
            b.fail_if(b.icmp_signed("!=", stop, i64(0)), abi.INTERRUPTED)


def set_detail(b: KernelBuilder, runtime: ir.Value, *values: ir.Value) -> None:
    """Store a failing check's two sides, or a message's values, in ``runtime->detail``
    (when there is a runtime)."""
    null = ir.Constant(PTR, None)
    with b.if_then(b.icmp_unsigned("!=", runtime, null)):
        for k, value in enumerate(values):
            slot = b.gep(runtime, [i64(0), ir.Constant(ir.IntType(32), 1),
                                   ir.Constant(ir.IntType(32), k)], source_etype=RUNTIME_STRUCT)
            b.store(value, slot)


def python_number(b: KernelBuilder, runtime: ir.Value, argument: int) -> ir.Value:
    """Bit ``argument`` of ``runtime->argument_bits`` (false without a runtime): scalar
    argument ``argument`` was a Python number, array argument ``argument`` is
    C-contiguous."""
    mask = b.entry_alloca(I64, name="argument_bits", zero=True)
    null = ir.Constant(PTR, None)
    with b.if_then(b.icmp_unsigned("!=", runtime, null)):
        slot = b.gep(runtime, [i64(0), ir.Constant(ir.IntType(32), ARGUMENT_BITS_FIELD)],
                     source_etype=RUNTIME_STRUCT)
        b.store(b.load(slot, typ=I64), mask)
    bit = b.and_(b.lshr(b.load(mask, typ=I64), i64(argument)), i64(1))
    return b.icmp_unsigned("!=", bit, i64(0))


def threads(b: KernelBuilder, runtime: ir.Value) -> ir.Value:
    """``runtime->threads``, at least 1 (1 without a runtime)."""
    count = b.entry_alloca(I64, name="threads")
    b.store(i64(1), count)
    with b.if_then(b.icmp_unsigned("!=", runtime, ir.Constant(PTR, None))):
        slot = b.gep(runtime, [i64(0), ir.Constant(ir.IntType(32), THREADS_FIELD)],
                     source_etype=RUNTIME_STRUCT)
        value = b.load(slot, typ=I64)
        b.store(b.select(b.icmp_signed(">", value, i64(1)), value, i64(1)), count)
    return b.load(count, typ=I64)


def chunk_length(b: KernelBuilder, work: ir.Value) -> ir.Value:
    """Iterations between polls for a body doing ``work`` element operations (>= 1)."""
    per = b.select(b.icmp_signed(">", work, i64(1)), work, i64(1))
    n = b.sdiv(i64(POLL_WORK), per)
    return b.select(b.icmp_signed(">", n, i64(1)), n, i64(1))


@contextmanager
def chunked_range(b: KernelBuilder, runtime: ir.Value, lower: ir.Value, upper: ir.Value,
                  chunk: ir.Value, name: str) -> Iterator[ir.Value]:
    """``for i in range(lower, upper)`` around the ``with`` body, polling after every
    ``chunk`` iterations (counting those of earlier runs of the loop in this call). The
    iteration count may be anything int64 allows: the span ``upper - lower`` is compared
    unsigned, which is exact whenever ``lower < upper``."""
    fn = b.function
    pending = b.entry_alloca(I64, name=f"{name}.pending", zero=True)
    pre = b.block
    outer = fn.append_basic_block(f"{name}.chunk")
    chunk_body = fn.append_basic_block(f"{name}.chunk.body")
    head = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    polled = fn.append_basic_block(f"{name}.poll")
    done = fn.append_basic_block(f"{name}.done")
    b.branch(outer)
    b.position_at_end(outer)
    start = b.phi(I64, name=f"{name}.start")
    start.add_incoming(lower, pre)
    b.cbranch(b.icmp_signed("<", start, upper), chunk_body, done)
    b.position_at_end(chunk_body)
    span = b.sub(upper, start)
    end = b.add(start, b.select(b.icmp_unsigned(">", span, chunk), chunk, span))
    b.branch(head)
    b.position_at_end(head)
    index = b.phi(I64, name=name)
    index.add_incoming(start, chunk_body)
    b.cbranch(b.icmp_signed("<", index, end), body, polled)
    b.position_at_end(body)
    yield index
    index.add_incoming(b.add(index, i64(1)), b.block)
    b.branch(head)
    b.position_at_end(polled)
    # After a whole chunk, poll; a last, shorter chunk counts towards the next poll
    # instead (across the loop's runs in this call): polling at every exit made a
    # 5-iteration inner loop take the GIL once per run, 55 000 times in a 100x100 blur.
    _count_and_poll(b, runtime, pending, b.sub(end, start), chunk,
                    also=b.icmp_signed("<", end, upper))
    start.add_incoming(end, b.block)
    b.branch(outer)
    b.position_at_end(done)


def _count_and_poll(b: KernelBuilder, runtime: ir.Value, counter: ir.Value, amount: ir.Value,
                   limit: ir.Value, also: ir.Value | None = None) -> None:
    """Add ``amount`` to ``counter``; once it reaches ``limit`` (or ``also`` holds), poll
    and start counting again."""
    total = b.add(b.load(counter, typ=I64), amount)
    due = b.icmp_signed(">=", total, limit)
    if also is not None:
        due = b.or_(also, due)
    b.store(b.select(due, i64(0), total), counter)
    with b.if_then(due, likely=False):
        poll(b, runtime)


class WorkCounter:
    """Counts work across the iterations of a loop without a trip count (``while``)."""

    def __init__(self, b: KernelBuilder, runtime: ir.Value, work: ir.Value) -> None:
        self.b = b
        self.runtime = runtime
        self.work = b.select(b.icmp_signed("<", work, i64(POLL_WORK)), work, i64(POLL_WORK))
        self.slot = b.entry_alloca(I64, name="work")
        b.store(i64(0), self.slot)

    def tick(self) -> None:
        """One iteration done: poll when the work since the last poll reaches POLL_WORK."""
        _count_and_poll(self.b, self.runtime, self.slot, self.work, i64(POLL_WORK))
