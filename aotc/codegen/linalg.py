"""``dot_general``: a loop over the output with the contraction as the inner loop nest.

This is the plain baseline (no blocking, no BLAS): output axes are the batch axes, then
the lhs free axes, then the rhs free axes, and each element is the sum over the
contracted axes of ``lhs * rhs`` with the dtype's ``add``/``mul`` rules (so bool is
any-of-and, and integers wrap).
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir

from ..ir import Eqn
from ..ops.core import ALL_PRIMITIVES, Primitive
from ..ops.linalg import dot_general_p
from .context import Lowering
from .dtypes import constant, reg_type
from .loops import loop_nest
from .nests import Accumulator, EqnRule, merge_index
from .scalar import scalar_rule
from .values import Scalar, Value, View, load, store


def _dims(value: Value) -> tuple[ir.Value, ...]:
    return value.dims if isinstance(value, View) else ()


def lower_dot_general(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    lhs, rhs = args
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    lfree = [i for i in range(lt.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rt.ndim) if i not in rc and i not in rb]
    b, out = ctx.b, eqn.outs[0]
    dtype = out.type.dtype
    add = scalar_rule(ALL_PRIMITIVES["add"])
    mul = scalar_rule(ALL_PRIMITIVES["mul"])
    acc = Accumulator(ctx, reg_type(dtype), "dot")
    contracted = [_dims(lhs)[i] for i in lc]

    def dot_at(out_idx: Sequence[ir.Value]) -> ir.Value:
        nb, nl = len(lb), len(lfree)
        batch, left, right = out_idx[:nb], out_idx[nb:nb + nl], out_idx[nb + nl:]
        acc.set(constant(dtype, 0))
        with loop_nest(b, contracted, "c") as c_idx:
            x = load(b, lhs, merge_index(lt.ndim, (lb, batch), (lfree, left), (lc, c_idx)))
            y = load(b, rhs, merge_index(rt.ndim, (rb, batch), (rfree, right), (rc, c_idx)))
            acc.set(add(b, dtype, acc.get(), mul(b, dtype, x, y)))
        return acc.get()

    if out.type.ndim == 0:
        return [Scalar(dot_at([]), dtype)]
    dest = ctx.home(out)
    with loop_nest(b, dest.dims, "o") as idx:
        store(b, dest, idx, dot_at(idx))
    return [dest]


RULES: dict[Primitive, EqnRule] = {dot_general_p: lower_dot_general}
