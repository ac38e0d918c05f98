"""``max``/``min`` and ``argmax``/``argmin`` of floats along a contiguous axis, in vector
registers.

The sequential loop (:mod:`.reductions`) carries its running value from one element to
the next through a NaN test and two selects: LLVM cannot vectorize that recurrence (a
NaN-propagating maximum is not one of its reduction kinds without fast-math), so it ran
one element per several cycles, a third of NumPy's speed, and ``argmax`` a thirtieth.
Here, when the axis is contiguous at run time, the same combining rule runs on whole
vectors: ``UNROLL`` accumulators of a register's width each, folded together and then
lane by lane at the end, the leftover elements one by one. The maximum is the same
value in any order (a NaN anywhere makes it NaN); only which of ``0.0``/``-0.0`` comes
out of a tie can differ from the sequential order, as it does between NumPy's own
SIMD and scalar loops.

``argmax`` is then a search for the first element equal to that maximum (the first NaN
when it is NaN), a vector of comparisons at a time, stopping at the block that has it:
two passes over the data at vector speed instead of one at scalar speed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.dtypes import I64, i64, reg_type
from ..core.loops import for_range
from ..core.values import View, element_ptr
from ..elementwise.scalar import Fn

#: Independent vector accumulators (hides the combine's latency).
UNROLL = 4


def register_lanes(b: KernelBuilder, dtype: np.dtype) -> int:
    """How many items of ``dtype`` one of the target's vector registers holds."""
    return max(1, b.vector_bytes // dtype.itemsize)


def _splat(value: ir.Value, width: int) -> ir.Value:
    return ir.Constant(ir.VectorType(value.type, width), [value] * width)


def _at(b: ir.IRBuilder, base: ir.Value, i: ir.Value, itemsize: int) -> ir.Value:
    return b.gep(base, [b.mul(i, i64(itemsize))], source_etype=ir.IntType(8))


def _vector_or_scalar(b: KernelBuilder, x: View, index: list[ir.Value], axis: int,
                      ty: ir.Type, vector: Callable[[ir.Value, ir.Value, int], ir.Value],
                      scalar: Callable[[], ir.Value]) -> ir.Value:
    """``vector(base, n, width)`` where ``x``'s axis is contiguous at run time and holds
    ``UNROLL`` registers or more (``base``: its first element at ``index``, whose
    ``index[axis]`` is ignored), else ``scalar()``: a value of type ``ty``."""
    width = register_lanes(b, x.dtype)
    n, stride = x.dims[axis], x.strides[axis]
    base = element_ptr(b, x, [*index[:axis], i64(0), *index[axis + 1:]])
    result = b.entry_alloca(ty, name="extreme")
    fast = b.and_(b.icmp_signed("==", stride, i64(x.dtype.itemsize)),
                  b.icmp_signed(">=", n, i64(width * UNROLL)))
    with b.if_else(fast, likely=True) as (then, otherwise):
        with then:
            b.store(vector(base, n, width), result)
        with otherwise:
            b.store(scalar(), result)
    return b.load(result, typ=ty)


def contiguous_extreme(b: KernelBuilder, x: View, index: list[ir.Value], axis: int,
                       combine: Fn, identity: ir.Constant,
                       scalar: Callable[[], ir.Value]) -> ir.Value:
    """The reduction of ``x`` along ``axis`` at the other axes' ``index``: in vectors
    when the axis is contiguous and long enough, else by ``scalar()``, the sequential
    loop."""
    def vector(base: ir.Value, n: ir.Value, width: int) -> ir.Value:
        return _vector_fold(b, x.dtype, base, n, combine, identity, width)
    return _vector_or_scalar(b, x, index, axis, reg_type(x.dtype), vector, scalar)


def _vector_fold(b: KernelBuilder, dtype: np.dtype, base: ir.Value, n: ir.Value,
                 combine: Fn, identity: ir.Constant, width: int) -> ir.Value:
    vector = ir.VectorType(reg_type(dtype), width)
    step = width * UNROLL
    slots = []
    for u in range(UNROLL):
        slot = b.entry_alloca(vector, name=f"fold{u}")
        b.store(_splat(identity, width), slot)
        slots.append(slot)
    with for_range(b, b.sdiv(n, i64(step)), "fold", vectorize=False) as j:
        for u, slot in enumerate(slots):
            at = _at(b, base, b.add(b.mul(j, i64(step)), i64(u * width)), dtype.itemsize)
            item = b.load(at, typ=vector, align=dtype.itemsize)
            b.store(combine(b, dtype, b.load(slot, typ=vector), item), slot)
    folded = b.load(slots[0], typ=vector)
    for slot in slots[1:]:
        folded = combine(b, dtype, folded, b.load(slot, typ=vector))
    total = b.extract_element(folded, i64(0))
    for lane in range(1, width):
        total = combine(b, dtype, total, b.extract_element(folded, i64(lane)))
    acc = b.entry_alloca(reg_type(dtype), name="fold.tail")
    b.store(total, acc)
    done = b.mul(b.sdiv(n, i64(step)), i64(step))
    with for_range(b, b.sub(n, done), "fold.tail", vectorize=False) as k:
        item = b.load(_at(b, base, b.add(done, k), dtype.itemsize), typ=reg_type(dtype))
        b.store(combine(b, dtype, b.load(acc, typ=reg_type(dtype)), item), acc)
    return b.load(acc, typ=reg_type(dtype))


def contiguous_arg_extreme(b: KernelBuilder, x: View, index: list[ir.Value], axis: int,
                           combine: Fn, identity: ir.Constant,
                           scalar: Callable[[], ir.Value]) -> ir.Value:
    """``argmax``/``argmin`` along ``axis`` at ``index``: the first position of the
    extreme (of the first NaN, when there is one), found in vectors where the axis is
    contiguous and long enough, else by ``scalar()``."""
    def vector(base: ir.Value, n: ir.Value, width: int) -> ir.Value:
        best = _vector_fold(b, x.dtype, base, n, combine, identity, width)
        return _first_equal(b, x.dtype, base, n, best, width)
    return _vector_or_scalar(b, x, index, axis, I64, vector, scalar)


def _matches(b: ir.IRBuilder, item: ir.Value, best: ir.Value) -> ir.Value:
    """``item == best``, or both NaN (the extreme is the first NaN then)."""
    nan = b.fcmp_unordered("uno", best, best)
    return b.or_(b.fcmp_ordered("==", item, best),
                 b.and_(nan, b.fcmp_unordered("uno", item, item)))


def _first_equal(b: KernelBuilder, dtype: np.dtype, base: ir.Value, n: ir.Value,
                 best: ir.Value, width: int) -> ir.Value:
    """The first position whose element matches ``best`` (there is one: it is the
    extreme of these elements)."""
    vector = ir.VectorType(reg_type(dtype), width)
    wanted = b.insert_element(ir.Constant(vector, None), best, i64(0))
    wanted = b.shuffle_vector(wanted, ir.Constant(vector, None),
                              ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width))
    blocks = b.sdiv(n, i64(width))
    start = b.entry_alloca(I64, name="arg.block")
    span = b.entry_alloca(I64, name="arg.span")
    b.store(b.mul(blocks, i64(width)), start)  # not in a full block: in the tail
    b.store(b.sub(n, b.mul(blocks, i64(width))), span)
    fn = b.function
    head, body, hit, after = (fn.append_basic_block(f"arg.{s}")
                              for s in ("head", "body", "hit", "after"))
    entry = b.block
    b.branch(head)
    b.position_at_end(head)
    j = b.phi(I64, name="arg.j")
    j.add_incoming(i64(0), entry)
    b.cbranch(b.icmp_signed("<", j, blocks), body, after)
    b.position_at_end(body)
    item = b.load(_at(b, base, b.mul(j, i64(width)), dtype.itemsize), typ=vector,
                  align=dtype.itemsize)
    found = b.bitcast(_matches(b, item, wanted), ir.IntType(width))
    j.add_incoming(b.add(j, i64(1)), body)
    b.cbranch(b.icmp_unsigned("!=", found, ir.Constant(ir.IntType(width), 0)), hit, head)
    b.position_at_end(hit)
    b.store(b.mul(j, i64(width)), start)
    b.store(i64(width), span)
    b.branch(after)
    b.position_at_end(after)
    first = b.load(start, typ=I64)
    position = b.entry_alloca(I64, name="arg.at")
    b.store(n, position)
    with for_range(b, b.load(span, typ=I64), "arg.scan", vectorize=False) as k:
        i = b.add(first, k)
        element = b.load(_at(b, base, i, dtype.itemsize), typ=reg_type(dtype))
        earlier = b.icmp_signed("<", i, b.load(position, typ=I64))
        take = b.and_(_matches(b, element, best), earlier)
        b.store(b.select(take, i, b.load(position, typ=I64)), position)
    return b.load(position, typ=I64)
