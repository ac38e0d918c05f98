"""The rule for ``fusion`` equations, and the lowering of those headed by a matrix
product (epilogue fusion, built by :mod:`aotc.passes.epilogue`).

``relu(x @ W + b)`` as a product, then a loop over its result, writes the product to
memory and reads it back. Here the product's tiles are finished one at a time inside
the GEMM (:func:`~.gemm.tiled_gemm`), and as soon as one is final (after the last slice
of the contracted axis) the rest of the body runs over it: the fused loop nest of
:mod:`.fusion`, started at the tile's origin, reading the tile from the first-level
cache and writing the result in its place. The product and the result share one
buffer: the body reads the product only at the index it writes.

Products the tiled GEMM does not take (a few rows, one column, a few columns of a small
``B``, an empty contracted axis) run as :func:`~.linalg.matrix_product` picks, then the
body over the whole result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from ...ir import Eqn, Program
from ...ops.core import Primitive
from ...ops.fusion import fusion_p
from ...ops.linalg import dot_general_p
from ..core.builder import KernelBuilder
from ..core.context import EqnRule, Lowering
from ..core.dtypes import i64
from ..core.values import Value, View
from ..linalg.dot_general import FEW_ROWS, matrix_product, narrow_product
from ..linalg.gemm import tiled_gemm
from ..linalg.gemm import workspace as gemm_workspace
from ..parallel.gemm import large_product, parallel_gemm
from .fusion import Nest, lower_fusion
from .fusion_plan import plan_fusion


def lower_dot_epilogue(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    body = eqn.params["body"]
    head = body.eqns[0]
    (product,) = head.outs
    env = dict(zip(body.inputs, args, strict=True))
    lhs, rhs = (env[a] for a in head.inputs)
    assert isinstance(lhs, View) and isinstance(rhs, View)
    dest = ctx.home(eqn.outs[0])
    rest = Program((product, *body.inputs), body.eqns[1:], body.outputs, name="fusion")
    plan = plan_fusion(rest, tuple(eqn.params["shape"]), ())
    inputs = {product: dest, **env}
    (lc, rc), _ = head.params["contracting"], head.params["batch"]
    m_axis, n_axis = 1 - lc[0], 1 - rc[0]
    m, k, n = lhs.dims[m_axis], lhs.dims[lc[0]], rhs.dims[n_axis]
    a = (lhs.data, lhs.strides[m_axis], lhs.strides[lc[0]])
    bm = (rhs.data, rhs.strides[rc[0]], rhs.strides[n_axis])
    c = (dest.data, dest.strides[0], dest.strides[1])
    work = [ctx.buffer(ctx.layout.staging[(eqn, "work", i)], atype).data
            for i, atype in enumerate(gemm_workspace(head))]

    def rest_over(origin: dict[int, ir.Value], dims: Sequence[ir.Value]) -> None:
        Nest(ctx, plan, inputs, eqn.outs, dims, origin).run()

    b = ctx.b
    tiled = b.and_(b.icmp_signed(">", m, i64(FEW_ROWS)),
                   b.and_(b.icmp_signed(">", n, i64(1)), b.icmp_signed(">", k, i64(0))))
    tiled = b.and_(tiled, b.not_(narrow_product(b, dest.dtype, n, k)))
    with b.if_else(tiled, likely=True) as (then, other):
        with then, ctx.region():
            if ctx.parallel:  # slabs of rows over threads when large, as a plain product
                split = large_product(b, dest.dtype, m, n, k)
                with b.if_else(split, likely=True) as (slabs, serial):
                    with slabs, ctx.region():
                        parallel_gemm(
                            ctx, dest.dtype, [m, n, k, *a, *bm, *c, *work, ctx.runtime],
                            lambda i, j, rows, cols: rest_over({0: i, 1: j}, (rows, cols)))
                    with serial, ctx.region():
                        _serial(b, dest.dtype, m, n, k, a, bm, c, work, ctx.runtime, rest_over)
            else:
                _serial(b, dest.dtype, m, n, k, a, bm, c, work, ctx.runtime, rest_over)
        with other, ctx.region():
            matrix_product(ctx, dest.dtype, work, m, n, k, a, bm, c)
            rest_over({}, (m, n))
    return [dest]


def _serial(b: KernelBuilder, dtype: np.dtype, m: ir.Value, n: ir.Value, k: ir.Value,
            a: tuple[ir.Value, ...], bm: tuple[ir.Value, ...], c: tuple[ir.Value, ...],
            work: list[ir.Value], runtime: ir.Value,
            rest_over: Callable[[dict[int, ir.Value], Sequence[ir.Value]], None]) -> None:
    tiled_gemm(b, dtype, [m, n, k, *a, *bm, *c, *work, runtime],
               lambda i, j, rows, cols: rest_over({0: i, 1: j}, (rows, cols)))


def lower_fused(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """A fusion equation: a loop nest, or a product with its epilogue."""
    body = eqn.params["body"]
    if body.eqns and body.eqns[0].prim is dot_general_p:
        return lower_dot_epilogue(ctx, eqn, args)
    return lower_fusion(ctx, eqn, args)


RULES: dict[Primitive, EqnRule] = {fusion_p: lower_fused}
