"""A large matrix product split over threads: slabs of rows of ``C``.

Each chunk is the module's whole GEMM (:func:`~.gemm.gemm_function`) over a slab of
rows of ``A`` and ``C``, with packing buffers of its own (from ``aligned_alloc``: the
kernel's scratch is planned for one product). Every chunk packs all of ``B`` again;
that is ``k * n`` copies against ``2 * rows * k * n`` flops, under 1% for a slab of
128 rows. Slabs start at multiples of the micro-kernel's rows and every element of
``C`` is summed over ``k`` in the same order as with one thread: results are
bit-identical. Products with an epilogue (:mod:`.epilogue`) split the same way, each
slab finishing its tiles; small and batched products keep their serial rules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from .. import abi
from ..ir import Eqn
from ..ops.core import Primitive
from ..ops.linalg import dot_general_p
from ..shapes import size
from .builder import KernelBuilder
from .context import Lowering
from .dtypes import I64, PTR, i64
from .gemm import blocking, gemm_function, is_gemm
from .gemm import workspace as gemm_workspace
from .loops import for_range
from .parallel import Outline, chunk_bounds
from .values import Value, View

#: Multiply-adds from which a product is split (about a millisecond on one core).
GEMM_PARALLEL_WORK = 1 << 22
#: Rows of ``C`` per chunk, at least: a slab amortizes its own packing of ``B``.
SLAB_ROWS = 128
#: Chunks per product, at most.
MAX_GEMM_CHUNKS = 32


def libc_function(module: ir.Module, name: str, ftype: ir.FunctionType) -> ir.Function:
    found = module.globals.get(name)
    if isinstance(found, ir.Function):
        return found
    return ir.Function(module, ftype, name)


def aligned_buffer(b: ir.IRBuilder, nbytes: ir.Value) -> ir.Value:
    """``aligned_alloc(64, nbytes rounded up to 64)``: packing buffers are read with
    aligned vector loads."""
    fn = libc_function(b.module, "aligned_alloc", ir.FunctionType(PTR, [I64, I64]))
    rounded = b.and_(b.add(nbytes, i64(63)), i64(-64))
    return b.call(fn, [i64(64), b.select(b.icmp_signed(">", rounded, i64(0)), rounded, i64(64))])


def parallel_dot(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value] | None:
    """A plain 2-D float product in slabs of rows over threads when it is large (the
    serial rule otherwise), or None when it is not a plain 2-D product."""
    (lc, rc), (lb, _) = eqn.params["contracting"], eqn.params["batch"]
    lhs, rhs = args
    if not is_gemm(eqn) or lb or not (isinstance(lhs, View) and isinstance(rhs, View)) \
            or lhs.ndim != 2 or rhs.ndim != 2:
        return None
    b = ctx.b
    m_axis, n_axis = 1 - lc[0], 1 - rc[0]
    m, k, n = lhs.dims[m_axis], lhs.dims[lc[0]], rhs.dims[n_axis]
    dest = ctx.home(eqn.outs[0])
    work = b.mul(b.mul(m, n), k)
    with b.if_else(large_product(b, lhs.dtype, m, n, k), likely=True) as (split, serial):
        with split, ctx.region():
            _slabs(ctx, eqn, lhs, rhs, dest, (m_axis, n_axis, lc[0], rc[0]), work)
        with serial, ctx.region():
            ctx.rules[eqn.prim](ctx, eqn, args)  # writes into the same home
    return [dest]


#: Emits the product (and whatever follows it) for rows ``lo..hi-1`` of ``C`` with
#: packing buffers ``pa``, ``pb`` of the slab's own: ``run(lo, hi, pa, pb)``.
SlabRun = Callable[[ir.Value, ir.Value, ir.Value, ir.Value], None]


def large_product(b: KernelBuilder, dtype: np.dtype, m: ir.Value, n: ir.Value,
                  k: ir.Value) -> ir.Value:
    """Whether a product is worth splitting into slabs of rows (an i1)."""
    lanes = b.vector_bytes // dtype.itemsize
    work = b.mul(b.mul(m, n), k)
    return b.and_(b.and_(b.icmp_signed(">=", m, i64(2 * SLAB_ROWS)),
                         b.icmp_signed(">", n, i64(2 * lanes))),
                  b.and_(b.icmp_signed(">", k, i64(0)),
                         b.icmp_signed(">=", work, i64(GEMM_PARALLEL_WORK))))


def row_slabs(ctx: Lowering, eqn: Eqn, m: ir.Value, work: ir.Value, run: SlabRun) -> None:
    """Rows ``0..m-1`` of product ``eqn``'s ``C`` in slabs over threads, each starting at
    a multiple of the micro-kernel's rows, with packing buffers of its own."""
    b = ctx.b
    dtype = eqn.inputs[0].type.dtype
    mr = blocking(dtype, b.vector_bytes).mr
    units = b.sdiv(b.add(m, i64(mr - 1)), i64(mr))  # slabs start at multiples of mr rows
    chunks = b.sdiv(m, i64(SLAB_ROWS))
    chunks = b.select(b.icmp_signed("<", chunks, i64(MAX_GEMM_CHUNKS)), chunks,
                      i64(MAX_GEMM_CHUNKS))
    sizes = [b.mul(ctx.dims(size(t.shape)), i64(t.dtype.itemsize)) for t in gemm_workspace(eqn)]
    free = libc_function(b.module, "free", ir.FunctionType(ir.VoidType(), [PTR]))
    outline = Outline(ctx, "gemm")
    with outline as (begin, end):
        # One pair of buffers per thread's run of slabs, not per slab: fresh pages of a
        # few MiB per slab cost the kernel's zeroing each time.
        pa, pb = (aligned_buffer(b, s) for s in sizes)
        null = ir.Constant(PTR, None)
        missing = b.or_(b.icmp_unsigned("==", pa, null), b.icmp_unsigned("==", pb, null))
        with b.if_then(missing, likely=False):
            b.call(free, [pa])
            b.call(free, [pb])
            b.ret(i64(abi.OUT_OF_MEMORY))
        with for_range(b, b.sub(end, begin), "slab") as t:
            lo, hi = chunk_bounds(b, units, chunks, b.add(begin, t))
            lo, hi = b.mul(lo, i64(mr)), b.mul(hi, i64(mr))
            hi = b.select(b.icmp_signed("<", hi, m), hi, m)
            run(lo, hi, pa, pb)
        b.call(free, [pa])
        b.call(free, [pb])
    outline.call(chunks, work)


def rows_from(b: ir.IRBuilder, data: ir.Value, row: ir.Value, stride: ir.Value) -> ir.Value:
    """The address of row ``row`` of a matrix at ``data`` with row stride ``stride``."""
    return b.gep(data, [b.mul(row, stride)], source_etype=ir.IntType(8))


def _slabs(ctx: Lowering, eqn: Eqn, lhs: View, rhs: View, dest: View,
           axes: tuple[int, int, int, int], work: ir.Value) -> None:
    b = ctx.b
    m_axis, n_axis, l_contract, r_contract = axes
    gemm = gemm_function(b.module, lhs.dtype, b.vector_bytes, b.fma)

    def run(lo: ir.Value, hi: ir.Value, pa: ir.Value, pb: ir.Value) -> None:
        b.call(gemm, [b.sub(hi, lo), rhs.dims[n_axis], lhs.dims[l_contract],
                      rows_from(b, lhs.data, lo, lhs.strides[m_axis]), lhs.strides[m_axis],
                      lhs.strides[l_contract], rhs.data, rhs.strides[r_contract],
                      rhs.strides[n_axis], rows_from(b, dest.data, lo, dest.strides[0]),
                      dest.strides[0], dest.strides[1], pa, pb, ir.Constant(PTR, None)])

    row_slabs(ctx, eqn, lhs.dims[m_axis], work, run)


RULES: dict[Primitive, object] = {dot_general_p: parallel_dot}
