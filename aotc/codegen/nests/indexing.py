"""Data-dependent indexing, block updates, joining, and value-dependent errors.

``take`` checks every index before it reads (NumPy's ``mode='raise'``), so a bad index
makes ``P`` return the IndexError code instead of reading out of bounds. Updates
(``update_slice``, at starts that may be sizes bound at run time) are functional in the
IR; the buffer plan
(:mod:`.inplace`) says whether one writes its block straight into the base's buffer
(the base is dead afterwards) or first copies the base into the result's own buffer.
Either way the block is written through a strided sub-view.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from llvmlite import ir

from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.index import (
    c_contiguous_p,
    check_p,
    clock_p,
    compress_p,
    python_number_p,
    raise_if_p,
    take_p,
)
from ...ops.shape import concatenate_p, update_slice_p
from ..core.builder import KernelBuilder
from ..core.context import EqnRule, Lowering
from ..core.dtypes import BOOL, FLOAT64, I8, I64, INT64, PTR, i64
from ..core.libc import libc_function
from ..core.loops import loop_nest
from ..core.runtime import python_number, set_detail
from ..core.values import Scalar, Value, View, load, step_value, store, sub_view
from ..elementwise.convert import convert
from ..elementwise.nests import copy_into, materialize
from ..memory.inplace import Update

TAKE_INDEX_ERROR = 2  # abi.KERNEL_ERRORS


def _checked_index(ctx: Lowering, raw: ir.Value, dtype: np.dtype, n: ir.Value) -> ir.Value:
    """An index in ``[-n, n)`` made non-negative; anything else fails the kernel."""
    b = ctx.b
    i = convert(b, raw, dtype, INT64)
    if dtype.kind == "u":  # unsigned compare: a huge uint64 is out of range, not negative
        ok = b.icmp_unsigned("<", i, n)
    else:
        ok = b.and_(b.icmp_signed(">=", i, b.neg(n)), b.icmp_signed("<", i, n))
    with b.if_then(b.not_(ok), likely=False):
        set_detail(b, ctx.runtime, i, n)  # for the message: the index and the size
        b.ret(i64(TAKE_INDEX_ERROR))
    return b.select(b.icmp_signed("<", i, i64(0)), b.add(i, n), i)


def lower_take(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    x, indices = args
    assert isinstance(x, View)
    b, axis, out = ctx.b, eqn.params["axis"], eqn.outs[0]
    k = eqn.inputs[1].type.ndim
    index_dtype = eqn.inputs[1].type.dtype

    def element(idx: Sequence[ir.Value]) -> ir.Value:
        i = _checked_index(ctx, load(b, indices, idx[axis:axis + k]), index_dtype,
                           x.dims[axis])
        return load(b, x, [*idx[:axis], i, *idx[axis + k:]])

    return materialize(ctx, out, element, "t")


def lower_compress(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """The kept items, one pass in C order with a running output position (the count,
    and so the output's size, was bound before)."""
    x, mask = args
    b, out = ctx.b, eqn.outs[0]
    assert isinstance(x, View) and isinstance(mask, View)  # tracing selects rank >= 1
    dest = ctx.home(out)
    position = b.entry_alloca(I64, "kept")
    b.store(i64(0), position)
    with loop_nest(b, mask.dims, "cmp") as idx:
        keep = load(b, mask, idx)
        at = b.load(position)
        source, target = _item(b, x, idx), _item(b, dest, [at])
        if target.ndim:
            with b.if_then(keep):
                copy_into(ctx, source, target)
        else:  # branch-free: every element is stored, the next one overwrites a skipped
            # one (the buffer has room: it was sized for every element being kept)
            store(b, target, [], load(b, source, []))
        b.store(b.add(at, b.zext(keep, I64)), position)
    return [dest]


def _item(b: ir.IRBuilder, view: View, lead: Sequence[ir.Value]) -> View:
    """``view[lead...]``: the sub-array at the leading indices ``lead``."""
    offset: ir.Value = i64(0)
    for i, stride in zip(lead, view.strides, strict=False):
        offset = b.add(offset, b.mul(i, stride))
    rest = len(lead)
    return View(b.gep(view.data, [offset], source_etype=I8), view.dims[rest:],
                view.strides[rest:], view.dtype, view.align)


def _update(ctx: Lowering, eqn: Eqn, base: Value, update: Value,
            starts: Sequence[ir.Value], steps: Sequence[int | ir.Value]) -> list[Value]:
    if eqn.outs[0].type.ndim == 0:
        return [update]
    plan = ctx.layout.plan
    mode = plan.updates.get(eqn) if plan is not None else None
    if mode is Update.DIRECT:  # the operand was computed into the block (ctx.home)
        return [base]
    if mode is None:  # the base is still needed: a copy of it, then the block
        dest = ctx.home(eqn.outs[0])
        copy_into(ctx, base, dest)
    else:
        assert isinstance(base, View)
        dest = base
        if mode is Update.STAGED:  # the block may read the bytes it overwrites
            staged = ctx.buffer(ctx.layout.staging[(eqn, "operand")], eqn.inputs[1].type)
            copy_into(ctx, update, staged)
            update = staged
    dims = tuple(ctx.dims(d) for d in eqn.inputs[1].type.shape)
    copy_into(ctx, update, sub_view(ctx.b, dest, starts, steps, dims))
    return [dest]


def lower_update_slice(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    starts = [ctx.dims(s) for s in eqn.params["start"]]
    steps = [step_value(ctx.dims, s) for s in eqn.params["step"]]
    return _update(ctx, eqn, args[0], args[1], starts, steps)


#: A concatenation along the last axis at most this wide (a static width) is written in
#: one pass, every operand's elements at each index of the others: written operand by
#: operand, each pass would touch every cache line of the output.
THIN = 16


def lower_concatenate(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    b, axis = ctx.b, eqn.params["axis"]
    dest = ctx.home(eqn.outs[0])
    widths = [atom.type.shape[axis] for atom in eqn.inputs]
    if axis == dest.ndim - 1 and all(w.is_const for w in widths) \
            and sum(w.value for w in widths) <= THIN:
        with loop_nest(b, dest.dims[:-1], "cat") as index:
            at = 0
            for value, width in zip(args, widths, strict=True):
                for k in range(width.value):
                    item = value.value if isinstance(value, Scalar) else load(
                        b, value, [*index, i64(k)])
                    store(b, dest, [*index, i64(at)], item)
                    at += 1
        return [dest]
    offset: ir.Value = i64(0)
    for atom, value in zip(eqn.inputs, args, strict=True):
        dims = tuple(ctx.dims(d) for d in atom.type.shape)
        starts = [offset if k == axis else i64(0) for k in range(dest.ndim)]
        copy_into(ctx, value, sub_view(b, dest, starts, [1] * dest.ndim, dims))
        offset = b.add(offset, dims[axis])
    return [dest]


def _detail_bits(b: KernelBuilder, value: Value) -> ir.Value:
    """A message's value as ``runtime->detail`` holds it: an int64, or a float's bits as
    a double (see :mod:`aotc.tracing.messages`)."""
    assert isinstance(value, Scalar)
    if value.dtype.kind == "f":
        return b.bitcast(convert(b, value.value, value.dtype, FLOAT64), I64)
    return convert(b, value.value, value.dtype, INT64)


def lower_raise_if(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Fail the kernel with the error's code when any element of the condition is true."""
    cond, *detail = args
    code = ctx.error_code(eqn.params["error"], eqn.params["message"])
    if detail:  # a scalar condition with the values its message shows
        with ctx.b.if_then(cond.value, likely=False):  # type: ignore[union-attr]
            set_detail(ctx.b, ctx.runtime, *(_detail_bits(ctx.b, d) for d in detail))
            ctx.b.ret(i64(code))
        return []
    if isinstance(cond, Scalar):
        ctx.b.fail_if(cond.value, code)
        return []
    with loop_nest(ctx.b, cond.dims, "chk") as idx:
        ctx.b.fail_if(load(ctx.b, cond, idx), code)
    return []


def lower_check(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """A size check where the code runs: on failure, its two sides go to the runtime's
    ``detail`` (for the message) and the kernel returns the check's code."""
    b, params = ctx.b, eqn.params
    lhs, rhs = ctx.dims(params["lhs"]), ctx.dims(params["rhs"])
    with b.if_then(b.not_(b.icmp_signed(params["op"], lhs, rhs)), likely=False):
        set_detail(b, ctx.runtime, lhs, rhs)
        b.ret(i64(ctx.error_code(params["error"], params["message"])))
    return []


def lower_clock(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """C11's ``timespec_get(&ts, TIME_UTC)`` (glibc 2.16+, macOS 10.15+, Windows' UCRT):
    ``tv_sec`` is 64 bits everywhere aotc builds for, ``tv_nsec`` (below 10**9) is read
    as the 32 bits every ``long`` has at the front of its slot (little-endian targets)."""
    b = ctx.b
    spec = ir.LiteralStructType([I64, I64])
    fn = libc_function(b.module, "timespec_get", ir.FunctionType(ir.IntType(32),
                                                                 [PTR, ir.IntType(32)]))
    ts = b.entry_alloca(spec)
    b.call(fn, [ts, ir.Constant(ir.IntType(32), 1)])
    seconds = b.load(b.gep(ts, [i64(0), ir.Constant(ir.IntType(32), 0)], source_etype=spec),
                     typ=I64)
    nanos = b.load(b.gep(ts, [i64(0), ir.Constant(ir.IntType(32), 1)], source_etype=spec),
                   typ=ir.IntType(32))
    whole, part = b.sitofp(seconds, ir.DoubleType()), b.sitofp(nanos, ir.DoubleType())
    return [Scalar(b.fadd(whole, b.fmul(part, ir.Constant(ir.DoubleType(), 1e-9))), FLOAT64)]


def lower_python_number(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    return [Scalar(python_number(ctx.b, ctx.runtime, eqn.params["argument"]), BOOL)]


RULES: dict[Primitive, EqnRule] = {
    python_number_p: lower_python_number,
    c_contiguous_p: lower_python_number,  # (the same bit, of an array argument)
    clock_p: lower_clock,
    take_p: lower_take,
    compress_p: lower_compress,
    update_slice_p: lower_update_slice,
    concatenate_p: lower_concatenate,
    raise_if_p: lower_raise_if,
    check_p: lower_check,
}
