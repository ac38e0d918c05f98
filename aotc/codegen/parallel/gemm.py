"""A large matrix product split over threads: slabs of rows of ``C``.

With no more slabs than the runtime has threads, each slab runs the module's whole GEMM
(:func:`~.gemm.gemm_function`) with packing buffers of its own (from ``aligned_alloc``):
one job, each thread packing ``B`` once. Fewer slabs than threads split their columns
too, into blocks of whole micro-kernel slivers, so that every thread gets as many blocks
as the others: a 256-row MLP layer is two slabs, which left eleven of thirteen threads
idle, and a 1024-row product eight, which left five. With more
slabs than threads, a thread running several slabs would pack all of ``B`` for each (a
1024^3 product spent 8% of its two-thread time re-packing ``B``: 0.91x OpenBLAS), so
the slabs share the packing: the five loops run as on one thread, and for each panel of
``B`` (the ``jc`` and ``pc`` loops) two jobs go to the threads, packing the panel's
slivers into the kernel's one ``B`` buffer, then the row slabs, each packing its blocks
of ``A`` into a buffer of its own and running the micro-kernel over the shared panel. A
job returns when all its chunks are done: the panel is whole before any slab reads it,
and no slab reads it any more when the next one is packed. (Two jobs per panel cost a
256-row MLP layer a fifth of its time: hence one job for few slabs.)

Slabs start at multiples of the micro-kernel's rows and every element of ``C`` is summed
over ``k`` in the same order as with one thread: results are bit-identical. Products
with an epilogue (:mod:`.epilogue`) finish their tiles in the slabs, after the last
panel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from ... import abi
from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.linalg import dot_general_p
from ..core.builder import KernelBuilder
from ..core.context import Lowering
from ..core.dtypes import I8, PTR, i64
from ..core.libc import aligned_buffer, libc_function
from ..core.loops import for_range
from ..core.runtime import threads
from ..core.values import Value, View
from ..linalg.gemm import (
    GEMM_PARAMS,
    TileHook,
    address,
    block_range,
    blocking,
    call_kernel,
    gemm_function,
    is_gemm,
    micro_kernels,
    tiled_gemm,
)
from ..linalg.gemm import workspace as gemm_workspace
from ..linalg.gemm_pack import pack_a_function, pack_b_function
from .loops import Outline, chunk_bounds

#: Multiply-adds from which a product is split (about a millisecond on one core).
GEMM_PARALLEL_WORK = 1 << 22
#: Rows of ``C`` per chunk, at least: a slab amortizes its own packing of ``A``'s blocks.
SLAB_ROWS = 128
#: Chunks per product, at most.
MAX_GEMM_CHUNKS = 32
#: Micro-kernel slivers of ``B``'s columns per column block, at least (a block packs its
#: own ``B``; narrower ones would spend their time packing).
BLOCK_SLIVERS = 4


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
            parallel_gemm(ctx, lhs.dtype, [
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


def parallel_gemm(ctx: Lowering, dtype: np.dtype, args: Sequence[ir.Value],
                  tile: TileHook | None = None) -> None:
    """``C = A @ B`` over the runtime's threads (``args`` as :func:`~.gemm.gemm_function`
    takes them, ``k > 0``), calling ``tile`` on each tile of ``C`` once it is final: with
    no more slabs than threads, each slab its own GEMM (one job); else the slabs share
    each packed panel of ``B`` (see the module docstring)."""
    b = ctx.b
    p = dict(zip((name for name, _ in GEMM_PARAMS), args, strict=True))
    chunks = _clamp(b, b.sdiv(p["m"], i64(SLAB_ROWS)), MAX_GEMM_CHUNKS)
    count = threads(b, ctx.runtime)
    with b.if_else(b.icmp_signed("<=", chunks, count)) as (few, many):
        with few, ctx.region():
            # slabs x blocks a multiple of the threads: each thread gets as many blocks
            even = b.icmp_signed("==", b.srem(count, chunks), i64(0))
            _gemm_per_slab(ctx, dtype, p, chunks, b.select(even, b.sdiv(count, chunks), count),
                           tile)
        with many, ctx.region():
            _shared_panels(ctx, dtype, p, chunks, tile)


def _slab_rows(b: ir.IRBuilder, m: ir.Value, mr: int, chunks: ir.Value, k: ir.Value
               ) -> tuple[ir.Value, ir.Value]:
    """Rows ``[lo, hi)`` of slab ``k`` of ``m``: slabs start at multiples of ``mr`` rows
    (the packing of a panel splits its columns by slivers the same way)."""
    units = b.sdiv(b.add(m, i64(mr - 1)), i64(mr))
    lo, hi = chunk_bounds(b, units, chunks, k)
    lo, hi = b.mul(lo, i64(mr)), b.mul(hi, i64(mr))
    return lo, b.select(b.icmp_signed("<", hi, m), hi, m)


def _gemm_per_slab(ctx: Lowering, dtype: np.dtype, p: dict[str, ir.Value],
                   chunks: ir.Value, per_slab: ir.Value, tile: TileHook | None) -> None:
    """Each slab of rows the whole GEMM, with packing buffers of its own; its columns in
    up to ``per_slab`` blocks of at least :data:`BLOCK_SLIVERS` slivers each."""
    b = ctx.b
    blk = blocking(dtype, b.vector_bytes, b.isa.vector_registers(b.vector_bytes))
    slivers = b.sdiv(b.add(p["n"], i64(blk.nr - 1)), i64(blk.nr))
    blocks = _clamp(b, b.sdiv(slivers, i64(BLOCK_SLIVERS)), MAX_GEMM_CHUNKS)
    blocks = b.select(b.icmp_signed("<", per_slab, blocks), per_slab, blocks)
    blocks = b.select(b.icmp_signed("<", blocks, i64(1)), i64(1), blocks)
    sizes = [(blk.mc + blk.mr) * dtype.itemsize, (blk.nc + blk.nr) * dtype.itemsize]
    free = libc_function(b.module, "free", ir.FunctionType(ir.VoidType(), [PTR]))
    outline = Outline(ctx, "gemm")
    with outline as (begin, end):
        depth = b.select(b.icmp_signed("<", p["k"], i64(blk.kc)), p["k"], i64(blk.kc))
        pa, pb = (aligned_buffer(b, b.mul(i64(s), depth)) for s in sizes)
        null = ir.Constant(PTR, None)
        with b.if_then(b.or_(b.icmp_unsigned("==", pa, null), b.icmp_unsigned("==", pb, null)),
                       likely=False):
            b.call(free, [pa])
            b.call(free, [pb])
            b.ret(i64(abi.OUT_OF_MEMORY))
        with for_range(b, b.sub(end, begin), "slab") as t:
            unit = b.add(begin, t)
            lo, hi = _slab_rows(b, p["m"], blk.mr, chunks, b.sdiv(unit, blocks))
            first, last = _slab_rows(b, p["n"], blk.nr, blocks, b.srem(unit, blocks))
            rows = [b.sub(hi, lo), b.sub(last, first), p["k"],
                    address(b, p["a"], (lo, p["a_rs"])), p["a_rs"], p["a_cs"],
                    address(b, p["b"], (first, p["b_cs"])), p["b_rs"], p["b_cs"],
                    address(b, p["c"], (lo, p["c_rs"]), (first, p["c_cs"])), p["c_rs"],
                    p["c_cs"], pa, pb, null]
            if tile is None:
                b.call(gemm_function(b.module, dtype, b.vector_bytes, b.fma), rows)
            else:
                tiled_gemm(b, dtype, rows, _shifted(b, tile, lo, first))
        b.call(free, [pa])
        b.call(free, [pb])
    outline.call(b.mul(chunks, blocks), b.mul(b.mul(p["m"], p["n"]), p["k"]))


def _shifted(b: ir.IRBuilder, tile: TileHook, row: ir.Value, column: ir.Value
             ) -> TileHook:
    """``tile`` for a block whose element (0, 0) is ``C[row, column]``."""
    def hook(i: ir.Value, j: ir.Value, rows: ir.Value, cols: ir.Value) -> None:
        tile(b.add(row, i), b.add(column, j), rows, cols)
    return hook


def _shared_panels(ctx: Lowering, dtype: np.dtype, p: dict[str, ir.Value],
                   chunks: ir.Value, tile: TileHook | None) -> None:
    """The slabs share each packed panel of ``B``, in ``p["pb"]``."""
    b = ctx.b
    blk = blocking(dtype, b.vector_bytes, b.isa.vector_registers(b.vector_bytes))
    kernels = micro_kernels(b.module, dtype, blk, b.vector_bytes, b.fma)
    pack_a = pack_a_function(b.module, dtype, blk.mr, b.vector_bytes)
    pack_b = pack_b_function(b.module, dtype, blk.nr, b.vector_bytes)
    size, mr, nr = dtype.itemsize, blk.mr, blk.nr
    m, n, k = p["m"], p["n"], p["k"]
    free = libc_function(b.module, "free", ir.FunctionType(ir.VoidType(), [PTR]))
    with block_range(b, n, blk.nc, "pjc") as (_, jc, nc), \
            block_range(b, k, blk.kc, "ppc") as (pci, pc, kc):
        slivers = b.sdiv(b.add(nc, i64(nr - 1)), i64(nr))
        packers = _clamp(b, slivers, MAX_GEMM_CHUNKS)
        panel = address(b, p["b"], (pc, p["b_rs"]), (jc, p["b_cs"]))
        packing = Outline(ctx, "pack")
        with packing as (begin, end), for_range(b, b.sub(end, begin), "packs") as t:
            first, last = _slab_rows(b, nc, nr, packers, b.add(begin, t))
            cols = b.sub(last, first)
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
                lo, hi = _slab_rows(b, m, mr, chunks, b.add(begin, t))
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
