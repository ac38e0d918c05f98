"""Reductions, index reductions and cumulative scans: loops with a register accumulator.

The kept axes are the outer loops and the reduced axis or axes the inner ones. The
accumulator is an entry-block alloca that SROA turns into phis, so the IR stays simple
and the result is an ordinary register loop. The combining step is the elementwise
scalar rule of the matching primitive (``add`` for sums, NaN-propagating ``max``…), so
dtype semantics (bool sums are ``or``, integer wrap-around) come from one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from ...ir import Eqn
from ...ops.core import ALL_PRIMITIVES, Primitive
from ...ops.reduce import ARG_REDUCTIONS, CUMULATIVE, REDUCTIONS, highest, lowest
from ..core.context import EqnRule, Lowering
from ..core.dtypes import I64, constant, i64, reg_type
from ..core.loops import for_range, loop_nest
from ..core.values import Scalar, Value, View, load, part_view, store
from ..elementwise.complexarith import mul_unfused, pack, select
from ..elementwise.nests import Accumulator, copy_into, materialize, merge_index
from ..elementwise.scalar import Fn, scalar_rule
from .extremes import contiguous_arg_extreme, contiguous_extreme
from .pairwise import pairwise_sum

#: reduction -> (elementwise primitive that combines, identity for a dtype).
#: max/min use NumPy's NaN-propagating ``maximum``/``minimum``; the identity of an empty
#: max/min is never observed (the tracer adds a check), but it must not crash.
REDUCERS: dict[str, tuple[str, Callable[[np.dtype], object]]] = {
    "reduce_sum": ("add", lambda dtype: 0),
    "reduce_prod": ("mul", lambda dtype: 1),
    "reduce_max": ("max", lowest),
    "reduce_min": ("min", highest),
    "reduce_and": ("logical_and", lambda dtype: 1),
    "reduce_or": ("logical_or", lambda dtype: 0),
}


def combiner(reduction: str, dtype: np.dtype) -> Fn:
    """The scalar rule that adds an item into reduction ``reduction``'s running value.

    NumPy's reduce loop multiplies complex values with its scalar (unfused) product, not
    the SIMD one elementwise ``*`` uses, so a complex product does too."""
    if reduction == "reduce_prod" and dtype.kind == "c":
        return lambda b, dtype, acc, item: mul_unfused(b, acc, item)
    return scalar_rule(ALL_PRIMITIVES[REDUCERS[reduction][0]])


def lower_reduction(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """``reduce_*`` over ``axes``. Float sums are blocked and pairwise (:mod:`.pairwise`),
    complex sums too, part by part; the rest accumulate sequentially (exact for
    integers, NaN-propagating for max/min). A complex product starts from the first
    item, as NumPy's reduce does (``1 * z`` is not ``z`` for infinite parts)."""
    (x,), out = args, eqn.outs[0]
    axes = sorted(eqn.params["axes"])
    if not axes:  # NumPy copies; ``0 + x`` would lose the sign of -0.0
        if isinstance(x, Scalar):
            return [x]
        dest = ctx.home(out)
        copy_into(ctx, x, dest)
        return [dest]
    assert isinstance(x, View)
    b, dtype = ctx.b, x.dtype
    _, identity = REDUCERS[eqn.prim.name]
    combine = combiner(eqn.prim.name, dtype)
    kept = [k for k in range(x.ndim) if k not in axes]
    acc = Accumulator(ctx, reg_type(dtype), "acc")
    first_item = eqn.prim.name == "reduce_prod" and dtype.kind == "c"

    def reduce_at(kept_idx: Sequence[ir.Value]) -> ir.Value:
        if eqn.prim.name == "reduce_sum" and dtype.kind in "fc":
            def index_of(outer: Sequence[ir.Value], i: ir.Value) -> list[ir.Value]:
                return merge_index(x.ndim, (kept, kept_idx), (axes[:-1], outer), (axes[-1:], [i]))
            if dtype.kind == "f":
                return pairwise_sum(b, x, axes, index_of)
            return pack(b, *(pairwise_sum(b, part_view(b, x, k), axes, index_of)
                             for k in (0, 1)))
        def sequential() -> ir.Value:
            acc.set(constant(dtype, identity(dtype)))
            with loop_nest(b, [x.dims[k] for k in axes], "r") as red_idx:
                item = load(b, x, merge_index(x.ndim, (kept, kept_idx), (axes, red_idx)))
                combined = combine(b, dtype, acc.get(), item)
                if first_item:
                    first: ir.Value = ir.Constant(ir.IntType(1), 1)
                    for i in red_idx:
                        first = b.and_(first, b.icmp_signed("==", i, i64(0)))
                    combined = select(b, first, item, combined)
                acc.set(combined)
            return acc.get()

        if eqn.prim.name in ("reduce_max", "reduce_min") and dtype.kind == "f" \
                and len(axes) == 1:
            index = merge_index(x.ndim, (kept, kept_idx), (axes, [i64(0)]))
            return contiguous_extreme(b, x, index, axes[0], combine,
                                      constant(dtype, identity(dtype)), sequential)
        return sequential()

    return materialize(ctx, out, reduce_at, "k")


def lower_arg_reduction(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """``argmax``/``argmin`` along ``axis``: the first extreme; a NaN is the extreme.

    Starting from the identity (-inf for argmax) with index 0 gives the first occurrence
    without reading element 0 up front, so an empty axis cannot read out of bounds.
    """
    (x,), out = args, eqn.outs[0]
    assert isinstance(x, View)
    b, dtype, axis = ctx.b, x.dtype, eqn.params["axis"]
    is_max = eqn.prim.name == "argmax"
    better = scalar_rule(ALL_PRIMITIVES["gt" if is_max else "lt"])
    isnan = scalar_rule(ALL_PRIMITIVES["isnan"])
    kept = [k for k in range(x.ndim) if k != axis]
    best = Accumulator(ctx, reg_type(dtype), "best")
    where = Accumulator(ctx, I64, "where")

    def arg_at(kept_idx: Sequence[ir.Value]) -> ir.Value:
        def sequential() -> ir.Value:
            best.set(constant(dtype, (lowest if is_max else highest)(dtype)))
            where.set(i64(0))
            with for_range(b, x.dims[axis], "a") as i:
                item = load(b, x, merge_index(x.ndim, (kept, kept_idx), ([axis], [i])))
                current = best.get()
                first_nan = b.and_(isnan(b, dtype, item), b.not_(isnan(b, dtype, current)))
                take = b.or_(better(b, dtype, item, current), first_nan)
                best.set(b.select(take, item, current))
                where.set(b.select(take, i, where.get()))
            return where.get()

        if dtype.kind != "f":
            return sequential()
        index = merge_index(x.ndim, (kept, kept_idx), ([axis], [i64(0)]))
        extreme = combiner("reduce_max" if is_max else "reduce_min", dtype)
        return contiguous_arg_extreme(b, x, index, axis, extreme,
                                      constant(dtype, (lowest if is_max else highest)(dtype)),
                                      sequential)

    return materialize(ctx, out, arg_at, "k")


def lower_cumulative(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """``cumsum``/``cumprod`` along ``axis``, sequential as NumPy's ``accumulate``.

    The running sum starts at -0.0 (``-0.0 + x == x`` for every x), so the first
    element is copied exactly, as NumPy does.
    """
    (x,), out = args, eqn.outs[0]
    b, dtype, axis = ctx.b, out.type.dtype, eqn.params["axis"]
    is_sum = eqn.prim.name == "cumsum"
    combine = combiner("reduce_sum" if is_sum else "reduce_prod", dtype)
    negative_zero = complex(-0.0, -0.0) if dtype.kind == "c" else -0.0
    start = constant(dtype, (negative_zero if dtype.kind in "fc" else 0) if is_sum else 1)
    first_item = not is_sum and dtype.kind == "c"  # (1+0j) * z is not z: copy z
    dest = ctx.home(out)
    kept = [k for k in range(dest.ndim) if k != axis]
    acc = Accumulator(ctx, reg_type(dtype), "acc")
    with loop_nest(b, [dest.dims[k] for k in kept], "k") as kept_idx:
        acc.set(start)
        with for_range(b, dest.dims[axis], "s") as i:
            idx = merge_index(dest.ndim, (kept, kept_idx), ([axis], [i]))
            item = load(b, x, idx)
            combined = combine(b, dtype, acc.get(), item)
            if first_item:
                combined = select(b, b.icmp_signed("==", i, i64(0)), item, combined)
            acc.set(combined)
            store(b, dest, idx, acc.get())
    return [dest]


RULES: dict[Primitive, EqnRule] = {
    **dict.fromkeys(REDUCTIONS.values(), lower_reduction),
    **dict.fromkeys(ARG_REDUCTIONS.values(), lower_arg_reduction),
    **dict.fromkeys(CUMULATIVE.values(), lower_cumulative),
}
