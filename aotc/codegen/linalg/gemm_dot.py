"""Float dot products at memory speed: the matrix-vector and vector-vector products.

A matrix-vector product does two flops per element of the matrix it reads once, so it
runs at memory bandwidth, if the arithmetic keeps up. A single ``acc += x[i] * y[i]``
cannot: every add waits for the previous one (4 cycles), and without reassociation
LLVM may not split the chain. So the sum is split explicitly: :data:`CHAINS`
independent vector accumulators of ``V`` lanes (the target's register width, see
:class:`~.builder.KernelBuilder`) take consecutive vectors of both rows in turn; at the
end they are added pairwise, their lanes as a tree, then the few elements left over.
The summation order thus differs from the naive loop's (as it does in BLAS), with the
same ``n * eps * sum |x| |y|`` bound or better: each chain sums ``n / (CHAINS * V)``
products.

Rows that are not unit-stride (a transposed operand) take one strided element at a time.

A matrix-vector product (:func:`gemv_function`) reads several rows at once, so each
vector of ``x`` it loads serves all of them; for a transposed matrix it adds scaled
columns instead, which reads the matrix in its own order.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder, existing, internal_function
from ..core.dtypes import I8, I64, PTR, i64, reg_type
from ..core.library import library_function
from ..core.loops import for_range
from ..core.simd import fused_multiply_add, zeros
from ..nests.pairwise import lanes_sum

#: Independent vector accumulators: enough to cover the FMA latency (4 cycles) at two
#: per cycle, while loads are the real limit.
CHAINS = 4


@library_function
def dot_function(module: ir.Module, dtype: np.dtype, vector_bytes: int, fma: bool
                 ) -> ir.Function:
    """``T(n, x, xs, y, ys)``: ``sum(x[i] * y[i] for i < n)``, byte strides ``xs``,
    ``ys``."""
    name = f"aotc.dot.{dtype.name}.{vector_bytes}{'.fma' if fma else ''}"
    fn = existing(module, name)
    if fn is not None:
        return fn
    ty, size = reg_type(dtype), dtype.itemsize
    lanes = vector_bytes // size
    vty = ir.VectorType(ty, lanes)
    params = [("n", I64), ("x", PTR), ("xs", I64), ("y", PTR), ("ys", I64)]
    with internal_function(module, name, ty, params, vector_bytes, fma) as (b, p):
        n = p["n"]
        total = b.entry_alloca(ty, name="total")
        b.store(zeros(ty), total)
        unit = b.and_(b.icmp_signed("==", p["xs"], i64(size)),
                      b.icmp_signed("==", p["ys"], i64(size)))
        with b.if_else(unit, likely=True) as (contiguous, strided):
            with contiguous:
                step = CHAINS * lanes
                blocks = b.sdiv(n, i64(step))
                accs = [b.entry_alloca(vty, name=f"chain{c}") for c in range(CHAINS)]
                for acc in accs:
                    b.store(zeros(vty), acc)
                with for_range(b, blocks, "q") as q:
                    base = b.mul(q, i64(step))
                    for c, acc in enumerate(accs):
                        at = b.add(base, i64(c * lanes))
                        xv = b.load(b.gep(p["x"], [at], source_etype=ty), typ=vty, align=1)
                        yv = b.load(b.gep(p["y"], [at], source_etype=ty), typ=vty, align=1)
                        b.store(fused_multiply_add(b, xv, yv, b.load(acc, typ=vty)), acc)
                values = [b.load(acc, typ=vty) for acc in accs]
                while len(values) > 1:
                    values = [b.fadd(values[k], values[k + 1]) for k in range(0, len(values), 2)]
                b.store(lanes_sum(b, values[0], lanes), total)
                with for_range(b, b.sub(n, b.mul(blocks, i64(step))), "tail") as t:
                    at = b.add(b.mul(blocks, i64(step)), t)
                    x = b.load(b.gep(p["x"], [at], source_etype=ty), typ=ty, align=1)
                    y = b.load(b.gep(p["y"], [at], source_etype=ty), typ=ty, align=1)
                    b.store(fused_multiply_add(b, x, y, b.load(total, typ=ty)), total)
            with strided, for_range(b, n, "i") as i:
                x = b.load(b.gep(p["x"], [b.mul(i, p["xs"])], source_etype=I8), typ=ty,
                           align=1)
                y = b.load(b.gep(p["y"], [b.mul(i, p["ys"])], source_etype=I8), typ=ty,
                           align=1)
                b.store(fused_multiply_add(b, x, y, b.load(total, typ=ty)), total)
        b.ret(b.load(total, typ=ty))
    fn = existing(module, name)
    assert fn is not None
    return fn


#: Rows of the matrix a matrix-vector product reads at once (each vector of ``x`` loaded
#: serves them all, and four streams keep more memory requests in flight than one).
ROWS = 4
#: Accumulators per row in the matrix-vector product (ROWS * ROW_CHAINS registers).
ROW_CHAINS = 2


@library_function
def gemv_function(module: ir.Module, dtype: np.dtype, vector_bytes: int, fma: bool
                  ) -> ir.Function:
    """``void(m, n, a, a_rs, a_cs, x, xs, out, os)``: ``out[i] = sum_j a[i, j] x[j]``
    (byte strides). Unit-stride rows go :data:`ROWS` at a time; a matrix whose columns
    are unit-stride (a transposed one) is summed column by column into ``out`` (the
    loop over ``out`` vectorizes); any other layout is one dot product per row."""
    name = f"aotc.gemv.{dtype.name}.{vector_bytes}{'.fma' if fma else ''}"
    fn = existing(module, name)
    if fn is not None:
        return fn
    dot = dot_function(module, dtype, vector_bytes, fma)
    ty, size = reg_type(dtype), dtype.itemsize
    params = [("m", I64), ("n", I64), ("a", PTR), ("a_rs", I64), ("a_cs", I64), ("x", PTR),
              ("xs", I64), ("out", PTR), ("os", I64)]
    with internal_function(module, name, ir.VoidType(), params, vector_bytes, fma) as (b, p):
        for arg in ("a", "x", "out"):
            p[arg].add_attribute("noalias")
        rows_unit = b.and_(b.icmp_signed("==", p["a_cs"], i64(size)),
                           b.icmp_signed("==", p["xs"], i64(size)))
        columns_unit = b.and_(b.icmp_signed("==", p["a_rs"], i64(size)),
                              b.icmp_signed("==", p["os"], i64(size)))
        with b.if_else(rows_unit, likely=True) as (by_rows, other):
            with by_rows:
                _row_blocks(b, p, ty, size, vector_bytes // size)
            with other, b.if_else(columns_unit) as (by_columns, generic):
                with by_columns:
                    _by_columns(b, p, ty, size)
                with generic, for_range(b, p["m"], "i") as i:
                    row = b.gep(p["a"], [b.mul(i, p["a_rs"])], source_etype=I8)
                    value = b.call(dot, [p["n"], row, p["a_cs"], p["x"], p["xs"]])
                    b.store(value, b.gep(p["out"], [b.mul(i, p["os"])], source_etype=I8),
                            align=1)
        b.ret_void()
    fn = existing(module, name)
    assert fn is not None
    return fn


def _row_blocks(b: KernelBuilder, p: dict[str, ir.Argument], ty: ir.Type, size: int,
                lanes: int) -> None:
    """Unit-stride rows and ``x``: :data:`ROWS` rows per pass, then the rest one by one."""
    vty = ir.VectorType(ty, lanes)
    n, step = p["n"], ROW_CHAINS * lanes
    blocks = b.sdiv(n, i64(step))
    done = b.mul(blocks, i64(step))
    accs = [[b.entry_alloca(vty, name=f"row{t}.{c}") for c in range(ROW_CHAINS)]
            for t in range(ROWS)]
    sums = [b.entry_alloca(ty, name=f"sum{t}") for t in range(ROWS)]
    dot = dot_function(b.module, np.dtype(f"f{size}"), b.vector_bytes, b.fma)
    groups = b.sdiv(p["m"], i64(ROWS))
    with for_range(b, groups, "g") as g:
        first = b.mul(g, i64(ROWS))
        rows = [b.gep(p["a"], [b.mul(b.add(first, i64(t)), p["a_rs"])], source_etype=I8)
                for t in range(ROWS)]
        for row in accs:
            for acc in row:
                b.store(zeros(vty), acc)
        with for_range(b, blocks, "q") as q:
            base = b.mul(q, i64(step))
            for c in range(ROW_CHAINS):
                at = b.add(base, i64(c * lanes))
                xv = b.load(b.gep(p["x"], [at], source_etype=ty), typ=vty, align=1)
                for t in range(ROWS):
                    av = b.load(b.gep(rows[t], [at], source_etype=ty), typ=vty, align=1)
                    acc = accs[t][c]
                    b.store(fused_multiply_add(b, av, xv, b.load(acc, typ=vty)), acc)
        for t in range(ROWS):
            values = [b.load(acc, typ=vty) for acc in accs[t]]
            while len(values) > 1:
                values = [b.fadd(values[k], values[k + 1]) for k in range(0, len(values), 2)]
            b.store(lanes_sum(b, values[0], lanes), sums[t])
        with for_range(b, b.sub(n, done), "tail") as j:
            at = b.add(done, j)
            xj = b.load(b.gep(p["x"], [at], source_etype=ty), typ=ty, align=1)
            for t in range(ROWS):
                aj = b.load(b.gep(rows[t], [at], source_etype=ty), typ=ty, align=1)
                b.store(fused_multiply_add(b, aj, xj, b.load(sums[t], typ=ty)), sums[t])
        for t in range(ROWS):
            out = b.gep(p["out"], [b.mul(b.add(first, i64(t)), p["os"])], source_etype=I8)
            b.store(b.load(sums[t], typ=ty), out, align=1)
    left = b.mul(groups, i64(ROWS))
    with for_range(b, b.sub(p["m"], left), "r") as r:
        i = b.add(left, r)
        row = b.gep(p["a"], [b.mul(i, p["a_rs"])], source_etype=I8)
        value = b.call(dot, [n, row, i64(size), p["x"], i64(size)])
        b.store(value, b.gep(p["out"], [b.mul(i, p["os"])], source_etype=I8), align=1)


def _by_columns(b: KernelBuilder, p: dict[str, ir.Argument], ty: ir.Type, size: int) -> None:
    """Unit-stride columns and ``out``: ``out = 0``, then ``out += x[j] * a[:, j]`` for
    each ``j`` (``out`` stays in cache; the loop over it vectorizes)."""
    m = p["m"]
    with for_range(b, m, "z") as i:
        b.store(zeros(ty), b.gep(p["out"], [i], source_etype=ty), align=1)
    with for_range(b, p["n"], "j") as j:
        xj = b.load(b.gep(p["x"], [b.mul(j, p["xs"])], source_etype=I8), typ=ty, align=1)
        column = b.gep(p["a"], [b.mul(j, p["a_cs"])], source_etype=I8)
        with for_range(b, m, "i") as i:
            at = b.gep(p["out"], [i], source_etype=ty)
            aij = b.load(b.gep(column, [i], source_etype=ty), typ=ty, align=1)
            b.store(b.fadd(b.load(at, typ=ty, align=1), b.fmul(aij, xj)), at, align=1)
