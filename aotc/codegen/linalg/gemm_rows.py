"""Products with a few rows (``m <= 4``): ``B`` read once, straight from its rows.

With one to four rows of ``A``, the GEMM's packing would copy all of ``B`` to use each
element a few times, and the i-k-j loop reads ``B`` once per row of ``A``. Here each
element of ``B`` is loaded once and used for every row: a block of ``W`` vectors of
``C`` per row stays in registers while ``p`` runs over the contracted axis, each
``B[p, j:j + W V]`` loaded once and multiplied by the ``m`` broadcast ``A[i, p]``.
Columns left over after the ``W``-vector blocks go one vector at a time, and the last
partial vector with masked loads and stores (``llvm.masked.*``: AVX-512 and AVX2 have
them; on SSE LLVM splits them into guarded scalar accesses), so no column is ever
computed by a slower scalar loop.

That walks down ``B`` one column block at a time, a row stride apart per step: fine
while ``B`` sits in L2 (at most :data:`CACHED_B` bytes), but from L3 or memory each
step is a new page the prefetchers do not follow. A larger ``B`` is streamed in its own
order instead: for each row ``p``, ``C[i, :] += A[i, p] * B[p, :]`` for all ``m`` rows
at once (``C``'s rows stay in L1/L2), so ``B`` is read once, sequentially.

Needs unit-stride rows of ``B`` and of ``C`` (the caller checks); ``A`` may have any
strides. ``W`` is sized so that ``m W`` accumulators, ``W`` loads and a broadcast fit
the target's vector registers.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder, existing, internal_function
from ..core.dtypes import I8, I64, PTR, i64, reg_type
from ..core.library import library_function
from ..core.loops import for_range
from ..core.simd import fused_multiply_add, masked_load, masked_store, splat, zeros

#: The most rows of ``A`` this path takes.
MAX_ROWS = 4
#: Bytes of ``B`` up to which it is read in column blocks (it stays in L2 between them);
#: a larger ``B`` is streamed row by row instead (see the module doc).
CACHED_B = 256 * 1024


def _width(rows: int, registers: int) -> int:
    """Vectors per row in a block: ``rows * W + W + 2`` registers at most."""
    return max(1, min(4, (registers - 2) // (rows + 1)))


@library_function
def rows_function(module: ir.Module, dtype: np.dtype, vector_bytes: int, fma: bool
                  ) -> ir.Function:
    """``void(m, n, k, a, a_rs, a_cs, b, b_rs, c, c_rs)``: ``C[:m, :n] = A[:m, :k] @
    B[:k, :n]`` for ``1 <= m <= 4``, with unit-stride rows of ``B`` and ``C`` (byte
    strides ``b_rs``, ``c_rs`` between rows)."""
    name = f"aotc.gemm.rows.{dtype.name}.{vector_bytes}{'.fma' if fma else ''}"
    fn = existing(module, name)
    if fn is not None:
        return fn
    params = [("m", I64), ("n", I64), ("k", I64), ("a", PTR), ("a_rs", I64), ("a_cs", I64),
              ("b", PTR), ("b_rs", I64), ("c", PTR), ("c_rs", I64)]
    with internal_function(module, name, ir.VoidType(), params, vector_bytes, fma) as (b, p):
        for arg in ("a", "b", "c"):
            p[arg].add_attribute("noalias")
        done = b.append_basic_block("rows.done")
        cases = [b.append_basic_block(f"rows.{m}") for m in range(1, MAX_ROWS + 1)]
        size = dtype.itemsize
        cached = b.icmp_signed("<=", b.mul(b.mul(p["k"], p["n"]), i64(size)), i64(CACHED_B))
        switch = b.switch(p["m"], done)
        for m, block in enumerate(cases, start=1):
            switch.add_case(i64(m), block)
            b.position_at_end(block)
            with b.if_else(cached) as (in_cache, streamed):
                with in_cache:
                    _rows(b, p, dtype, m)
                with streamed:
                    _stream(b, p, dtype, m)
            b.branch(done)
        b.position_at_end(done)
        b.ret_void()
    fn = existing(module, name)
    assert fn is not None
    return fn


def _rows(b: KernelBuilder, p: dict[str, ir.Argument], dtype: np.dtype, m: int) -> None:
    """All columns for exactly ``m`` rows: blocks of ``W`` vectors, single vectors, then
    one masked vector."""
    lanes = b.vector_bytes // dtype.itemsize
    width = _width(m, b.isa.vector_registers(b.vector_bytes)) * lanes
    n = p["n"]
    blocks = b.sdiv(n, i64(width))
    with for_range(b, blocks, "jb") as jb:
        _block(b, p, dtype, m, b.mul(jb, i64(width)), width // lanes, None)
    start = b.mul(blocks, i64(width))
    singles = b.sdiv(b.sub(n, start), i64(lanes))
    with for_range(b, singles, "jv") as jv:
        _block(b, p, dtype, m, b.add(start, b.mul(jv, i64(lanes))), 1, None)
    last = b.add(start, b.mul(singles, i64(lanes)))
    with b.if_then(b.icmp_signed("<", last, n)):
        lane = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
        mask = b.icmp_signed("<", b.add(splat(b, last, lanes), lane), splat(b, n, lanes))
        _block(b, p, dtype, m, last, 1, mask)


def _block(b: KernelBuilder, p: dict[str, ir.Argument], dtype: np.dtype, m: int,
           j0: ir.Value, vectors: int, mask: ir.Value | None) -> None:
    """``C[:m, j0:j0 + vectors V] = A @ B[:, same]``, accumulated in registers over ``p``
    (phis); ``mask`` limits a single vector's columns."""
    ty, size = reg_type(dtype), dtype.itemsize
    lanes = b.vector_bytes // size
    vty = ir.VectorType(ty, lanes)
    pre = b.block
    head, body, done = (b.append_basic_block(f"rk.{s}") for s in ("head", "body", "done"))
    b_col = b.gep(p["b"], [j0], source_etype=ty)
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64, name="p")
    k.add_incoming(i64(0), pre)
    accs = [[b.phi(vty, name=f"r{i}.{v}") for v in range(vectors)] for i in range(m)]
    for row in accs:
        for phi in row:
            phi.add_incoming(zeros(vty), pre)
    b.cbranch(b.icmp_signed("<", k, p["k"]), body, done)
    b.position_at_end(body)
    b_row = b.gep(b_col, [b.mul(k, p["b_rs"])], source_etype=I8)
    loads = [masked_load(b, b.gep(b_row, [i64(v * lanes)], source_etype=ty), vty, mask)
             for v in range(vectors)]
    a_col = b.gep(p["a"], [b.mul(k, p["a_cs"])], source_etype=I8)
    for i in range(m):
        x = b.load(b.gep(a_col, [b.mul(i64(i), p["a_rs"])], source_etype=I8), typ=ty, align=1)
        xs = splat(b, x, lanes)
        for v in range(vectors):
            accs[i][v].add_incoming(fused_multiply_add(b, xs, loads[v], accs[i][v]), b.block)
    k.add_incoming(b.add(k, i64(1), flags=("nuw", "nsw")), b.block)
    b.branch(head)
    b.position_at_end(done)
    for i in range(m):
        c_row = b.gep(p["c"], [b.add(b.mul(i64(i), p["c_rs"]), b.mul(j0, i64(size)))],
                      source_etype=I8)
        for v in range(vectors):
            masked_store(b, accs[i][v], b.gep(c_row, [i64(v * lanes)], source_etype=ty), mask)


def _stream(b: KernelBuilder, p: dict[str, ir.Argument], dtype: np.dtype, m: int) -> None:
    """``C = 0``, then for each row ``p`` of ``B``: ``C[i, :] += A[i, p] * B[p, :]``, all
    ``m`` rows per vector of ``B`` (one masked vector at the end of each row), rows of
    ``B`` in groups of :data:`GROUP`."""
    ty, size = reg_type(dtype), dtype.itemsize
    lanes = b.vector_bytes // size
    n = p["n"]
    whole = b.sdiv(n, i64(lanes))
    last = b.mul(whole, i64(lanes))
    lane = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
    mask = b.icmp_signed("<", b.add(splat(b, last, lanes), lane), splat(b, n, lanes))
    c_rows = [b.gep(p["c"], [b.mul(i64(i), p["c_rs"])], source_etype=I8) for i in range(m)]
    for row in c_rows:
        with for_range(b, n, "cz") as j:
            b.store(zeros(ty), b.gep(row, [j], source_etype=ty), align=1)
    groups = b.sdiv(p["k"], i64(GROUP))
    with for_range(b, groups, "sg") as g:
        _stream_rows(b, p, ty, m, c_rows, b.mul(g, i64(GROUP)), GROUP, whole, last, mask)
    with for_range(b, b.sub(p["k"], b.mul(groups, i64(GROUP))), "sp") as r:
        _stream_rows(b, p, ty, m, c_rows, b.add(b.mul(groups, i64(GROUP)), r), 1, whole,
                     last, mask)


#: Rows of ``B`` streamed together: each vector of ``C`` is loaded and stored once per
#: ``GROUP`` rows, not once per row.
GROUP = 4


def _stream_rows(b: KernelBuilder, p: dict[str, ir.Argument], ty: ir.Type, m: int,
                 c_rows: list[ir.Value], first: ir.Value, count: int, whole: ir.Value,
                 last: ir.Value, mask: ir.Value) -> None:
    """``C[i, :] += sum(A[i, first + q] * B[first + q, :] for q < count)``."""
    lanes = mask.type.count
    vty = ir.VectorType(ty, lanes)
    ks = [b.add(first, i64(q)) for q in range(count)]
    b_rows = [b.gep(p["b"], [b.mul(k, p["b_rs"])], source_etype=I8) for k in ks]
    a_cols = [b.gep(p["a"], [b.mul(k, p["a_cs"])], source_etype=I8) for k in ks]
    xs = [[splat(b, b.load(b.gep(col, [b.mul(i64(i), p["a_rs"])], source_etype=I8), typ=ty,
                           align=1), lanes) for col in a_cols] for i in range(m)]

    def update(j: ir.Value, masked: ir.Value | None) -> None:
        bvs = [masked_load(b, b.gep(row, [j], source_etype=ty), vty, masked) for row in b_rows]
        for x, c_row in zip(xs, c_rows, strict=True):
            at = b.gep(c_row, [j], source_etype=ty)
            acc = masked_load(b, at, vty, masked)
            for q in range(count):
                acc = fused_multiply_add(b, x[q], bvs[q], acc)
            masked_store(b, acc, at, masked)

    with for_range(b, whole, "sj") as jv:
        update(b.mul(jv, i64(lanes)), None)
    with b.if_then(b.icmp_signed("<", last, p["n"])):
        update(last, mask)
