"""A large matrix product split over threads, sharing each packed panel of ``B``.

The five loops of :mod:`.gemm` run as they do on one thread, except that for each panel
of ``B`` (the ``jc`` and ``pc`` loops) two jobs go to the runtime's threads: packing the
panel's slivers into the one packing buffer of ``B`` (chunks of slivers), then the row
slabs of ``C``, each packing its own blocks of ``A`` (a buffer per chunk, from
``aligned_alloc``) and running the micro-kernel over the shared panel. When a job
returns, every chunk of it is done: the packed panel is complete before any slab reads
it, and no slab still reads it when the next one is packed. Slabs start at multiples of
the micro-kernel's rows and every element of ``C`` is summed over ``k`` in the same
order as with one thread: results are bit-identical. Products with an epilogue
(:mod:`.epilogue`) finish their tiles in the slabs, after the last panel.

Each slab packed all of ``B`` again before (per-slab GEMMs): a 1024^3 product spent 8%
of its two-thread time re-packing ``B`` (f32: 0.91x OpenBLAS; 0.99x with one packing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from .. import abi
from ..ir import Eqn
from ..ops.core import Primitive
from ..ops.linalg import dot_general_p
from .builder import KernelBuilder
from .context import Lowering
from .dtypes import I8, I64, PTR, i64
from .gemm import (
    GEMM_PARAMS,
    TileHook,
    address,
    block_range,
    blocking,
    call_kernel,
    is_gemm,
    micro_kernels,
)
from .gemm import workspace as gemm_workspace
from .gemm_pack import pack_a_function, pack_b_function
from .loops import for_range
from .parallel import Outline, chunk_bounds
from .values import Value, View

#: Multiply-adds from which a product is split (about a millisecond on one core).
GEMM_PARALLEL_WORK = 1 << 22
#: Rows of ``C`` per chunk, at least: a slab amortizes its own packing of ``A``'s blocks.
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
    work = [ctx.buffer(ctx.layout.staging[(eqn, "work", i)], atype).data
            for i, atype in enumerate(gemm_workspace(eqn))]
    with b.if_else(large_product(b, lhs.dtype, m, n, k), likely=True) as (split, serial):
        with split, ctx.region():
            shared_panel_gemm(ctx, lhs.dtype, [
                m, n, k, lhs.data, lhs.strides[m_axis], lhs.strides[lc[0]], rhs.data,
                rhs.strides[rc[0]], rhs.strides[n_axis], dest.data, dest.strides[0],
                dest.strides[1], *work, ctx.runtime])
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


def shared_panel_gemm(ctx: Lowering, dtype: np.dtype, args: Sequence[ir.Value],
                      tile: TileHook | None = None) -> None:
    """``C = A @ B`` over the runtime's threads (``args`` as :func:`~.gemm.gemm_function`
    takes them, ``k > 0``; its ``pb`` the panel every slab reads), calling ``tile`` on
    each tile of ``C`` once it is final (see the module docstring)."""
    b = ctx.b
    p = dict(zip((name for name, _ in GEMM_PARAMS), args, strict=True))
    blk = blocking(dtype, b.vector_bytes)
    kernels = micro_kernels(b.module, dtype, blk, b.vector_bytes, b.fma)
    pack_a = pack_a_function(b.module, dtype, blk.mr, b.vector_bytes)
    pack_b = pack_b_function(b.module, dtype, blk.nr, b.vector_bytes)
    size, mr, nr = dtype.itemsize, blk.mr, blk.nr
    m, n, k = p["m"], p["n"], p["k"]
    units = b.sdiv(b.add(m, i64(mr - 1)), i64(mr))  # slabs start at multiples of mr rows
    chunks = _clamp(b, b.sdiv(m, i64(SLAB_ROWS)), MAX_GEMM_CHUNKS)
    free = libc_function(b.module, "free", ir.FunctionType(ir.VoidType(), [PTR]))
    with block_range(b, n, blk.nc, "pjc") as (_, jc, nc), \
            block_range(b, k, blk.kc, "ppc") as (pci, pc, kc):
        slivers = b.sdiv(b.add(nc, i64(nr - 1)), i64(nr))
        packers = _clamp(b, slivers, MAX_GEMM_CHUNKS)
        panel = address(b, p["b"], (pc, p["b_rs"]), (jc, p["b_cs"]))
        packing = Outline(ctx, "pack")
        with packing as (begin, end), for_range(b, b.sub(end, begin), "packs") as t:
            lo, hi = chunk_bounds(b, slivers, packers, b.add(begin, t))
            first = b.mul(lo, i64(nr))
            last = b.mul(hi, i64(nr))
            cols = b.sub(b.select(b.icmp_signed("<", last, nc), last, nc), first)
            b.call(pack_b, [kc, cols, address(b, panel, (first, p["b_cs"])), p["b_rs"],
                            p["b_cs"], b.gep(p["pb"], [b.mul(first, b.mul(kc, i64(size)))],
                                             source_etype=I8)])
        packing.call(packers, b.mul(kc, nc))
        slabs = Outline(ctx, "gemm")
        with slabs as (begin, end):
            pa = aligned_buffer(b, b.mul(i64((blk.mc + mr) * size), kc))
            with b.if_then(b.icmp_unsigned("==", pa, ir.Constant(PTR, None)), likely=False):
                b.ret(i64(abi.OUT_OF_MEMORY))
            with for_range(b, b.sub(end, begin), "slab") as t:
                lo, hi = chunk_bounds(b, units, chunks, b.add(begin, t))
                lo, hi = b.mul(lo, i64(mr)), b.mul(hi, i64(mr))
                hi = b.select(b.icmp_signed("<", hi, m), hi, m)
                with block_range(b, b.sub(hi, lo), blk.mc, "pic") as (_, start, mc):
                    ic = b.add(lo, start)
                    b.call(pack_a, [mc, kc, address(b, p["a"], (ic, p["a_rs"]), (pc, p["a_cs"])),
                                    p["a_rs"], p["a_cs"], pa])
                    with block_range(b, nc, nr, "pjr") as (jri, jr, cols), \
                            block_range(b, mc, mr, "pir") as (iri, ir_, rows):
                        pas = b.gep(pa, [b.mul(iri, b.mul(kc, i64(mr * size)))], source_etype=I8)
                        pbs = b.gep(p["pb"], [b.mul(jri, b.mul(kc, i64(nr * size)))],
                                    source_etype=I8)
                        i, j = b.add(ic, ir_), b.add(jc, jr)
                        c = address(b, p["c"], (i, p["c_rs"]), (j, p["c_cs"]))
                        call_kernel(b, kernels, [kc, pas, pbs, c, p["c_rs"], p["c_cs"], rows,
                                                 cols, pci], rows, cols)
                        if tile is not None:  # after the last panel of the contracted axis
                            with b.if_then(b.icmp_signed("==", b.add(pc, kc), k)):
                                tile(i, j, rows, cols)
            b.call(free, [pa])
        slabs.call(chunks, b.mul(b.mul(m, nc), kc))


def _clamp(b: ir.IRBuilder, count: ir.Value, most: int) -> ir.Value:
    """``count`` between 1 and ``most``."""
    count = b.select(b.icmp_signed("<", count, i64(most)), count, i64(most))
    return b.select(b.icmp_signed("<", count, i64(1)), i64(1), count)


RULES: dict[Primitive, object] = {dot_general_p: parallel_dot}
