"""``dot_general``, behind one lowering function (a micro-kernel can replace it later).

Output axes are the batch axes, then the lhs free axes, then the rhs free axes; each
element is the sum over the contracted axes of ``lhs * rhs`` with the dtype's
``add``/``mul`` rules (so bool is any-of-and, and integers wrap).

With rhs free axes (a matrix product) the loops run in i-k-j order: for each output row
``(batch, i)``, zero it, then for each contracted index ``k`` add ``lhs[i, k] *
rhs[k, :]`` to the whole row. The innermost loop streams one row of ``rhs`` and one
row of the output, both contiguous in the usual layouts, so it vectorizes (it is a
:func:`~.loops.strided_nest`), and the output row stays in cache across ``k``. Each
element still sums its products in increasing ``k`` from 0, exactly the naive order,
so results are bitwise those of the i-j-k loop. Without rhs free axes (a matrix-vector
or vector product) each element is a register accumulation over the contracted axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from llvmlite import ir

from ..ir import Eqn
from ..ops.core import ALL_PRIMITIVES, Primitive
from ..ops.linalg import dot_general_p
from .context import Lowering
from .dtypes import constant, i64, reg_type
from .loops import At, loop_nest, strided_nest
from .nests import Accumulator, EqnRule, copy_into, materialize, merge_index
from .scalar import scalar_rule
from .values import Scalar, Value, View, element_ptr, load

_ADD, _MUL = ALL_PRIMITIVES["add"], ALL_PRIMITIVES["mul"]


def _dims(value: Value) -> tuple[ir.Value, ...]:
    return value.dims if isinstance(value, View) else ()


def _axes_view(b: ir.IRBuilder, view: View, fixed: Sequence[ir.Value],
               axes: Sequence[int]) -> View:
    """The sub-array of ``view`` at index ``fixed`` (zeros on ``axes``) over ``axes``."""
    return View(element_ptr(b, view, fixed), tuple(view.dims[a] for a in axes),
                tuple(view.strides[a] for a in axes), view.dtype, view.align)


def lower_dot_general(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    lhs, rhs = args
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    lfree = [i for i in range(lt.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rt.ndim) if i not in rc and i not in rb]
    b, out = ctx.b, eqn.outs[0]
    dtype = out.type.dtype
    add, mul = scalar_rule(_ADD), scalar_rule(_MUL)
    contracted = [_dims(lhs)[i] for i in lc]
    nb, nl = len(lb), len(lfree)

    def lhs_at(batch: Sequence[ir.Value], left: Sequence[ir.Value],
               c_idx: Sequence[ir.Value]) -> ir.Value:
        return load(b, lhs, merge_index(lt.ndim, (lb, batch), (lfree, left), (lc, c_idx)))

    if out.type.ndim == 0 or not rfree or not isinstance(rhs, View):
        return _dot_per_element(ctx, eqn, lhs, rhs, lfree, rfree, contracted)
    dest = ctx.home(out)
    zero = Scalar(constant(dtype, 0), dtype)
    rfree_dims = dest.dims[nb + nl:]
    with loop_nest(b, dest.dims[:nb + nl], "o") as outer:
        batch, left = outer[:nb], outer[nb:]
        row = View(element_ptr(b, dest, [*outer, *(i64(0) for _ in rfree)]), rfree_dims,
                   dest.strides[nb + nl:], dtype, dest.align)
        copy_into(ctx, zero, row)
        with loop_nest(b, contracted, "k") as c_idx:
            a = lhs_at(batch, left, c_idx)
            zeros = [i64(0)] * len(rfree)
            rows = _axes_view(b, rhs, merge_index(rt.ndim, (rb, batch), (rc, c_idx),
                                                  (rfree, zeros)), rfree)

            def axpy(at: At, a: ir.Value = a, rows: View = rows, row: View = row) -> None:
                at.store(row, add(b, dtype, at.load(row), mul(b, dtype, a, at.load(rows))))

            strided_nest(b, rfree_dims, [row, rows], axpy, "j")
    return [dest]


def _dot_per_element(ctx: Lowering, eqn: Eqn, lhs: Value, rhs: Value, lfree: list[int],
                     rfree: list[int], contracted: list[ir.Value]) -> list[Value]:
    """Each output element accumulated in a register over the contracted axes."""
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    b, out = ctx.b, eqn.outs[0]
    dtype: np.dtype = out.type.dtype
    add, mul = scalar_rule(_ADD), scalar_rule(_MUL)
    acc = Accumulator(ctx, reg_type(dtype), "dot")

    def dot_at(out_idx: Sequence[ir.Value]) -> ir.Value:
        nb, nl = len(lb), len(lfree)
        batch, left, right = out_idx[:nb], out_idx[nb:nb + nl], out_idx[nb + nl:]
        acc.set(constant(dtype, 0))
        with loop_nest(b, contracted, "c") as c_idx:
            x = load(b, lhs, merge_index(lt.ndim, (lb, batch), (lfree, left), (lc, c_idx)))
            y = load(b, rhs, merge_index(rt.ndim, (rb, batch), (rfree, right), (rc, c_idx)))
            acc.set(add(b, dtype, acc.get(), mul(b, dtype, x, y)))
        return acc.get()

    return materialize(ctx, out, dot_at, "o")


RULES: dict[Primitive, EqnRule] = {dot_general_p: lower_dot_general}
