"""Float matrix products the BLIS / GotoBLAS way: cache blocks, packed panels, and a
register-blocked micro-kernel.

A naive loop streams ``B`` from memory once per row of ``A``; a matrix product is only
fast when every element loaded is reused from registers and cache many times. The
classic answer (Goto & van de Geijn, "Anatomy of high-performance matrix
multiplication"; BLIS) is five loops around a micro-kernel::

    for jc in 0..n step NC:            # a column panel of B and C      (L3)
      for pc in 0..k step KC:          # a KC-deep slice of it
        pack B[pc:pc+KC, jc:jc+NC]      ->  pb, slivers of NR columns
        for ic in 0..m step MC:        # a row block of A               (L2)
          pack A[ic:ic+MC, pc:pc+KC]    ->  pa, slivers of MR rows
          for jr in 0..NC step NR:     # one B sliver stays in L1 ...
            for ir in 0..MC step MR:   # ... while the A slivers stream past it
              C[ir:ir+MR, jr:jr+NR] (+)= pa_sliver @ pb_sliver     (micro-kernel)

The micro-kernel (:mod:`.gemm_kernel`) keeps an ``MR x NR`` block of ``C`` in vector
registers; packing (:mod:`.gemm_pack`) absorbs any operand layout. ``MR`` and ``NR``
come from the target's vector registers (:func:`blocking`), never assumed: 16 registers
of 16 or 32 bytes (SSE, AVX2) hold a 6 x 2V block, AVX-512's 32 registers of 64 bytes a
12 x 2V one (V lanes per register). ``KC`` keeps a ``KC x NR`` B sliver within a
32 KiB L1 cache, ``MC`` a ``MC x KC`` A block within a 256-512 KiB L2, ``NC`` the
``KC x NC`` B panel within a few MiB of L3: sizes that suit any x86-64 of the last
decade, so one object runs well everywhere.

A product whose ``A`` and ``B`` are small enough to stay in cache as they are runs
unpacked instead (:mod:`.gemm_small`): the two innermost loops only, the micro-kernel
reading both operands in place.

The packing buffers are work buffers of the equation (:mod:`.workspace`), planned in
scratch like any temporary; their sizes depend only on the block sizes and on ``m``,
``n``, ``k`` when those are smaller (so a small product gets small buffers).

The product runs as one internal function per dtype and target (:func:`gemm_function`)
that the lowering (:mod:`.linalg`) calls once per product: once in all when the batch
and row axes merge into one tall product, else per batch element; it polls the runtime
(Ctrl-C) after every ``MC x KC x NC`` block, about a millisecond of work. Results differ
from the naive loop's in the order (and fusion) of the roundings, not in accuracy: each
element is still a sum of ``k`` products, with the usual ``k * eps * sum |a| |b|``
bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ... import abi
from ...ir import Eqn
from ...shapes import minimum, size
from ...tracing.avals import AType
from ..core.builder import KernelBuilder, existing, internal_function
from ..core.dtypes import I8, I64, PTR, i64, mem_type
from ..core.library import library_function
from ..core.loops import for_range
from ..core.runtime import poll
from ..targets import INSTRUCTION_SETS, for_module
from .gemm_kernel import Kernels, kernel_variants
from .gemm_pack import pack_a_function, pack_b_function
from .gemm_small import fits_unpacked

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
KC = 256


@dataclass(frozen=True)
class Blocking:
    """Register block ``mr x nr`` and cache blocks ``mc``, ``kc``, ``nc`` (elements)."""

    mr: int
    nr: int
    mc: int
    kc: int
    nc: int


def blocking(dtype: np.dtype, vector_bytes: int, registers: int, narrow: bool = False
             ) -> Blocking:
    """The blocks for ``dtype`` on a target with ``registers`` vector registers of
    ``vector_bytes``.

    ``mr * nr / V`` accumulators, ``nr / V`` B vectors and a broadcast must fit in the
    register file: 12 + 2 + 1 of 16 (SSE, AVX2), 24 + 2 + 1 of 32 (AVX-512, NEON).
    ``mc`` (a multiple of every ``mr``) times ``kc`` fills about 240 KiB of L2.
    ``narrow`` blocks are one vector wide, for products of at most ``V`` columns (half
    of a two-vector block would be padding).
    """
    lanes = vector_bytes // dtype.itemsize
    mr = 12 if registers >= 32 else 6
    per_l2 = 240 * 1024 // (KC * dtype.itemsize)
    return Blocking(mr, lanes if narrow else 2 * lanes, per_l2 // 12 * 12, KC,
                    3 * 1024 * 1024 // (KC * dtype.itemsize))


def is_gemm(eqn: Eqn) -> bool:
    """Whether ``eqn`` is a float matrix product the GEMM path takes (statically): one
    or more lhs free axes (rows), one rhs free axis, one contracted axis, any batch
    axes."""
    (lc, _), (lb, _) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    return (lt.dtype in FLOATS and len(lc) == 1 and lt.ndim - len(lb) - 1 >= 1
            and rt.ndim - len(lb) - 1 == 1)


def workspace(eqn: Eqn) -> list[AType]:
    """The packing buffers of a GEMM: an ``A`` block and a ``B`` panel, each as large as
    the largest any target's blocking needs (the layout is planned before a target is
    known), or as ``m``, ``n``, ``k`` need when they are smaller (``m`` counts every
    row the product may merge: batch and lhs free axes)."""
    if not is_gemm(eqn):
        return []
    (lc, rc), (_, rb) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    m = size(tuple(lt.shape[i] for i in range(lt.ndim) if i not in lc))  # rows, merged
    n = rt.shape[next(i for i in range(rt.ndim) if i not in rc and i not in rb)]
    k = lt.shape[lc[0]]
    blocks = [blocking(lt.dtype, v, isa.vector_registers(v))
              for isa in INSTRUCTION_SETS.values() for v in isa.vector_widths()]
    mc, mr = max(x.mc for x in blocks), max(x.mr for x in blocks)
    nc, nr = max(x.nc for x in blocks), max(x.nr for x in blocks)
    depth = minimum(k, max(x.kc for x in blocks))
    return [AType(lt.dtype, ((minimum(m, mc) + mr) * depth,)),
            AType(lt.dtype, ((minimum(n, nc) + nr) * depth,))]


@contextmanager
def block_range(b: ir.IRBuilder, total: ir.Value, step: int, name: str
            ) -> Iterator[tuple[ir.Value, ir.Value, ir.Value]]:
    """``for start in range(0, total, step)``: yields (index, start, length)."""
    count = b.sdiv(b.add(total, i64(step - 1)), i64(step))
    with for_range(b, count, name) as index:
        start = b.mul(index, i64(step))
        rest = b.sub(total, start)
        yield index, start, b.select(b.icmp_signed("<", rest, i64(step)), rest, i64(step))


GEMM_PARAMS = [("m", I64), ("n", I64), ("k", I64), ("a", PTR), ("a_rs", I64), ("a_cs", I64),
               ("b", PTR), ("b_rs", I64), ("b_cs", I64), ("c", PTR), ("c_rs", I64),
               ("c_cs", I64), ("pa", PTR), ("pb", PTR), ("rt", PTR)]


@library_function
def gemm_function(module: ir.Module, dtype: np.dtype, vector_bytes: int, fma: bool,
                  narrow: bool = False) -> ir.Function:
    """``i64(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, c_rs, c_cs, pa, pb, rt)``:
    ``C[m, n] = A[m, k] @ B[k, n]`` (byte strides; ``pa``, ``pb`` the packing buffers);
    returns 0, or :data:`~aotc.abi.INTERRUPTED` when the runtime's poll says so. A
    product of at most ``V`` columns goes to the ``narrow`` variant."""
    blk = blocking(dtype, vector_bytes, for_module(module).vector_registers(vector_bytes),
                   narrow)
    name = (f"aotc.gemm.{dtype.name}.{vector_bytes}{'.fma' if fma else ''}"
            f"{'.narrow' if narrow else ''}")
    fn = existing(module, name)
    if fn is not None:
        return fn
    kernel = micro_kernels(module, dtype, blk, vector_bytes, fma)
    pack_a = pack_a_function(module, dtype, blk.mr, vector_bytes)
    pack_b = pack_b_function(module, dtype, blk.nr, vector_bytes)
    slim = None if narrow else gemm_function(module, dtype, vector_bytes, fma, narrow=True)
    with internal_function(module, name, I64, GEMM_PARAMS, vector_bytes, fma) as (b, p):
        for arg in ("c", "pa", "pb"):  # a and b may be one matrix (see _symmetric)
            p[arg].add_attribute("noalias")
        with b.if_then(b.icmp_signed("<=", p["k"], i64(0)), likely=False):
            _zero(b, p, dtype)
            b.ret(i64(0))
        if slim is not None:
            lanes = vector_bytes // dtype.itemsize
            with b.if_then(b.icmp_signed("<=", p["n"], i64(lanes)), likely=False):
                b.ret(b.call(slim, [p[name] for name, _ in GEMM_PARAMS]))
        with b.if_then(fits_unpacked(b, p, dtype)):
            _two_loops(b, p, dtype, blk)
            b.ret(i64(0))
        upper = _symmetric(b, p)
        _five_loops(b, p, dtype, blk, kernel, pack_a, pack_b, upper=upper)
        with b.if_then(upper, likely=False):
            _mirror(b, p, dtype)
        b.ret(i64(0))
    fn = existing(module, name)
    assert fn is not None
    return fn


def address(b: ir.IRBuilder, base: ir.Value, *terms: tuple[ir.Value, ir.Value]) -> ir.Value:
    """``base + sum(index * stride)`` in bytes."""
    offset: ir.Value = i64(0)
    for index, stride in terms:
        offset = b.add(offset, b.mul(index, stride))
    return b.gep(base, [offset], source_etype=I8)


def _zero(b: KernelBuilder, p: Mapping[str, ir.Value], dtype: np.dtype) -> None:
    """``C = 0``: the product over an empty contracted axis."""
    zero = ir.Constant(mem_type(dtype), 0.0)
    with for_range(b, p["m"], "zi") as i, for_range(b, p["n"], "zj") as j:
        b.store(zero, address(b, p["c"], (i, p["c_rs"]), (j, p["c_cs"])), align=1)


def _symmetric(b: KernelBuilder, p: Mapping[str, ir.Value]) -> ir.Value:
    """Whether ``B`` is ``A`` transposed (``x.T @ x``, ``x @ x.T``: a Gram matrix), read
    from the same memory: then ``C`` is symmetric, and only the tiles on and above its
    diagonal are computed (half the work, as NumPy's call of BLAS ``syrk``)."""
    same = [b.icmp_signed("==", p["m"], p["n"]),
            b.icmp_unsigned("==", b.ptrtoint(p["a"], I64), b.ptrtoint(p["b"], I64)),
            b.icmp_signed("==", p["a_rs"], p["b_cs"]), b.icmp_signed("==", p["a_cs"], p["b_rs"])]
    flag = same[0]
    for test in same[1:]:
        flag = b.and_(flag, test)
    return flag


def _mirror(b: KernelBuilder, p: Mapping[str, ir.Value], dtype: np.dtype) -> None:
    """``C[i, j] = C[j, i]`` below the diagonal: the tiles a symmetric product skipped
    (each element is the same sum of the same products either side: exactly
    symmetric)."""
    with for_range(b, p["m"], "mi") as i, for_range(b, i, "mj") as j:
        value = b.load(address(b, p["c"], (j, p["c_rs"]), (i, p["c_cs"])), typ=mem_type(dtype),
                       align=1)
        b.store(value, address(b, p["c"], (i, p["c_rs"]), (j, p["c_cs"])), align=1)


def micro_kernels(module: ir.Module, dtype: np.dtype, blk: Blocking, vector_bytes: int,
                  fma: bool) -> Kernels:
    """The full ``MR x NR`` micro-kernel and its edge variants (:func:`.edge_blocks`),
    smallest first."""
    return kernel_variants(module, dtype, blk.mr, blk.nr, vector_bytes, fma)


def call_kernel(b: KernelBuilder, kernels: Kernels, args: list[ir.Value], rows: ir.Value,
                 cols: ir.Value) -> None:
    """Call the smallest variant that covers a ``rows x cols`` tile: the full block for
    a full tile (the common case, tested first), else the first edge block that fits."""
    (mr, nr), full = kernels[-1]

    def covers(block: tuple[int, int]) -> ir.Value:
        return b.and_(b.icmp_signed("<=", rows, i64(block[0])),
                      b.icmp_signed("<=", cols, i64(block[1])))

    def edge(index: int) -> None:
        block, fn = kernels[index]
        if index == len(kernels) - 1:
            b.call(fn, args)
            return
        with b.if_else(covers(block)) as (small, other):
            with small:
                b.call(fn, args)
            with other:
                edge(index + 1)

    whole = b.and_(b.icmp_signed("==", rows, i64(mr)), b.icmp_signed("==", cols, i64(nr)))
    with b.if_else(whole, likely=True) as (run_full, run_edge):
        with run_full:
            b.call(full, args)
        with run_edge:
            edge(0)


#: Called on each tile of ``C`` once it is final: (first row, first column, rows, columns).
TileHook = Callable[[ir.Value, ir.Value, ir.Value, ir.Value], None]


def _five_loops(b: KernelBuilder, p: Mapping[str, ir.Value], dtype: np.dtype, blk: Blocking,
                kernel: Kernels, pack_a: ir.Function, pack_b: ir.Function,
                tile: TileHook | None = None, upper: ir.Value | None = None) -> None:
    """The loops of the module docstring. Where ``upper`` holds at run time, the tiles
    of ``C`` wholly below its diagonal are skipped (:func:`_symmetric`)."""
    size = dtype.itemsize
    false = ir.Constant(ir.IntType(1), 0)

    def below(first_row: ir.Value, first_column: ir.Value, columns: ir.Value) -> ir.Value:
        if upper is None:
            return false
        return b.and_(upper, b.icmp_signed("<=", b.add(first_column, columns), first_row))

    with block_range(b, p["n"], blk.nc, "jc") as (_, jc, nc):
        with block_range(b, p["k"], blk.kc, "pc") as (pci, pc, kc):
            b.call(pack_b, [kc, nc, address(b, p["b"], (pc, p["b_rs"]), (jc, p["b_cs"])),
                            p["b_rs"], p["b_cs"], p["pb"]])
            with block_range(b, p["m"], blk.mc, "ic") as (_, ic, mc), \
                    b.if_then(b.not_(below(ic, jc, nc))):
                b.call(pack_a, [mc, kc, address(b, p["a"], (ic, p["a_rs"]), (pc, p["a_cs"])),
                                p["a_rs"], p["a_cs"], p["pa"]])
                c_block = address(b, p["c"], (ic, p["c_rs"]), (jc, p["c_cs"]))
                with block_range(b, nc, blk.nr, "jr") as (jri, jr, cols):
                    pb = b.gep(p["pb"], [b.mul(jri, b.mul(kc, i64(blk.nr * size)))],
                               source_etype=I8)
                    with block_range(b, mc, blk.mr, "ir") as (iri, ir_, rows):
                        pa = b.gep(p["pa"], [b.mul(iri, b.mul(kc, i64(blk.mr * size)))],
                                   source_etype=I8)
                        c = address(b, c_block, (ir_, p["c_rs"]), (jr, p["c_cs"]))
                        skip = below(b.add(ic, ir_), b.add(jc, jr), cols)
                        with b.if_then(b.not_(skip)):
                            call_kernel(b, kernel, [kc, pa, pb, c, p["c_rs"], p["c_cs"],
                                                     rows, cols, pci], rows, cols)
                        if tile is not None:  # after the last slice of the contracted axis
                            with b.if_then(b.icmp_signed("==", b.add(pc, kc), p["k"])):
                                tile(b.add(ic, ir_), b.add(jc, jr), rows, cols)
                poll(b, p["rt"])


def _two_loops(b: KernelBuilder, p: Mapping[str, ir.Value], dtype: np.dtype, blk: Blocking,
               tile: TileHook | None = None) -> None:
    """The product by :mod:`.gemm_small`'s unpacked kernels: column slivers of ``B``,
    row blocks of ``A`` inside, each tile of ``C`` final after one call."""
    kernels = kernel_variants(b.module, dtype, blk.mr, blk.nr, b.vector_bytes, b.fma,
                              unpacked=True)
    with block_range(b, p["n"], blk.nr, "ujr") as (_, jr, cols):
        sliver = address(b, p["b"], (jr, p["b_cs"]))
        with block_range(b, p["m"], blk.mr, "uir") as (_, ir_, rows):
            c = address(b, p["c"], (ir_, p["c_rs"]), (jr, p["c_cs"]))
            call_kernel(b, kernels, [p["k"], address(b, p["a"], (ir_, p["a_rs"])), p["a_rs"],
                                      p["a_cs"], sliver, p["b_rs"], c, p["c_rs"], p["c_cs"],
                                      rows, cols, i64(0)], rows, cols)
            if tile is not None:
                tile(ir_, jr, rows, cols)


def tiled_gemm(b: KernelBuilder, dtype: np.dtype, args: list[ir.Value], tile: TileHook
               ) -> None:
    """The GEMM (``args`` as :func:`gemm_function`'s, ``k > 0``) inline, calling ``tile``
    on each tile of ``C`` as soon as it is final, while it is in the first-level cache:
    an epilogue (``relu(x @ W + b)``) then reads and writes the result once."""
    p = dict(zip((name for name, _ in GEMM_PARAMS), args, strict=True))
    lanes = b.vector_bytes // dtype.itemsize
    with b.if_else(b.icmp_signed("<=", p["n"], i64(lanes)), likely=False) as (slim, wide):
        for narrow, branch in ((True, slim), (False, wide)):
            with branch:
                blk = blocking(dtype, b.vector_bytes, b.isa.vector_registers(b.vector_bytes),
                               narrow)
                with b.if_else(fits_unpacked(b, p, dtype)) as (small, large):
                    with small:
                        _two_loops(b, p, dtype, blk, tile)
                    with large:
                        kernel = micro_kernels(b.module, dtype, blk, b.vector_bytes, b.fma)
                        pack_a = pack_a_function(b.module, dtype, blk.mr, b.vector_bytes)
                        pack_b = pack_b_function(b.module, dtype, blk.nr, b.vector_bytes)
                        _five_loops(b, p, dtype, blk, kernel, pack_a, pack_b, tile)


def call_gemm(b: KernelBuilder, dtype: np.dtype, args: list[ir.Value]) -> None:
    """Call the module's GEMM for ``dtype`` (see :func:`gemm_function`) and leave the
    kernel when it was interrupted."""
    fn = gemm_function(b.module, dtype, b.vector_bytes, b.fma)
    status = b.call(fn, args)
    b.fail_if(b.icmp_signed("!=", status, i64(0)), abi.INTERRUPTED)

