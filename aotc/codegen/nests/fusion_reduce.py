"""Reductions inside a fused loop nest: where the partial results live between iterations.

A fused reduction cannot call the standalone lowering (its items are computed by the
loop body, not loaded from an array), but it uses the same pieces, so both agree: the
combining rules and identities of :data:`.reductions.REDUCERS`, and for float sums the
block structure of :mod:`.pairwise` (lanes of a 64-byte register, blocks of ``BLOCK``
elements, block sums added pairwise through a :class:`~.pairwise.Cascade`).

With ``lanes > 1`` the innermost loop hands each item to lane ``k`` of a vector
accumulator (one lane per element of a chunk; SLP turns the chunk into vector
instructions), or to :data:`REST` for the few items after the last whole chunk. The
loop calls :meth:`FusedReduction.block_end` every ``BLOCK`` items and
:meth:`FusedReduction.row_end` after each run of the innermost loop. Other reductions
ignore the blocks: max/min/prod lanes run through to the end and are combined pairwise.
A complex sum is two float sums, of the real and the imaginary parts (NumPy's complex
pairwise sum adds the parts separately too); other complex reductions keep one struct
register per lane instead of a vector (LLVM has no vectors of structs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ...types import real_dtype
from ..core.context import Lowering
from ..core.dtypes import constant, reg_type
from ..elementwise.complexarith import pack
from ..elementwise.nests import Accumulator
from .pairwise import Cascade
from .reductions import REDUCERS, combiner

#: The lane of items after the last whole chunk of the innermost loop.
REST = -1
#: A max/min combined into memory, by dtype kind (:meth:`FusedReduction.combine_in_memory`).
_IN_MEMORY = {("reduce_max", "f"): "llvm.maximum", ("reduce_min", "f"): "llvm.minimum",
              ("reduce_max", "i"): "llvm.smax", ("reduce_min", "i"): "llvm.smin",
              ("reduce_max", "u"): "llvm.umax", ("reduce_min", "u"): "llvm.umin"}


def _lane(k: int) -> ir.Constant:
    return ir.Constant(ir.IntType(32), k)


class FusedReduction:
    """One reduction's running state, in registers (allocas that SROA promotes)."""

    def __init__(self, ctx: Lowering, reduction: str, dtype: np.dtype, lanes: int) -> None:
        _, identity = REDUCERS[reduction]
        self.b, self.dtype, self.lanes = ctx.b, dtype, lanes
        self.rule = combiner(reduction, dtype)
        self.reduction = reduction
        self.identity = constant(dtype, identity(dtype))
        #: A complex sum: the sums of the real and of the imaginary parts.
        self.parts: list[FusedReduction] = []
        self.pairwise = False
        if dtype.kind == "c" and reduction == "reduce_sum":
            self.parts = [FusedReduction(ctx, reduction, real_dtype(dtype), lanes)
                          for _ in range(2)]
            return
        ty = reg_type(dtype)
        # One vector, not ``lanes`` scalars: SLP bundles a vector's lanes reliably.
        # Complex values cannot be vector elements: one register per lane.
        self.lane_accs = ([Accumulator(ctx, ty, f"acc{k}") for k in range(lanes)]
                          if lanes > 1 and dtype.kind == "c" else [])
        self.acc = Accumulator(ctx, ir.VectorType(ty, lanes) if lanes > 1 and not self.lane_accs
                               else ty, "acc")
        self.pairwise = lanes > 1 and reduction == "reduce_sum" and dtype.kind == "f"
        #: A float max/min in lanes keeps its NaNs apart (see :meth:`_extreme`).
        self.extreme = (">=" if reduction == "reduce_max" else "<=") if (
            lanes > 1 and dtype.kind == "f" and reduction in ("reduce_max", "reduce_min")
            and not self.lane_accs) else None
        if self.extreme:
            self.nans = Accumulator(ctx, self.acc.ty, "nans")
        if self.pairwise:
            self.rest = Accumulator(ctx, ty, "rest")
            self.cascade = Cascade(ctx.b, ty)

    def combine(self, acc: ir.Value, item: ir.Value) -> ir.Value:
        return self.rule(self.b, self.dtype, acc, item)

    def combine_in_memory(self, acc: ir.Value, item: ir.Value) -> ir.Value:
        """:meth:`combine` for a running value stored back where ``acc`` was loaded (a
        row of results). A float max/min is LLVM's NaN-propagating ``maximum`` /
        ``minimum`` there, an integer one ``smax``/``umin``...: the rule's select of
        ``item`` or ``acc`` became a conditional store, vectorized on AVX2 as
        ``vmaskmovps``/``vpmaskmovq`` (microcoded, and slow on AMD Zen: a column minimum
        ran at a third of the SSE code's speed). Only which of 0.0 and -0.0 a float tie
        keeps can differ, as between NumPy's own loops."""
        intrinsic = _IN_MEMORY.get((self.reduction, self.dtype.kind))
        if intrinsic is None:
            return self.combine(acc, item)
        fn = self.b.module.declare_intrinsic(intrinsic, [acc.type],
                                             ir.FunctionType(acc.type, [acc.type] * 2))
        return self.b.call(fn, [acc, item])

    def _extreme(self, acc: ir.Value, item: ir.Value) -> ir.Value:
        """One lane's max (min) of the numbers alone, the later of equal ones as the
        NaN-propagating rule keeps: a compare and a select, where that rule's NaN test
        made the chain twice as long. NaNs go to :attr:`nans`, folded in at the end."""
        b = self.b
        return b.select(b.fcmp_ordered(self.extreme, item, acc), item, acc)

    def _reset_lanes(self) -> None:
        lanes = self.lanes
        for acc in self.lane_accs:
            acc.set(self.identity)
        if not self.lane_accs:
            self.acc.set(ir.Constant(self.acc.ty, [self.identity] * lanes) if lanes > 1
                         else self.identity)
        if self.extreme:
            self.nans.set(ir.Constant(self.acc.ty, [self.identity] * lanes))

    def start(self) -> None:
        """Before the reduced loops, at each kept index."""
        for part in self.parts:
            part.start()
        if self.parts:
            return
        self._reset_lanes()
        if self.pairwise:
            self.cascade.reset()

    def row_start(self) -> None:
        for part in self.parts:
            part.row_start()
        if self.pairwise:
            self.rest.set(self.identity)

    def update(self, lane: int, item: ir.Value) -> None:
        if self.parts:
            for k, part in enumerate(self.parts):
                part.update(lane, self.b.extract_value(item, k))
        elif self.lane_accs:
            acc = self.lane_accs[max(lane, 0)]
            acc.set(self.combine(acc.get(), item))
        elif self.lanes == 1:
            self.acc.set(self.combine(self.acc.get(), item))
        elif lane == REST and self.pairwise:
            self.rest.set(self.combine(self.rest.get(), item))
        elif self.extreme:
            b = self.b
            self._update_lane(max(lane, 0), lambda acc: self._extreme(acc, item))
            self._update_lane(max(lane, 0), lambda seen: b.select(
                b.fcmp_unordered("uno", item, item), item, seen), self.nans)
        else:
            self._update_lane(max(lane, 0), lambda acc: self.combine(acc, item))

    def _update_lane(self, lane: int, fn: Callable[[ir.Value], ir.Value],
                     acc: Accumulator | None = None) -> None:
        """Lane ``lane`` of vector ``acc`` (the running values by default) made
        ``fn`` of itself."""
        acc = self.acc if acc is None else acc
        vector = acc.get()
        item = self.b.extract_element(vector, _lane(lane))
        acc.set(self.b.insert_element(vector, fn(item), _lane(lane)))

    def block_end(self) -> None:
        for part in self.parts:
            part.block_end()
        if self.pairwise:
            self.cascade.push(self._tree())
            self._reset_lanes()

    def row_end(self) -> None:
        for part in self.parts:
            part.row_end()
        if self.pairwise:
            self.cascade.push(self.combine(self._tree(), self.rest.get()))
            self._reset_lanes()

    def result(self) -> ir.Value:
        """After the reduced loops: the reduction at this kept index."""
        if self.parts:
            return pack(self.b, *(part.result() for part in self.parts))
        if self.pairwise:
            return self.cascade.total(self.identity)
        return self._tree()

    def _tree(self) -> ir.Value:
        """The lanes combined pairwise, lane k with lane k + width/2 (as a register
        is reduced, and as :mod:`.pairwise` adds its lanes)."""
        if self.lane_accs:
            values = [acc.get() for acc in self.lane_accs]
        elif self.lanes == 1:
            return self.acc.get()
        else:
            vector = self.acc.get()
            values = [self.b.extract_element(vector, _lane(k)) for k in range(self.lanes)]
            if self.extreme:  # a NaN anywhere wins: the lanes' NaNs (else identities)
                nans = self.nans.get()
                values = [self.combine(v, self.b.extract_element(nans, _lane(k)))
                          for k, v in enumerate(values)]
        while len(values) > 1:
            half = len(values) // 2
            values = [self.combine(values[k], values[k + half]) for k in range(half)]
        return values[0]
