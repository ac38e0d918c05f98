"""Packing: copying a block of ``A`` or ``B`` into the order the micro-kernel reads.

The micro-kernel (:mod:`.gemm_kernel`) walks the contracted axis reading ``MR``
elements of ``A`` and ``NR`` elements of ``B`` per step. Packing lays each sliver out
so those reads are consecutive: an ``MR``-row sliver of ``A`` column by column
(``pa[p * MR + i]``), an ``NR``-column sliver of ``B`` row by row (``pb[p * NR + j]``),
slivers one after the other. That makes the kernel's loads unit-stride, aligned and
predictable, keeps the blocks dense in cache (no TLB or set conflicts from a large
leading dimension), and absorbs every layout: transposed, strided and negative-stride
operands are read here, once per block, with their byte strides, and the kernel never
sees them. The last sliver of a block is padded up to ``MR`` rows or ``NR`` columns,
branch-free: a row (column) past the end reads the last real one. ``B``'s padding is
kept as 0 by a select; ``A``'s is left a copy of its last row, as the results of those
rows are never stored (an edge tile runs the micro-kernel that covers its real rows),
which lets a partial sliver take the same vector path as a full one.

Each packing routine is an internal function emitted once per module, dtype and sliver
width, with a fast path for the common unit-stride layout (rows of a C-contiguous
``B`` are copied as vectors).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder, existing, internal_function
from ..core.dtypes import I8, I64, PTR, i64, reg_type
from ..core.library import library_function
from ..core.loops import for_range
from ..core.simd import masked_load, splat, zeros


def _byte_at(b: ir.IRBuilder, base: ir.Value, offset: ir.Value) -> ir.Value:
    return b.gep(base, [offset], source_etype=I8)


def _sliver_count(b: ir.IRBuilder, length: ir.Value, width: int) -> ir.Value:
    return b.sdiv(b.add(length, i64(width - 1)), i64(width))


def _min(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, y), x, y)


@library_function
def pack_a_function(module: ir.Module, dtype: np.dtype, mr: int, vector_bytes: int
                    ) -> ir.Function:
    """``void(mc, kc, src, rs, cs, dst)``: ``A[:mc, :kc]`` (byte strides ``rs``, ``cs``)
    into ``ceil(mc / MR)`` slivers of ``MR x kc``, column-major, padded with copies of
    the last row (see the module docstring)."""
    name = f"aotc.gemm.pack_a.{dtype.name}.{mr}"
    fn = existing(module, name)
    if fn is not None:
        return fn
    ty, size = reg_type(dtype), dtype.itemsize
    params = [("mc", I64), ("kc", I64), ("src", PTR), ("rs", I64), ("cs", I64), ("dst", PTR)]
    with internal_function(module, name, ir.VoidType(), params, vector_bytes, False) as (b, a):
        a["src"].add_attribute("noalias")
        a["dst"].add_attribute("noalias")
        kc = a["kc"]
        transposed = b.and_(b.icmp_signed("==", a["rs"], i64(size)),
                            b.icmp_signed("!=", a["cs"], i64(size)))
        with b.if_then(transposed):
            _pack_a_transposed(b, a, mr, ty, size)
            b.ret_void()
        with for_range(b, _sliver_count(b, a["mc"], mr), "sliver") as s:
            i0 = b.mul(s, i64(mr))
            rows = b.sub(a["mc"], i0)
            dst = b.gep(a["dst"], [b.mul(s, b.mul(kc, i64(mr)))], source_etype=ty)
            last = b.sub(rows, i64(1))  # rows past the end read the last one
            starts = [_byte_at(b, a["src"], b.mul(b.add(i0, _min(b, i64(i), last)), a["rs"]))
                      for i in range(mr)]
            with b.if_else(b.icmp_signed("==", a["cs"], i64(size)), likely=True) as (
                    contiguous, strided):
                with contiguous:
                    _transpose_columns(b, kc, dst, mr, starts, ty, size)
                with strided:
                    _copy_columns(b, kc, dst, mr, lambda i, p: _byte_at(
                        b, starts[i], b.mul(p, a["cs"])), ty, size)
        b.ret_void()
    fn = existing(module, name)
    assert fn is not None
    return fn


def _pack_a_transposed(b: KernelBuilder, a: dict[str, ir.Argument], mr: int, ty: ir.Type,
                       size: int) -> None:
    """``A`` with unit-stride columns (a transposed matrix): along each of its
    contiguous columns ``p``, MR elements into every sliver in turn. Going sliver by
    sliver instead would read ``kc`` lines a row stride apart, which for a stride of a
    multiple of 4 KiB all fall in one L1 set and evict each other."""
    kc, mc = a["kc"], a["mc"]
    slivers = _sliver_count(b, mc, mr)
    with for_range(b, kc, "p") as p:
        line = _byte_at(b, a["src"], b.mul(p, a["cs"]))
        with for_range(b, slivers, "s") as s:
            i0 = b.mul(s, i64(mr))
            rows = b.sub(mc, i0)
            out = b.gep(a["dst"], [b.add(b.mul(s, b.mul(kc, i64(mr))), b.mul(p, i64(mr)))],
                        source_etype=ty)
            first = b.gep(line, [i0], source_etype=ty)
            with b.if_else(b.icmp_signed(">=", rows, i64(mr)), likely=True) as (full, part):
                with full:
                    for i in range(mr):
                        value = b.load(b.gep(first, [i64(i)], source_etype=ty), typ=ty, align=1)
                        b.store(value, b.gep(out, [i64(i)], source_etype=ty), align=size)
                with part:  # rows past the end read the last one
                    last = b.sub(rows, i64(1))
                    for i in range(mr):
                        at = b.gep(first, [_min(b, i64(i), last)], source_etype=ty)
                        b.store(b.load(at, typ=ty, align=1),
                                b.gep(out, [i64(i)], source_etype=ty), align=size)


#: The square :func:`_transpose_columns` transposes in registers.
QUAD = 4


def _transpose_columns(b: KernelBuilder, kc: ir.Value, dst: ir.Value, width: int,
                       starts: list[ir.Value], ty: ir.Type, size: int) -> None:
    """:func:`_copy_columns` of ``width`` contiguous rows (a C-contiguous ``A``): 4 x 4
    squares loaded a row vector at a time and transposed with shuffles, 4 loads and 4
    stores per 16 elements instead of 16 each (element by element, packing ``A`` took
    10% of a 64^3 f64 product). Rows past a multiple of 4, and the last ``kc % 4``
    columns, go element by element."""
    vty = ir.VectorType(ty, QUAD)
    squares = width - width % QUAD
    quads = b.sdiv(kc, i64(QUAD))
    with for_range(b, quads, "quad") as q:
        p0 = b.mul(q, i64(QUAD))
        for g in range(0, squares, QUAD):
            rows = [b.load(b.gep(starts[g + i], [p0], source_etype=ty), typ=vty, align=1)
                    for i in range(QUAD)]
            for w, column in enumerate(_transpose4(b, rows)):
                at = b.gep(dst, [b.add(b.mul(b.add(p0, i64(w)), i64(width)), i64(g))],
                           source_etype=ty)
                b.store(column, at, align=size)
        for i in range(squares, width):
            for w in range(QUAD):
                p = b.add(p0, i64(w))
                value = b.load(b.gep(starts[i], [p], source_etype=ty), typ=ty, align=1)
                b.store(value, b.gep(dst, [b.add(b.mul(p, i64(width)), i64(i))],
                                     source_etype=ty), align=size)
    done = b.mul(quads, i64(QUAD))
    _copy_columns(b, b.sub(kc, done), b.gep(dst, [b.mul(done, i64(width))], source_etype=ty),
                  width, lambda i, p: b.gep(starts[i], [b.add(done, p)], source_etype=ty),
                  ty, size)


def _transpose4(b: ir.IRBuilder, rows: list[ir.Value]) -> list[ir.Value]:
    """The columns of a 4 x 4 square given as its rows (interleave pairs of rows, then
    pairs of pairs: 8 shuffles)."""
    def shuffle(x: ir.Value, y: ir.Value, lanes: list[int]) -> ir.Value:
        return b.shuffle_vector(x, y, ir.Constant(ir.VectorType(ir.IntType(32), 4), lanes))

    low = [shuffle(rows[0], rows[1], [0, 4, 2, 6]), shuffle(rows[2], rows[3], [0, 4, 2, 6])]
    high = [shuffle(rows[0], rows[1], [1, 5, 3, 7]), shuffle(rows[2], rows[3], [1, 5, 3, 7])]
    return [shuffle(low[0], low[1], [0, 1, 4, 5]), shuffle(high[0], high[1], [0, 1, 4, 5]),
            shuffle(low[0], low[1], [2, 3, 6, 7]), shuffle(high[0], high[1], [2, 3, 6, 7])]


def _copy_columns(b: KernelBuilder, kc: ir.Value, dst: ir.Value, width: int,
                  source: Callable[[int, ir.Value], ir.Value],
                  ty: ir.Type, size: int, keep: list[ir.Value] | None = None) -> None:
    """``dst[p * width + i] = *source(i, p)`` for every ``p < kc``, ``i < width``; where
    ``keep[i]`` is false, 0 instead (the source is then a valid stand-in address)."""
    with for_range(b, kc, "p") as p:
        column = b.gep(dst, [b.mul(p, i64(width))], source_etype=ty, inbounds=True)
        for i in range(width):
            value = b.load(source(i, p), typ=ty, align=1)
            if keep is not None:
                value = b.select(keep[i], value, zeros(ty))
            b.store(value, b.gep(column, [i64(i)], source_etype=ty, inbounds=True), align=size)


@library_function
def pack_b_function(module: ir.Module, dtype: np.dtype, nr: int, vector_bytes: int
                    ) -> ir.Function:
    """``void(kc, nc, src, rs, cs, dst)``: ``B[:kc, :nc]`` (byte strides ``rs``, ``cs``)
    into ``ceil(nc / NR)`` slivers of ``kc x NR``, row-major, zero-padded."""
    name = f"aotc.gemm.pack_b.{dtype.name}.{nr}"
    fn = existing(module, name)
    if fn is not None:
        return fn
    ty, size = reg_type(dtype), dtype.itemsize
    row_ty = ir.VectorType(ty, nr)
    params = [("kc", I64), ("nc", I64), ("src", PTR), ("rs", I64), ("cs", I64), ("dst", PTR)]
    with internal_function(module, name, ir.VoidType(), params, vector_bytes, False) as (b, a):
        a["src"].add_attribute("noalias")
        a["dst"].add_attribute("noalias")
        cs = a["cs"]
        slivers = _sliver_count(b, a["nc"], nr)
        with b.if_else(b.icmp_signed("==", cs, i64(size)), likely=True) as (rows, strided):
            with rows:
                whole = b.sdiv(a["nc"], i64(nr))
                _copy_row_groups(b, a, whole, row_ty, nr, size)
                with b.if_then(b.icmp_signed("<", whole, slivers)):
                    _pack_b_sliver(b, a, whole, nr, ty, size)
            with strided, for_range(b, slivers, "sliver") as s:
                _pack_b_sliver(b, a, s, nr, ty, size)
        b.ret_void()
    fn = existing(module, name)
    assert fn is not None
    return fn


#: Rows of ``B`` :func:`_copy_row_groups` copies into every sliver before the next ones.
ROW_GROUP = 8


def _copy_row_groups(b: KernelBuilder, a: dict[str, ir.Argument], whole: ir.Value,
                     row_ty: ir.VectorType, nr: int, size: int) -> None:
    """The ``whole`` full slivers of a ``B`` with contiguous rows, :data:`ROW_GROUP`
    rows at a time across all of them. Going sliver by sliver would read ``kc`` rows a
    row stride apart for each: with a stride of a multiple of 4 KiB those lines share a
    few cache sets and the prefetcher does not follow them (packing took 15% of a
    1024^3 f64 product so); a group reads a few sequential streams."""
    kc, rs = a["kc"], a["rs"]
    ty = row_ty.element
    groups = b.sdiv(b.add(kc, i64(ROW_GROUP - 1)), i64(ROW_GROUP))
    with for_range(b, groups, "group") as g:
        p0 = b.mul(g, i64(ROW_GROUP))
        count = _min(b, b.sub(kc, p0), i64(ROW_GROUP))
        with for_range(b, whole, "sliver") as s:
            start = _byte_at(b, a["src"], b.add(b.mul(p0, rs), b.mul(s, i64(nr * size))))
            dst = b.gep(a["dst"], [b.add(b.mul(s, b.mul(kc, i64(nr))), b.mul(p0, i64(nr)))],
                        source_etype=ty)
            with for_range(b, count, "p") as p:
                row = b.load(_byte_at(b, start, b.mul(p, rs)), typ=row_ty, align=1)
                b.store(row, b.gep(dst, [b.mul(p, i64(nr))], source_etype=ty),
                        align=min(nr * size, 64))


def _pack_b_sliver(b: KernelBuilder, a: dict[str, ir.Argument], s: ir.Value, nr: int,
                   ty: ir.Type, size: int) -> None:
    """Sliver ``s`` of ``B`` on its own: the last, partial one of contiguous rows (masked
    vector copies), or any of a strided ``B``."""
    kc, rs, cs = a["kc"], a["rs"], a["cs"]
    row_ty = ir.VectorType(ty, nr)
    j0 = b.mul(s, i64(nr))
    cols = _min(b, b.sub(a["nc"], j0), i64(nr))
    dst = b.gep(a["dst"], [b.mul(s, b.mul(kc, i64(nr)))], source_etype=ty)
    start = _byte_at(b, a["src"], b.mul(j0, cs))
    with b.if_else(b.icmp_signed("==", cs, i64(size))) as (short, strided):
        with short:  # the last columns of contiguous rows: masked vector copies
            lane = ir.Constant(ir.VectorType(I64, nr), list(range(nr)))
            mask = b.icmp_signed("<", lane, splat(b, cols, nr))
            with for_range(b, kc, "p") as p:
                row = masked_load(b, _byte_at(b, start, b.mul(p, rs)), row_ty, mask)
                b.store(row, b.gep(dst, [b.mul(p, i64(nr))], source_etype=ty),
                        align=min(nr * size, 64))
        with strided:  # past the end: the last column, kept as 0
            _strided_columns(b, kc, dst, nr, start, rs, cs, cols, ty, size)


def _strided_columns(b: KernelBuilder, kc: ir.Value, dst: ir.Value, nr: int, start: ir.Value,
                     rs: ir.Value, cs: ir.Value, cols: ir.Value, ty: ir.Type, size: int
                     ) -> None:
    """A sliver of ``B`` with strided rows (or the last columns of a strided ``B``): one
    element at a time; columns past ``cols`` read the last one and are kept as 0."""
    last = b.sub(cols, i64(1))
    with b.if_else(b.icmp_signed("==", rs, i64(size))) as (transposed, other):
        with transposed:  # contiguous columns: each read whole (see _pack_a_transposed)
            with for_range(b, i64(nr), "j") as j:
                column = _byte_at(b, start, b.mul(_min(b, j, last), cs))
                keep = b.icmp_signed("<", j, cols)
                with for_range(b, kc, "p") as p:
                    value = b.load(b.gep(column, [p], source_etype=ty), typ=ty, align=1)
                    b.store(b.select(keep, value, zeros(ty)),
                            b.gep(dst, [b.add(b.mul(p, i64(nr)), j)], source_etype=ty),
                            align=size)
        with other:
            columns = [b.mul(_min(b, i64(j), last), cs) for j in range(nr)]
            keeps = [b.icmp_signed("<", i64(j), cols) for j in range(nr)]
            _copy_columns(b, kc, dst, nr, lambda j, p: _byte_at(
                b, start, b.add(b.mul(p, rs), columns[j])), ty, size, keeps)
