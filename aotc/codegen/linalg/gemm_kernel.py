"""The GEMM micro-kernel: an ``MR x NR`` block of ``C`` accumulated in vector registers.

This is the one place where the matrix product's arithmetic happens (see :mod:`.gemm`
for the loops around it and :mod:`.gemm_pack` for the packed operands it reads). Per
step ``p`` of the contracted axis it loads one row of the packed ``B`` sliver (``NR``
elements, ``NR / V`` vectors of ``V`` lanes), broadcasts each of the ``MR`` elements of
the packed ``A`` sliver's column ``p``, and does ``MR * NR / V`` fused multiply-adds
into as many accumulators. The accumulators are SSA values (loop phis), so they stay
in registers: ``MR * NR / V`` plus the ``NR / V`` loads and one broadcast must fit in
the target's vector registers (16 with SSE/AVX2, 32 with AVX-512), which is how
:func:`.gemm.blocking` picks ``MR`` and ``NR``. Without FMA hardware (the x86-64-v2
baseline) the update is a multiply and an add: ``llvm.fma`` would be a libm call. The
loop over ``p`` is unrolled :data:`UNROLL` times (loop overhead and the loads of the
next step overlap the multiply-adds); the steps left over run one at a time.

At the end the block is written to ``C`` (any strides): stored when ``accumulate`` is 0
(the first block of the contracted axis), added to ``C`` otherwise. A full block over
unit-stride rows of ``C`` is stored with vector instructions, an edge block (fewer than
``MR`` rows or ``NR`` columns left) with masked ones; only a block of a ``C`` with
strided rows goes through a small tile on the stack, element by element.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder, existing, internal_function
from ..core.dtypes import I8, I64, PTR, i64, reg_type
from ..core.library import library_function
from ..core.loops import for_range
from ..core.simd import I32, fused_multiply_add, masked_load, masked_store, splat, zeros

PARAMS = [("kc", I64), ("pa", PTR), ("pb", PTR), ("c", PTR), ("c_rs", I64),
          ("c_cs", I64), ("rows", I64), ("cols", I64), ("accumulate", I64)]
#: The parameters of an unpacked kernel: ``A`` and ``B`` in place, by byte strides.
UNPACKED_PARAMS = [("kc", I64), ("a", PTR), ("a_rs", I64), ("a_cs", I64), ("b", PTR),
                   ("b_rs", I64), ("c", PTR), ("c_rs", I64), ("c_cs", I64), ("rows", I64),
                   ("cols", I64), ("accumulate", I64)]


@library_function
def micro_kernel(module: ir.Module, dtype: np.dtype, mr: int, nr: int, vector_bytes: int,
                 fma: bool, block: tuple[int, int] | None = None,
                 unpacked: bool = False, edge: bool = False) -> ir.Function:
    """``void(kc, pa, pb, c, c_rs, c_cs, rows, cols, accumulate)``: ``C[:rows, :cols]``
    (byte strides ``c_rs``, ``c_cs``) gets, or gets added, the product of the packed
    ``MR x kc`` sliver ``pa`` (column-major: ``pa[p * MR + i]``) and the packed
    ``kc x NR`` sliver ``pb`` (row-major: ``pb[p * NR + j]``). ``C`` may be a caller's
    array, so it is accessed with alignment 1 (NumPy allows unaligned arrays).

    ``block`` (rows, columns), at most ``MR x NR``, is the part of the slivers an edge
    kernel computes (:func:`edge_blocks`): the last 4 rows of a 64-row product need
    not pay for 12.

    ``unpacked`` reads ``A`` and ``B`` where they are (:data:`UNPACKED_PARAMS`: any
    strides for ``A``, unit-stride rows of ``B``), for products small enough that
    packing would cost more than it saves (:mod:`.gemm_small`): rows past ``rows``
    read the last row again, and an ``edge`` kernel loads ``B`` through masks (no column
    past ``cols`` is read: it may be past the array's end)."""
    br, bc = block or (mr, nr)
    name = (f"aotc.gemm.kernel.{dtype.name}.{mr}x{nr}"
            f"{'' if (br, bc) == (mr, nr) else f'.{br}x{bc}'}.{vector_bytes}"
            f"{'.fma' if fma else ''}{'.unpacked' if unpacked else ''}"
            f"{'.edge' if edge else ''}")
    fn = existing(module, name)
    if fn is not None:
        return fn
    ty = reg_type(dtype)
    size = dtype.itemsize
    lanes = vector_bytes // size
    nv = bc // lanes
    vty = ir.VectorType(ty, lanes)
    params = UNPACKED_PARAMS if unpacked else PARAMS
    with internal_function(module, name, ir.VoidType(), params, vector_bytes, fma) as (b, a):
        for arg in ("a", "b", "c") if unpacked else ("pa", "pb", "c"):
            a[arg].add_attribute("noalias")
        tile = b.entry_alloca(ir.ArrayType(ty, br * bc), name="tile")
        _prefetch_block(b, a, br)
        operands = (_unpacked_operands(b, a, br, nv, vty, edge) if unpacked
                    else _packed_operands(b, a, mr, nr, vty, vector_bytes))
        # The k loop, unrolled, then the steps left over.
        unroll = UNPACKED_UNROLL if unpacked else UNROLL
        initial = [[zeros(vty)] * nv for _ in range(br)]
        steps = b.sdiv(a["kc"], i64(unroll))
        accs = _k_loop(b, i64(0), steps, unroll, initial, operands)
        accs = _k_loop(b, b.mul(steps, i64(unroll)), b.srem(a["kc"], i64(unroll)), 1, accs,
                       operands)
        _write_block(b, a, accs, ty, vty, size, br, bc, tile)
        b.ret_void()
    fn = existing(module, name)
    assert fn is not None
    return fn


#: How a kernel reads its operands at step ``p``: ``A[i, p]`` and vector ``v`` of ``B[p]``.
Operands = tuple[Callable[[ir.Value, int], ir.Value], Callable[[ir.Value, int], ir.Value]]


def _packed_operands(b: KernelBuilder, a: dict[str, ir.Argument], mr: int, nr: int,
                     vty: ir.VectorType, vector_bytes: int) -> Operands:
    ty, lanes = vty.element, vty.count

    def a_element(p: ir.Value, i: int) -> ir.Value:
        at = b.gep(a["pa"], [b.add(b.mul(p, i64(mr)), i64(i))], source_etype=ty, inbounds=True)
        return b.load(at, typ=ty, align=vector_bytes // lanes)

    def b_vector(p: ir.Value, v: int) -> ir.Value:
        at = b.gep(a["pb"], [b.add(b.mul(p, i64(nr)), i64(v * lanes))], source_etype=ty,
                   inbounds=True)
        return b.load(at, typ=vty, align=vector_bytes)

    return a_element, b_vector


def _unpacked_operands(b: KernelBuilder, a: dict[str, ir.Argument], rows: int, vectors: int,
                       vty: ir.VectorType, edge: bool) -> Operands:
    """``A[i, p]`` and ``B[p, v V:(v + 1) V]`` in place; row ``i`` past ``rows`` reads
    the last row (its result is not stored), and an ``edge`` block's ``B`` vectors load
    only the columns before ``cols``."""
    ty, lanes = vty.element, vty.count
    last = b.sub(a["rows"], i64(1))
    offsets = [b.mul(b.select(b.icmp_signed("<", i64(i), last), i64(i), last), a["a_rs"])
               for i in range(rows)]
    lane = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
    masks = [b.icmp_signed("<", b.add(lane, splat(b, i64(v * lanes), lanes)),
                           splat(b, a["cols"], lanes)) if edge else None
             for v in range(vectors)]

    def a_element(p: ir.Value, i: int) -> ir.Value:
        at = b.gep(a["a"], [b.add(offsets[i], b.mul(p, a["a_cs"]))], source_etype=I8)
        return b.load(at, typ=ty, align=1)

    def b_vector(p: ir.Value, v: int) -> ir.Value:
        row = b.gep(a["b"], [b.mul(p, a["b_rs"])], source_etype=I8)
        return masked_load(b, b.gep(row, [i64(v * lanes)], source_etype=ty), vty, masks[v])

    return a_element, b_vector


def _prefetch_block(b: KernelBuilder, a: dict[str, ir.Argument], mr: int) -> None:
    """Ask for the lines of the block of ``C`` (its first and last element of each row)
    before the multiply-adds, which take thousands of cycles: a large ``C`` is not in
    cache, and loading the block only when it is written stalled every call on memory
    (1024^3 f64 products ran at 86% of the small ones' speed)."""
    fn = b.module.declare_intrinsic("llvm.prefetch", [PTR], ir.FunctionType(
        ir.VoidType(), [PTR, I32, I32, I32]))
    last_row = b.sub(a["rows"], i64(1))
    span = b.mul(b.sub(a["cols"], i64(1)), a["c_cs"])
    for i in range(mr):
        row = b.select(b.icmp_signed("<", i64(i), last_row), i64(i), last_row)
        start = b.gep(a["c"], [b.mul(row, a["c_rs"])], source_etype=I8)
        for at in (start, b.gep(start, [span], source_etype=I8)):
            b.call(fn, [at, ir.Constant(I32, 1), ir.Constant(I32, 3), ir.Constant(I32, 1)])


#: Steps of the contracted axis per iteration of the micro-kernel's loop.
UNROLL = 4
#: ... and of an unpacked kernel's: LLVM hoists every step's loads of ``B`` to the top of
#: an unrolled iteration, which with 24 accumulators spilled them.
UNPACKED_UNROLL = 1


def edge_blocks(mr: int, nr: int, lanes: int) -> list[tuple[int, int]]:
    """The (rows, columns) blocks of :func:`micro_kernel` variants, smallest first: a
    third, two thirds and all of ``MR`` rows, by one vector or all of ``NR`` columns.
    An edge tile runs the smallest that covers it (a 64-row product is five 12-row
    tiles and a 4-row one, not six of 12: 11% less arithmetic)."""
    rows = sorted({max(1, mr // 3), max(1, 2 * mr // 3), mr})
    columns = sorted({lanes, nr})
    return [(r, c) for c in columns for r in rows]


#: The micro-kernel variants of a blocking, (rows, columns) each, the full block last.
Kernels = list[tuple[tuple[int, int], ir.Function]]


def kernel_variants(module: ir.Module, dtype: np.dtype, mr: int, nr: int, vector_bytes: int,
                    fma: bool, unpacked: bool = False) -> Kernels:
    """The ``MR x NR`` micro-kernel's variants for the blocks of :func:`edge_blocks`,
    smallest first, the full block last. Unpacked edge variants load ``B`` through masks
    (the ``MR x NR`` one too), so a whole tile gets one more, the full kernel without."""
    blocks = sorted(edge_blocks(mr, nr, vector_bytes // dtype.itemsize),
                    key=lambda rc: (rc[0] * rc[1], rc))
    variants = [(rc, micro_kernel(module, dtype, mr, nr, vector_bytes, fma, rc,
                                  unpacked=unpacked, edge=unpacked)) for rc in blocks]
    if unpacked:
        variants.append(((mr, nr), micro_kernel(module, dtype, mr, nr, vector_bytes, fma,
                                                unpacked=True)))
    return variants


def _k_loop(b: KernelBuilder, first: ir.Value, count: ir.Value, unroll: int,
            initial: list[list[ir.Value]], operands: Operands) -> list[list[ir.Value]]:
    """``count`` iterations of ``unroll`` steps from step ``first``; the accumulators are
    phis starting at ``initial``. Returns their values after the loop."""
    a_element, b_vector = operands
    lanes = initial[0][0].type.count
    pre = b.block
    head = b.append_basic_block("k.head")
    body = b.append_basic_block("k.body")
    done = b.append_basic_block("k.done")
    b.branch(head)
    b.position_at_end(head)
    q = b.phi(I64, name="q")
    q.add_incoming(i64(0), pre)
    accs = [[b.phi(start.type, name=f"acc{i}.{v}") for v, start in enumerate(row)]
            for i, row in enumerate(initial)]
    for row, start_row in zip(accs, initial, strict=True):
        for phi, value in zip(row, start_row, strict=True):
            phi.add_incoming(value, pre)
    b.cbranch(b.icmp_signed("<", q, count), body, done)
    b.position_at_end(body)
    values: list[list[ir.Value]] = [list(row) for row in accs]
    base = b.add(first, b.mul(q, i64(unroll)))
    for u in range(unroll):
        p = b.add(base, i64(u))
        bvec = [b_vector(p, v) for v in range(len(initial[0]))]
        for i in range(len(initial)):
            x = splat(b, a_element(p, i), lanes)
            for v in range(len(initial[0])):
                values[i][v] = fused_multiply_add(b, x, bvec[v], values[i][v])
    for row, new in zip(accs, values, strict=True):
        for phi, value in zip(row, new, strict=True):
            phi.add_incoming(value, b.block)
    q.add_incoming(b.add(q, i64(1), flags=("nuw", "nsw")), b.block)
    b.branch(head)
    b.position_at_end(done)
    return [list(row) for row in accs]


def _write_block(b: KernelBuilder, a: dict[str, ir.Argument], accs: list[list[ir.Value]],
                 ty: ir.Type, vty: ir.VectorType, size: int, mr: int, nr: int,
                 tile: ir.Value) -> None:
    """Store (or add) the accumulators into ``C``: vectors for a full unit-stride
    block, else through ``tile``."""
    lanes = vty.count
    full = b.and_(b.and_(b.icmp_signed("==", a["rows"], i64(mr)),
                         b.icmp_signed("==", a["cols"], i64(nr))),
                  b.icmp_signed("==", a["c_cs"], i64(size)))
    accumulate = b.icmp_signed("!=", a["accumulate"], i64(0))
    with b.if_else(full, likely=True) as (vectors, edge):
        with vectors:
            for add in (True, False):
                with b.if_then(accumulate if add else b.not_(accumulate)):
                    for i, row in enumerate(accs):
                        start = b.gep(a["c"], [b.mul(i64(i), a["c_rs"])], source_etype=I8)
                        for v, acc in enumerate(row):
                            at = b.gep(start, [i64(v * lanes)], source_etype=ty)
                            value = b.fadd(b.load(at, typ=vty, align=1), acc) if add else acc
                            b.store(value, at, align=1)
        with edge, b.if_else(b.icmp_signed("==", a["c_cs"], i64(size))) as (rows, tiled):
            with rows:  # unit-stride rows of C: masked vectors, row by row
                lane = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
                cols = splat(b, a["cols"], lanes)
                masks = [b.icmp_signed("<", b.add(lane, splat(b, i64(v * lanes), lanes)), cols)
                         for v in range(len(accs[0]))]
                for i, row in enumerate(accs):
                    with b.if_then(b.icmp_signed("<", i64(i), a["rows"])):
                        start = b.gep(a["c"], [b.mul(i64(i), a["c_rs"])], source_etype=I8)
                        for v, acc in enumerate(row):
                            at = b.gep(start, [i64(v * lanes)], source_etype=ty)
                            old = masked_load(b, at, vty, masks[v])
                            value = b.select(accumulate, b.fadd(old, acc), acc)
                            masked_store(b, value, at, masks[v])
            with tiled:
                _through_tile(b, a, accs, ty, nr, size, tile, accumulate)


def _through_tile(b: KernelBuilder, a: dict[str, ir.Argument], accs: list[list[ir.Value]],
                  ty: ir.Type, nr: int, size: int, tile: ir.Value, accumulate: ir.Value
                  ) -> None:
    """An edge block of a strided ``C``: the accumulators to ``tile``, then element by
    element."""
    lanes = accs[0][0].type.count
    for i, row in enumerate(accs):
        for v, acc in enumerate(row):
            at = b.gep(tile, [i64(i * nr + v * lanes)], source_etype=ty)
            b.store(acc, at, align=size)
    with for_range(b, a["rows"], "ei") as i:
        start = b.gep(a["c"], [b.mul(i, a["c_rs"])], source_etype=I8)
        with for_range(b, a["cols"], "ej") as j:
            at = b.gep(start, [b.mul(j, a["c_cs"])], source_etype=I8)
            value = b.load(b.gep(tile, [b.add(b.mul(i, i64(nr)), j)], source_etype=ty),
                           typ=ty, align=size)
            old = b.load(at, typ=ty, align=1)
            b.store(b.select(accumulate, b.fadd(old, value), value), at, align=1)
