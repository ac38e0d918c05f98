"""A fused loop nest split over threads: its outermost loop, in chunks.

Two shapes of nest split, both along the outermost loop (``plan.order[0]``):

- *Independent iterations*: the outer loop runs over a kept axis (elementwise work, row
  reductions such as softmax's). Each chunk is the same nest over a slab of rows,
  started at its first row (the nest's ``origin``), writing rows no other chunk writes:
  results are bit-identical to one thread.
- *A full reduction* (``sum(x + y*z)``): every axis is reduced. Each chunk reduces its
  slab into a partial result (its own slot of a fixed array), and the kernel combines
  the partials in chunk order afterwards. The chunks depend on the sizes only, so the
  result is the same for any number of threads (and whether the pool ran at all); it
  differs from an unsplit nest's by the order of additions only: each partial is a
  pairwise sum, so the error bound stays NumPy's.

Anything else (a row-wise reduction whose last axis is kept, several phases over the
whole array, a product with its epilogue) keeps its serial rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from llvmlite import ir

from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.fusion import fusion_p
from ...ops.linalg import dot_general_p
from ..core.context import Lowering
from ..core.dtypes import i64, reg_type
from ..core.loops import for_range
from ..core.values import Scalar, Value
from ..elementwise.nests import Accumulator
from ..nests.fusion import Nest
from ..nests.fusion_plan import FusionPlan, plan_fusion
from ..nests.reductions import REDUCERS, combiner
from .loops import MAX_CHUNKS, Outline, chunk_bounds, chunk_count


def _splittable(plan: FusionPlan) -> bool:
    """Whether chunks of the outermost loop are independent, or reduce into partials."""
    if not plan.order:
        return False
    if plan.start >= 1:
        return True
    return not plan.rows and plan.phases == 1 and not plan.stats() and all(
        o.reduction is None or o.reduction in REDUCERS for o in plan.outputs)


def parallel_fusion(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value] | None:
    """The fusion equation as chunks over threads, or None to lower it serially."""
    body, shape, axes = eqn.params["body"], eqn.params["shape"], eqn.params["axes"]
    if body.eqns and body.eqns[0].prim is dot_general_p:
        return None  # a product with its epilogue: the product splits (gemm)
    plan = plan_fusion(body, tuple(shape), tuple(axes))
    if not _splittable(plan):
        return None
    b = ctx.b
    dims = tuple(ctx.dims(d) for d in shape)
    axis = plan.order[0]
    work: ir.Value = i64(1)
    for d in dims:
        work = b.mul(work, d)
    chunks = chunk_count(b, work, dims[axis])
    homes = [ctx.home(v) if v.type.ndim else None for v in eqn.outs]
    arrays = {j: ir.ArrayType(reg_type(o.dtype), MAX_CHUNKS)
              for j, o in enumerate(plan.outputs) if o.reduction and homes[j] is None}
    partials = {j: (b.entry_alloca(array, f"partial{j}"), array) for j, array in arrays.items()}
    inputs = dict(zip(body.inputs, args, strict=True))
    outline = Outline(ctx, "fusion")
    with outline as (begin, end), for_range(b, b.sub(end, begin), "chunk") as t:
        k = b.add(begin, t)
        lo, hi = chunk_bounds(b, dims[axis], chunks, k)
        slab = [b.sub(hi, lo) if a == axis else d for a, d in enumerate(dims)]
        results = Nest(ctx, plan, inputs, eqn.outs, slab, {axis: lo}).run()
        for j, (slot, array) in partials.items():
            result = results[j]
            assert isinstance(result, Scalar)
            b.store(result.value, b.gep(slot, [i64(0), k], source_etype=array))
    outline.call(chunks, work)
    values: list[Value] = []
    for j, (out, home) in enumerate(zip(plan.outputs, homes, strict=True)):
        if home is not None:
            values.append(home)
            continue
        assert out.reduction is not None
        values.append(Scalar(_combine(ctx, partials[j], chunks, out.reduction, out.dtype),
                             out.dtype))
    return values


def _combine(ctx: Lowering, partials: tuple[ir.Value, ir.ArrayType], chunks: ir.Value,
             reduction: str, dtype: np.dtype) -> ir.Value:
    """The partial results combined in chunk order (the same for any thread count)."""
    b = ctx.b
    rule = combiner(reduction, dtype)
    slot, array = partials

    def partial(k: ir.Value) -> ir.Value:
        return b.load(b.gep(slot, [i64(0), k], source_etype=array), typ=array.element)

    acc = Accumulator(ctx, array.element, "combined")
    acc.set(partial(i64(0)))
    with for_range(b, b.sub(chunks, i64(1)), "combine") as k:
        acc.set(rule(b, dtype, acc.get(), partial(b.add(k, i64(1)))))
    return acc.get()


RULES: dict[Primitive, object] = {fusion_p: parallel_fusion}
