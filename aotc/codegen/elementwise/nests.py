"""Loop nests that materialize values: elementwise maps, ``iota`` and copies.

Each rule takes the :class:`~.context.Lowering`, the equation and its operand values,
and returns the result values. A rank-0 result is computed straight into a register;
anything else is written into its home (see :mod:`.layout`) by a loop nest over the
output's dims (a :func:`~.loops.strided_nest`, so loops over caller arrays get a
unit-stride copy that vectorizes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llvmlite import ir

from ...ir import Eqn, Var
from ...ops.core import ALL_PRIMITIVES, ELEMENTWISE, Primitive
from ...ops.shape import bind_dim_p, dim_value_p, iota_p
from ..core.context import EqnRule, Lowering
from ..core.dtypes import INT64, i64
from ..core.loops import At, loop_nest, strided_nest
from ..core.values import Scalar, Value, View, store
from ..memory.rowcopy import copy_rows
from .convert import convert
from .scalar import rule_params, scalar_rule


def merge_index(ndim: int, *groups: tuple[Sequence[int], Sequence[ir.Value]]) -> list[ir.Value]:
    """Merge loop indices into one index per axis (axes listed per group)."""
    idx: list[ir.Value] = [i64(0)] * ndim
    for axes, values in groups:
        for k, v in zip(axes, values, strict=True):
            idx[k] = v
    return idx


class Accumulator:
    """A register-allocated running value (an entry-block alloca)."""

    def __init__(self, ctx: Lowering, ty: ir.Type, name: str) -> None:
        self.b = ctx.b
        self.slot = ctx.b.entry_alloca(ty, name=name)
        self.ty = ty

    def get(self) -> ir.Value:
        return self.b.load(self.slot, typ=self.ty)

    def set(self, value: ir.Value) -> None:
        self.b.store(value, self.slot)


def materialize(ctx: Lowering, out: Var, value_at: Callable[[Sequence[ir.Value]], ir.Value],
                name: str) -> list[Value]:
    """A result computed one output index at a time: straight into a register when it
    is rank 0, else by a loop nest storing into its home."""
    if out.type.ndim == 0:
        return [Scalar(value_at([]), out.type.dtype)]
    dest = ctx.home(out)
    with loop_nest(ctx.b, dest.dims, name) as idx:
        store(ctx.b, dest, idx, value_at(idx))
    return [dest]


def copy_into(ctx: Lowering, src: Value, dest: View) -> None:
    """``dest[...] = src`` (a Scalar source is broadcast)."""
    views = [dest, src] if isinstance(src, View) else [dest]

    def loop() -> None:
        strided_nest(ctx.b, dest.dims, views, lambda at: at.store(dest, at.load(src)), "c")

    if isinstance(src, View) and src.ndim and src.dtype == dest.dtype:
        copy_rows(ctx.b, dest, src, loop)
    else:
        loop()


def lower_elementwise(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    rule = scalar_rule(eqn.prim)
    # The operand dtype: the last input's (select's condition comes first).
    dtype = eqn.inputs[-1].type.dtype
    params = rule_params(eqn)
    out = eqn.outs[0]
    if out.type.ndim == 0:
        values = [a.value for a in args if isinstance(a, Scalar)]
        return [Scalar(rule(ctx.b, dtype, *values, **params), out.type.dtype)]
    dest = ctx.home(out)

    def body(at: At) -> None:
        at.store(dest, rule(ctx.b, dtype, *(at.load(a) for a in args), **params))

    strided_nest(ctx.b, dest.dims, [dest, *(a for a in args if isinstance(a, View))], body)
    return [dest]


def lower_dim_value(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    return [Scalar(ctx.dims(eqn.params["expr"]), INT64)]


def lower_bind_dim(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Clamp the value into ``[0, upper]`` (tracing made it so; this makes it certain, as
    buffers were sized from ``upper``; 0 if ``upper`` is negative, where the code using
    the size does not run) and bind the size symbol to it. A ``proven`` value is in
    range already (see :mod:`aotc.passes.loop_versioning`)."""
    (value,) = args
    assert isinstance(value, Scalar)
    b = ctx.b
    clamped = value.value
    if not eqn.params.get("proven", False):
        upper = ctx.dims(eqn.params["upper"])
        clamped = b.select(b.icmp_signed(">", clamped, upper), upper, clamped)
        clamped = b.select(b.icmp_signed("<", clamped, i64(0)), i64(0), clamped)
    ctx.dims.bind(eqn.params["symbol"], clamped)
    return [Scalar(clamped, INT64)]


def lower_iota(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Each element's index along ``dimension``, converted to the result dtype."""
    out, axis = eqn.outs[0], eqn.params["dimension"]
    return materialize(ctx, out, lambda idx: convert(ctx.b, idx[axis], INT64, out.type.dtype),
                       "e")


RULES: dict[Primitive, EqnRule] = {dim_value_p: lower_dim_value, bind_dim_p: lower_bind_dim,
                                  iota_p: lower_iota}
RULES.update({p: lower_elementwise for p in ALL_PRIMITIVES.values() if p.has(ELEMENTWISE)})
