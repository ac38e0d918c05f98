"""View primitives: a new index map over the same bytes, computed without a loop.

``VIEW_RULES[prim](ctx, eqn, x, *more) -> Value``. Each rule only derives a data pointer,
dims and byte strides from its operand's, like NumPy's own view machinery. The one
exception is a ``reshape`` that the layout decided cannot be a view (a non-contiguous
operand whose non-unit dims change): it copies into its home first.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.shape import broadcast_in_dim_p, refine_shape_p, reshape_p, slice_p, transpose_p
from ..core.context import Lowering
from ..core.dtypes import I8, i64
from ..core.values import (
    Scalar,
    Value,
    View,
    c_strides,
    contiguous_view,
    load,
    scaled,
    step_value,
    unit_axes_changed,
)
from ..elementwise.nests import copy_into

ViewRule = Callable[..., Value]  # (ctx, eqn, *operands) -> Value


def _broadcast_in_dim(ctx: Lowering, eqn: Eqn, x: Value) -> Value:
    out = eqn.outs[0]
    if out.type.ndim == 0:
        return x
    if out in ctx.layout.homes:  # updates overwrite all of it before any read (inplace)
        return ctx.home(out)
    v = ctx.as_view(x)
    strides: list[ir.Value] = [i64(0)] * out.type.ndim  # new and stretched axes
    in_shape = eqn.inputs[0].type.shape
    for i, axis in enumerate(eqn.params["broadcast_dimensions"]):
        if not (in_shape[i].is_const and in_shape[i].value == 1):
            strides[axis] = v.strides[i]
    return View(v.data, ctx.shape(out), tuple(strides), v.dtype, v.align)


def _transpose(ctx: Lowering, eqn: Eqn, x: Value) -> Value:
    if isinstance(x, Scalar):
        return x
    perm = eqn.params["permutation"]
    return View(x.data, tuple(x.dims[p] for p in perm), tuple(x.strides[p] for p in perm),
                x.dtype, x.align)


def _slice(ctx: Lowering, eqn: Eqn, x: Value) -> Value:
    if isinstance(x, Scalar):
        return x
    b = ctx.b
    offset: ir.Value = i64(0)
    strides = []
    for start, step, stride in zip(eqn.params["start"], eqn.params["step"], x.strides, strict=True):
        offset = b.add(offset, b.mul(ctx.dims(start), stride))
        strides.append(scaled(b, stride, step_value(ctx.dims, step)))
    data = b.gep(x.data, [offset], source_etype=I8)
    return View(data, ctx.shape(eqn.outs[0]), tuple(strides), x.dtype, x.align)


def _refine_shape(ctx: Lowering, eqn: Eqn, x: Value) -> Value:
    """The same data; a check proved the new (symbolic) sizes equal the old ones."""
    if isinstance(x, Scalar):
        return x
    return View(x.data, ctx.shape(eqn.outs[0]), x.strides, x.dtype, x.align)


def _reshape(ctx: Lowering, eqn: Eqn, x: Value) -> Value:
    (xvar,), (out,) = eqn.inputs, eqn.outs
    b = ctx.b
    if out in ctx.layout.homes:  # not expressible as a view: copy in C order
        assert isinstance(x, View)  # a 0-d operand always reshapes as a view
        dest = ctx.home(out)
        copy_into(ctx, x, View(dest.data, x.dims, c_strides(b, x.dims, x.dtype.itemsize),
                               x.dtype, dest.align))
        return dest
    if out.type.ndim == 0:
        return Scalar(load(b, x, [i64(0)] * xvar.type.ndim), xvar.type.dtype)
    v = ctx.as_view(x)
    if xvar.type.ndim == 0 or xvar in ctx.layout.contiguous:
        view = contiguous_view(b, v.data, ctx.shape(out), v.dtype)
        return View(view.data, view.dims, view.strides, v.dtype, v.align)
    # Only size-1 axes are added or dropped.
    return unit_axes_changed(v, xvar.type.shape, out.type.shape, ctx.shape(out))


VIEW_RULES: dict[Primitive, ViewRule] = {
    broadcast_in_dim_p: _broadcast_in_dim,
    transpose_p: _transpose,
    slice_p: _slice,
    reshape_p: _reshape,
    refine_shape_p: _refine_shape,
}
