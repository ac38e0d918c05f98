"""Float sums that vectorize without fast-math and are as accurate as NumPy's.

A sequential ``acc += x[i]`` cannot be vectorized without ``reassoc``, and its error
grows with n. NumPy sums in blocks of 128 with 8 accumulators and combines blocks
pairwise. We write the same shape into the IR explicitly, so no reassociation is needed:

* a block of 128 elements is summed into one ``<L x T>`` vector register (L = 8 for
  float64, 16 for float32: a 64-byte register, or four SSE registers on the baseline
  target), 128/L elements per lane, then the lanes are added as a balanced tree;
* block sums go into a *cascade*: a stack of partial sums indexed by level, combined like
  a binary counter, so block sums are added as a balanced binary tree (pairwise
  summation over blocks) with O(log n) state;
* with several reduced axes, every row of the innermost one feeds the same cascade.

Each element therefore passes through at most 128/L + log2(L) + log2(n/128) + 2
roundings, never more than NumPy's pairwise sum (16 + 3 + log2(n/128)). Contiguous rows
are read with vector loads; strided rows with one load per lane.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.dtypes import I64, i64, reg_type
from ..core.loops import for_range, loop_nest
from ..core.values import View, element_ptr

BLOCK = 128
LEVELS = 64
REGISTER_BYTES = 64


def lanes_for(dtype: np.dtype) -> int:
    return REGISTER_BYTES // dtype.itemsize


def lanes_sum(b: ir.IRBuilder, v: ir.Value, lanes: int) -> ir.Value:
    """Add the lanes of ``v`` pairwise: lane k with lane k + width/2, halving."""
    width = lanes
    while width > 1:
        half = width // 2
        mask = ir.VectorType(ir.IntType(32), half)
        lo = b.shuffle_vector(v, v, ir.Constant(mask, list(range(half))))
        hi = b.shuffle_vector(v, v, ir.Constant(mask, [k + half for k in range(half)]))
        v = b.fadd(lo, hi)
        width = half
    return b.extract_element(v, ir.Constant(ir.IntType(32), 0))


class Cascade:
    """Partial sums combined as a binary counter: ``push`` block sums, then ``total``."""

    def __init__(self, b: KernelBuilder, ty: ir.Type) -> None:
        self.b, self.ty = b, ty
        self.stack = b.entry_alloca(ir.ArrayType(ty, LEVELS), name="cascade")
        self.count = b.entry_alloca(I64, name="cascade.n")

    def reset(self) -> None:
        self.b.store(i64(0), self.count)

    def _slot(self, level: ir.Value) -> ir.Value:
        return self.b.gep(self.stack, [i64(0), level], source_etype=self.stack.allocated_type)

    def push(self, value: ir.Value) -> None:
        """While the counter's low bit is set, fold that level into the carry."""
        b = self.b
        count = b.load(self.count, typ=I64)
        pre = b.block
        head = b.append_basic_block("cascade.head")
        body = b.append_basic_block("cascade.fold")
        done = b.append_basic_block("cascade.store")
        b.branch(head)
        b.position_at_end(head)
        carry, level, bits = b.phi(self.ty), b.phi(I64), b.phi(I64)
        b.cbranch(b.trunc(bits, ir.IntType(1)), body, done)
        b.position_at_end(body)
        folded = b.fadd(b.load(self._slot(level), typ=self.ty), carry)
        for phi, start, step in ((carry, value, folded), (level, i64(0), b.add(level, i64(1))),
                                 (bits, count, b.lshr(bits, i64(1)))):
            phi.add_incoming(start, pre)
            phi.add_incoming(step, body)
        b.branch(head)
        b.position_at_end(done)
        b.store(carry, self._slot(level))
        b.store(b.add(count, i64(1)), self.count)

    def total(self, zero: ir.Value) -> ir.Value:
        """Sum the occupied levels, lowest (most recent, smallest) first."""
        b = self.b
        acc = b.entry_alloca(self.ty, name="cascade.sum")
        b.store(zero, acc)
        count = b.load(self.count, typ=I64)
        with for_range(b, i64(LEVELS), "lvl") as level:
            occupied = b.trunc(b.lshr(count, level), ir.IntType(1))
            with b.if_then(occupied):
                b.store(b.fadd(b.load(self._slot(level), typ=self.ty), b.load(acc, typ=self.ty)),
                        acc)
        return b.load(acc, typ=self.ty)


def pairwise_sum(b: KernelBuilder, x: View, axes: Sequence[int],
                 index_of: Callable[[Sequence[ir.Value], ir.Value], list[ir.Value]]
                 ) -> ir.Value:
    """The sum of ``x`` over ``axes`` at one kept index.

    ``index_of(outer, i)`` gives the full index of element ``i`` of the innermost
    reduced axis at the outer reduced indices ``outer``.
    """
    dtype = x.dtype
    ty, lanes = reg_type(dtype), lanes_for(dtype)
    vty = ir.VectorType(ty, lanes)
    zero = ir.Constant(ty, 0.0)  # NumPy starts from +0.0: a sum of -0.0s is +0.0
    inner = axes[-1]
    n = x.dims[inner]
    stride = x.strides[inner]
    contiguous = b.icmp_signed("==", stride, i64(dtype.itemsize))
    cascade = Cascade(b, ty)
    cascade.reset()
    vacc = b.entry_alloca(vty, name="lanes")
    sacc = b.entry_alloca(ty, name="rest")

    def load_lanes(outer: Sequence[ir.Value], start: ir.Value) -> ir.Value:
        ptr = element_ptr(b, x, index_of(outer, start))
        with b.if_else(contiguous, likely=True) as (then, otherwise):
            with then:
                packed = b.load(ptr, typ=vty, align=x.align)
                packed_block = b.block
            with otherwise:
                strided: ir.Value = ir.Constant(vty, None)
                for k in range(lanes):
                    at = b.gep(ptr, [b.mul(stride, i64(k))], source_etype=ir.IntType(8))
                    strided = b.insert_element(strided, b.load(at, typ=ty, align=x.align),
                                               ir.Constant(ir.IntType(32), k))
                strided_block = b.block
        merged = b.phi(vty)
        merged.add_incoming(packed, packed_block)
        merged.add_incoming(strided, strided_block)
        return merged

    def add_lanes(outer: Sequence[ir.Value], start: ir.Value) -> None:
        b.store(b.fadd(b.load(vacc, typ=vty), load_lanes(outer, start)), vacc)

    splat = ir.Constant(vty, [zero] * lanes)
    with loop_nest(b, [x.dims[a] for a in axes[:-1]], "ro") as outer:
        blocks = b.udiv(n, i64(BLOCK))
        with for_range(b, blocks, "blk") as blk:
            b.store(splat, vacc)
            base = b.mul(blk, i64(BLOCK))
            with for_range(b, i64(BLOCK // lanes), "ln") as j:
                add_lanes(outer, b.add(base, b.mul(j, i64(lanes))))
            cascade.push(lanes_sum(b, b.load(vacc, typ=vty), lanes))
        done = b.mul(blocks, i64(BLOCK))
        b.store(splat, vacc)
        with for_range(b, b.udiv(b.sub(n, done), i64(lanes)), "lt") as j:
            add_lanes(outer, b.add(done, b.mul(j, i64(lanes))))
        done = b.add(done, b.mul(b.udiv(b.sub(n, done), i64(lanes)), i64(lanes)))
        b.store(zero, sacc)
        with for_range(b, b.sub(n, done), "st") as j:
            item = b.load(element_ptr(b, x, index_of(outer, b.add(done, j))), typ=ty,
                          align=x.align)
            b.store(b.fadd(b.load(sacc, typ=ty), item), sacc)
        cascade.push(b.fadd(lanes_sum(b, b.load(vacc, typ=vty), lanes), b.load(sacc, typ=ty)))
    return cascade.total(zero)
