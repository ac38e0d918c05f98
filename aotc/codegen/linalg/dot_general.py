"""``dot_general``: float matrix products through :mod:`.gemm`, the rest by loops here.

Output axes are the batch axes, then the lhs free axes, then the rhs free axes; each
element is the sum over the contracted axes of ``lhs * rhs`` with the dtype's
``add``/``mul`` rules (so bool is any-of-and, and integers wrap).

A float (f32/f64) product with lhs free axes, one rhs free axis and one contracted axis
(``A @ B``, ``x @ W`` with a 3-D ``x``, batched or not, any layout) takes the fastest of,
chosen at run time from its sizes and strides: the i-k-j loops below when it is tiny
(:data:`FEW_PRODUCTS`), a matrix-vector product for one column, :mod:`.gemm_rows` for
at most four rows, and otherwise :mod:`.gemm`, which packs and blocks it for the caches
and runs a register-blocked vector micro-kernel. Their sums are ordered (and fused)
differently from the naive loop's, as BLAS's are, within the same error bound.

Other products with rhs free axes (integers, bool, complex, several rhs free or
contracted axes, and ``v @ B``) run in i-k-j order: for each output row ``(batch, i)``,
zero it, then for each contracted index ``k`` add ``lhs[i, k] * rhs[k, :]`` to the whole
row. The innermost loop streams one row of ``rhs`` and one row of the output, both
contiguous in the usual layouts, so it vectorizes (it is a
:func:`~.loops.strided_nest`), and the output row stays in cache across ``k``. Each
element sums its products in increasing ``k`` from 0, exactly the naive order. Without
rhs free axes (a matrix-vector or vector product) each element is a register
accumulation over the contracted axes; a float one over one contracted axis is
:mod:`.gemm_dot`'s vectorized dot product (a matrix-vector product several rows at a
time), which keeps up with memory bandwidth.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from llvmlite import ir

from ...ir import Eqn
from ...ops.core import ALL_PRIMITIVES, Primitive
from ...ops.linalg import dot_general_p
from ..core.builder import KernelBuilder
from ..core.context import EqnRule, Lowering
from ..core.dtypes import I8, constant, i64, reg_type
from ..core.loops import At, for_range, loop_nest, strided_nest
from ..core.values import Scalar, Value, View, element_ptr, load
from ..elementwise.nests import Accumulator, copy_into, materialize, merge_index
from ..elementwise.scalar import scalar_rule
from .gemm import FLOATS, call_gemm, is_gemm
from .gemm import workspace as gemm_workspace
from .gemm_dot import dot_function, gemv_function
from .gemm_rows import MAX_ROWS, rows_function

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
    contracted = [_dims(lhs)[i] for i in lc]

    if out.type.ndim == 0 or not rfree or not isinstance(rhs, View):
        return _dot_per_element(ctx, eqn, lhs, rhs, lfree, rfree, contracted)
    dest = ctx.home(out)
    if is_gemm(eqn) and isinstance(lhs, View):
        m = lhs.dims[lfree[-1]]
        for axis in lfree[:-1]:
            m = b.mul(m, lhs.dims[axis])
        n, k = rhs.dims[rfree[0]], contracted[0]
        with b.if_else(_few(b, m, n, k), likely=False) as (naive, blocked):
            with naive, ctx.region():
                _row_by_row(ctx, eqn, lhs, rhs, dest, lfree, rfree, contracted)
            with blocked, ctx.region():
                _gemm(ctx, eqn, lhs, rhs, dest, lfree, rfree[0])
    else:
        _row_by_row(ctx, eqn, lhs, rhs, dest, lfree, rfree, contracted)
    return [dest]


#: Products with at most this many multiply-adds skip the GEMM: packing and blocking
#: cost more than they save (measured: 8^3 is faster by the i-k-j loops, 16^3 by the GEMM).
FEW_PRODUCTS = 2048
#: Products with at most this many rows of ``A`` read ``B`` once, unpacked
#: (:mod:`.gemm_rows`, or one matrix-vector product per row when ``B`` is transposed).
FEW_ROWS = MAX_ROWS
#: Bytes of ``B`` up to which a product of one vector of columns skips the GEMM
#: (:func:`narrow_product`): about the first-level cache.
NARROW_B = 32 * 1024


def _few(b: ir.IRBuilder, m: ir.Value, n: ir.Value, k: ir.Value) -> ir.Value:
    """Whether an ``m x k @ k x n`` product is tiny (see :data:`FEW_PRODUCTS`). Each dim
    is bounded before multiplying, so the product cannot overflow."""
    def at_most(x: ir.Value, bound: int) -> ir.Value:
        return b.icmp_signed("<=", x, i64(bound))

    bounded = b.and_(b.and_(at_most(m, FEW_PRODUCTS), at_most(n, FEW_PRODUCTS)),
                     at_most(k, FEW_PRODUCTS))
    return b.and_(bounded, at_most(b.mul(b.mul(m, n), k), FEW_PRODUCTS))


def _row_by_row(ctx: Lowering, eqn: Eqn, lhs: Value, rhs: View, dest: View, lfree: list[int],
                rfree: list[int], contracted: list[ir.Value]) -> None:
    """The i-k-j loops (see the module doc) into ``dest``."""
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    b, dtype = ctx.b, dest.dtype
    add, mul = scalar_rule(_ADD), scalar_rule(_MUL)
    nb, nl = len(lb), len(lfree)
    zero = Scalar(constant(dtype, 0), dtype)
    rfree_dims = dest.dims[nb + nl:]
    with loop_nest(b, dest.dims[:nb + nl], "o") as outer:
        batch, left = outer[:nb], outer[nb:]
        row = View(element_ptr(b, dest, [*outer, *(i64(0) for _ in rfree)]), rfree_dims,
                   dest.strides[nb + nl:], dtype, dest.align)
        copy_into(ctx, zero, row)
        with loop_nest(b, contracted, "k") as c_idx:
            a = load(b, lhs, merge_index(lt.ndim, (lb, batch), (lfree, left), (lc, c_idx)))
            zeros = [i64(0)] * len(rfree)
            rows = _axes_view(b, rhs, merge_index(rt.ndim, (rb, batch), (rc, c_idx),
                                                  (rfree, zeros)), rfree)

            def axpy(at: At, a: ir.Value = a, rows: View = rows, row: View = row) -> None:
                at.store(row, add(b, dtype, at.load(row), mul(b, dtype, a, at.load(rows))))

            strided_nest(b, rfree_dims, [row, rows], axpy, "j")


def _gemm(ctx: Lowering, eqn: Eqn, lhs: View, rhs: View, dest: View, lfree: list[int],
          n_axis: int) -> None:
    """A float matrix product into ``dest`` (:func:`matrix_product`), over as few, as tall
    products as the strides allow: the lhs free axes are one axis of rows when they are
    laid out as one (a C-contiguous ``x`` of ``x @ W``, 3-D), and so are the batch axes
    too when ``B`` is the same for every batch element (broadcast: NumPy's ``x @ W``
    with a 3-D ``x`` reaches codegen as a batched product with ``W`` broadcast). Else
    one product per batch element and outer free index."""
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    b = ctx.b
    work = [ctx.buffer(ctx.layout.staging[(eqn, "work", k)], atype).data
            for k, atype in enumerate(gemm_workspace(eqn))]
    nb, nl = len(lb), len(lfree)
    zero = i64(0)
    free = [(lfree[j], nb + j) for j in range(nl)]
    batch_axes = [(lb[j], j) for j in range(nb)]
    same_b: ir.Value = ir.Constant(ir.IntType(1), 1)
    for axis in rb:
        same_b = b.and_(same_b, b.icmp_signed("==", rhs.strides[axis], zero))
    m_axis, c_axis = free[-1]

    def product(rows: list[tuple[int, int]], fixed: list[tuple[int, int, ir.Value]]) -> None:
        """``dest[fixed..., rows..., :] = lhs[fixed..., rows..., :] @ rhs[fixed..., :, :]``
        with ``rows`` merged into one axis (the caller checked they can be)."""
        l_idx, d_idx, r_idx = [zero] * lhs.ndim, [zero] * dest.ndim, [zero] * rhs.ndim
        for l_axis, d_axis, index in fixed:
            l_idx[l_axis], d_idx[d_axis] = index, index
            if d_axis < nb:
                r_idx[rb[d_axis]] = index
        m: ir.Value = i64(1)
        for l_axis, _ in rows:
            m = b.mul(m, lhs.dims[l_axis])
        matrix_product(ctx, dest.dtype, work, m, rhs.dims[n_axis], lhs.dims[lc[0]],
                 (element_ptr(b, lhs, l_idx), lhs.strides[m_axis], lhs.strides[lc[0]]),
                 (element_ptr(b, rhs, r_idx), rhs.strides[rc[0]], rhs.strides[n_axis]),
                 (element_ptr(b, dest, d_idx), dest.strides[c_axis], dest.strides[-1]))

    everything = b.and_(same_b, _mergeable(b, lhs, dest, batch_axes + free))
    with b.if_else(everything, likely=True) as (one, several):
        with one:
            product(batch_axes + free, [])
        with several, loop_nest(b, dest.dims[:nb], "batch") as batch:
            fixed = [(lb[j], j, batch[j]) for j in range(nb)]
            with b.if_else(_mergeable(b, lhs, dest, free), likely=True) as (merged, each):
                with merged:
                    product(free, fixed)
                with each, loop_nest(b, [lhs.dims[a] for a, _ in free[:-1]], "outer") as idx:
                    product(free[-1:], fixed + [(a, d, i) for (a, d), i in zip(
                        free[:-1], idx, strict=True)])


def _mergeable(b: ir.IRBuilder, lhs: View, dest: View, axes: list[tuple[int, int]]
               ) -> ir.Value:
    """Whether the (lhs axis, dest axis) pairs, outermost first, are each laid out as one
    axis in both: every outer stride is the inner stride times the inner dim."""
    ok: ir.Value = ir.Constant(ir.IntType(1), 1)
    for (lo, do), (li, di) in itertools.pairwise(axes):
        ok = b.and_(ok, b.icmp_signed("==", lhs.strides[lo], b.mul(lhs.strides[li], lhs.dims[li])))
        ok = b.and_(ok, b.icmp_signed("==", dest.strides[do],
                                      b.mul(dest.strides[di], dest.dims[di])))
    return ok


Operand = tuple[ir.Value, ir.Value, ir.Value]  # data, row stride, column stride (bytes)


def matrix_product(ctx: Lowering, dtype: np.dtype, work: list[ir.Value], m: ir.Value,
                   n: ir.Value, k: ir.Value, lhs: Operand, rhs: Operand, out: Operand) -> None:
    """``out[m, n] = lhs[m, k] @ rhs[k, n]``: by :mod:`.gemm`, or, chosen at run time, a
    matrix-vector product (:func:`~.gemm_dot.gemv_function`) for one column (``A @ x``
    reaches codegen as ``A @ x[:, None]``), and for a few rows (``m <= 4``)
    :mod:`.gemm_rows` or one matrix-vector product per row."""
    b = ctx.b
    (a, a_rs, a_cs), (bm, b_rs, b_cs), (c, c_rs, c_cs) = lhs, rhs, out
    gemv = gemv_function(b.module, dtype, b.vector_bytes, b.fma)
    size = i64(dtype.itemsize)
    unit = b.and_(b.icmp_signed("==", b_cs, size), b.icmp_signed("==", c_cs, size))
    few = b.icmp_signed("<=", m, i64(FEW_ROWS))
    rows = b.and_(few, unit)
    narrow = b.and_(unit, narrow_product(b, dtype, n, k))
    with b.if_else(b.icmp_signed("==", n, i64(1))) as (column, matrix):
        with column:  # A @ x[:, None], as NumPy's matmul traces A @ x: a gemv
            b.call(gemv, [m, k, a, a_rs, a_cs, bm, b_rs, c, c_rs])
        with matrix, b.if_else(b.or_(rows, narrow)) as (by_rows, other):
            with by_rows:  # a few rows at a time over unit-stride rows of B, unpacked
                rows_fn = rows_function(b.module, dtype, b.vector_bytes, b.fma)
                count = b.sdiv(b.add(m, i64(FEW_ROWS - 1)), i64(FEW_ROWS))
                with for_range(b, count, "rows") as block:
                    first = b.mul(block, i64(FEW_ROWS))
                    left = b.sub(m, first)
                    height = b.select(b.icmp_signed("<", left, i64(FEW_ROWS)), left,
                                      i64(FEW_ROWS))
                    b.call(rows_fn, [height, n, k, _row(b, a, first, a_rs), a_rs, a_cs, bm,
                                     b_rs, _row(b, c, first, c_rs), c_rs])
            with other, b.if_else(b.and_(few, b.icmp_signed("==", b_rs, size))) as (
                    by_columns, blocked):
                with by_columns:  # a few rows, B's columns unit-stride: C[i] = B.T @ A[i]
                    with for_range(b, m, "row") as i:
                        b.call(gemv, [n, k, bm, b_cs, b_rs, _row(b, a, i, a_rs), a_cs,
                                      _row(b, c, i, c_rs), c_cs])
                with blocked:
                    call_gemm(b, dtype, [m, n, k, a, a_rs, a_cs, bm, b_rs, b_cs, c, c_rs,
                                         c_cs, *work, ctx.runtime])


def narrow_product(b: KernelBuilder, dtype: np.dtype, n: ir.Value, k: ir.Value) -> ir.Value:
    """Whether a product of at most one vector of columns whose ``B`` stays in the
    first-level cache goes four rows at a time through :mod:`.gemm_rows` rather than the
    GEMM: packing ``A`` would copy all of it to fill a fraction of each vector
    (``h @ W2`` of an MLP, 10 columns)."""
    lanes = b.vector_bytes // dtype.itemsize
    small = b.icmp_signed("<=", b.mul(k, n), i64(NARROW_B // dtype.itemsize))
    return b.and_(b.icmp_signed("<=", n, i64(lanes)),
                  b.and_(small, b.icmp_signed("<=", k, i64(NARROW_B))))


def _row(b: ir.IRBuilder, data: ir.Value, i: ir.Value, stride: ir.Value) -> ir.Value:
    return b.gep(data, [b.mul(i, stride)], source_etype=I8)


def _dot_per_element(ctx: Lowering, eqn: Eqn, lhs: Value, rhs: Value, lfree: list[int],
                     rfree: list[int], contracted: list[ir.Value]) -> list[Value]:
    """Each output element accumulated in a register over the contracted axes; a float
    one over one contracted axis by :mod:`.gemm_dot`'s vectorized dot product."""
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    b, out = ctx.b, eqn.outs[0]
    dtype: np.dtype = out.type.dtype
    add, mul = scalar_rule(_ADD), scalar_rule(_MUL)
    acc = Accumulator(ctx, reg_type(dtype), "dot")
    if dtype in FLOATS and len(lc) == 1 and isinstance(lhs, View) and isinstance(rhs, View):
        if len(lfree) == 1 and not lb and not rfree:  # matrix @ vector
            dest = ctx.home(out)
            gemv = gemv_function(b.module, dtype, b.vector_bytes, b.fma)
            b.call(gemv, [lhs.dims[lfree[0]], contracted[0], lhs.data, lhs.strides[lfree[0]],
                          lhs.strides[lc[0]], rhs.data, rhs.strides[rc[0]], dest.data,
                          dest.strides[0]])
            return [dest]
        dot = dot_function(b.module, dtype, b.vector_bytes, b.fma)
        zero = [i64(0)]

        def vector_dot(out_idx: Sequence[ir.Value]) -> ir.Value:
            nb, nl = len(lb), len(lfree)
            batch, left, right = out_idx[:nb], out_idx[nb:nb + nl], out_idx[nb + nl:]
            x = element_ptr(b, lhs, merge_index(lt.ndim, (lb, batch), (lfree, left), (lc, zero)))
            y = element_ptr(b, rhs, merge_index(rt.ndim, (rb, batch), (rfree, right), (rc, zero)))
            return b.call(dot, [contracted[0], x, lhs.strides[lc[0]], y, rhs.strides[rc[0]]])

        return materialize(ctx, out, vector_dot, "o")

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
