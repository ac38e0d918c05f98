"""Lowering of ``sort``, ``argsort`` (row by row, through :mod:`.radix`) and
``searchsorted`` (a binary search per key).

A sort along ``axis`` sorts every row ``x[i, ..., :, ..., k]`` independently: the loop
nest runs over the other axes and calls the module's row helper for the dtype with the
row's address and byte stride (any layout: transposed and reversed views are read in
place), the output row in the result's C-contiguous buffer, and the work buffers the
buffer plan reserved for the equation (:mod:`.workspace`). When the sorted axis is the
result's last one, its rows are contiguous and double as the second ping-pong buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from llvmlite import ir

from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.sorting import argsort_p, searchsorted_p, sort_p
from ..core.context import EqnRule, Lowering
from ..core.dtypes import I64, i64
from ..core.loops import first_not_before, loop_nest
from ..core.values import Value, View, element_ptr, load
from ..elementwise.nests import Accumulator, materialize, merge_index
from ..memory.workspace import workspace
from .radix import sort_indices_function, sort_values_function


def _work(ctx: Lowering, eqn: Eqn) -> list[ir.Value]:
    """The data pointers of the equation's work buffers, in :mod:`.workspace` order."""
    return [ctx.buffer(ctx.layout.staging[(eqn, "work", k)], atype).data
            for k, atype in enumerate(workspace(eqn))]


def _by_rows(ctx: Lowering, eqn: Eqn, x: View, dest: View, fn: ir.Function,
             work: list[ir.Value], contiguous_slot: int) -> None:
    """Call ``fn`` on every row along ``axis``; the work buffer at ``contiguous_slot``
    is the output row itself when that is contiguous (the last axis)."""
    b, axis = ctx.b, eqn.params["axis"]
    last = axis == x.ndim - 1
    others = [k for k in range(x.ndim) if k != axis]
    with loop_nest(b, [x.dims[k] for k in others], "row") as idx:
        start = merge_index(x.ndim, (others, idx), ([axis], [i64(0)]))
        src, dst = element_ptr(b, x, start), element_ptr(b, dest, start)
        buffers = list(work)
        if last:
            buffers.insert(contiguous_slot, dst)
        b.call(fn, [src, x.strides[axis], x.dims[axis], dst, dest.strides[axis], *buffers])


def lower_sort(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    (x,) = args
    assert isinstance(x, View)  # sorting needs an axis
    dest = ctx.home(eqn.outs[0])
    fn = sort_values_function(ctx.b.module, x.dtype, ctx.b.vector_bytes)
    _by_rows(ctx, eqn, x, dest, fn, _work(ctx, eqn), contiguous_slot=1)
    return [dest]


def lower_argsort(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    (x,) = args
    assert isinstance(x, View)
    dest = ctx.home(eqn.outs[0])
    fn = sort_indices_function(ctx.b.module, x.dtype)
    _by_rows(ctx, eqn, x, dest, fn, _work(ctx, eqn), contiguous_slot=3)
    return [dest]


def less(b: ir.IRBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    """NumPy's sort order on register values: ``x < y`` with NaN after every number."""
    if dtype.kind == "f":
        ordered = b.fcmp_ordered("<", x, y)
        return b.or_(ordered, b.and_(b.fcmp_unordered("uno", y, y),
                                     b.fcmp_ordered("ord", x, x)))
    if dtype.kind == "i":
        return b.icmp_signed("<", x, y)
    return b.icmp_unsigned("<", x, y)


def lower_searchsorted(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """NumPy's binary search: the first index whose element is not before the key
    (``'left'``), or after it (``'right'``), in :func:`less`'s order."""
    a, v = args
    assert isinstance(a, View)
    b, dtype, left = ctx.b, a.dtype, eqn.params["side"] == "left"
    n = a.dims[0]
    low, span = Accumulator(ctx, I64, "lo"), Accumulator(ctx, I64, "span")

    def search(idx: Sequence[ir.Value]) -> ir.Value:
        key = load(b, v, idx)

        def before(mid: ir.Value) -> ir.Value:
            item = load(b, a, [mid])
            return less(b, dtype, item, key) if left else b.not_(less(b, dtype, key, item))

        return first_not_before(b, n, before, low, span)

    return materialize(ctx, eqn.outs[0], search, "ss")


RULES: dict[Primitive, EqnRule] = {
    sort_p: lower_sort,
    argsort_p: lower_argsort,
    searchsorted_p: lower_searchsorted,
}
