"""Batching rules of the data primitives: elementwise, reductions, views, gathers, dot.

Each rule receives the batched program's atoms with the batch axis at 0 where the flag
says so, and returns outputs in the same layout. Most rules only shift axis numbers by
one; ``dot_general`` turns the batch axis into a batch (or free) dimension of the
contraction, which is a batched matmul rather than a loop of matrix products.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Atom, Lit
from ..ops.core import ALL_PRIMITIVES, ELEMENTWISE, Primitive
from ..ops.elementwise import convert_p
from ..ops.external import BY_NAME, numpy_loop_p
from ..ops.index import c_contiguous_p, python_number_p, raise_if_p, take_p
from ..ops.linalg import dot_general_p
from ..ops.reduce import ARG_REDUCTIONS, CUMULATIVE, REDUCTIONS
from ..ops.shape import (
    broadcast_in_dim_p,
    concatenate_p,
    dim_value_p,
    iota_p,
    refine_shape_p,
    reshape_p,
    slice_p,
    transpose_p,
    update_slice_p,
)
from ..ops.sorting import argsort_p, searchsorted_p, sort_p
from ..shapes import DimExpr, Step
from .batching import BatchCtx, BatchRule, batch_rules
from .core import NoBatchingRule

I64 = np.dtype(np.int64)
BOOL = np.dtype(bool)
Out = tuple[list[Atom], list[bool]]


def _prim(name: str) -> Primitive:
    return ALL_PRIMITIVES[name]


def _elementwise(prim: Primitive) -> BatchRule:
    """Inputs are broadcast to one batched shape; unbatched scalars stay scalars (an
    elementwise primitive reads a rank-0 input as the same value at every index)."""
    def rule(ctx: BatchCtx, args: list[Atom], batched: list[bool], **params: Any) -> Out:
        shape: tuple[DimExpr, ...] = ()
        for a, b in zip(args, batched, strict=True):
            if (s := tuple(a.type.shape[1:] if b else a.type.shape)):
                shape = s
        ins = [ctx.to_shape(a, shape) if b else ctx.bcast(a) if a.type.shape else a
               for a, b in zip(args, batched, strict=True)]
        return list(ctx.em.emit(prim, *ins, **params)), [True]
    return rule


def _shift_axes(prim: Primitive) -> BatchRule:
    def rule(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
             axes: tuple[int, ...]) -> Out:
        return [ctx.em.one(prim, args[0], axes=tuple(a + 1 for a in axes))], [True]
    return rule


def _shift_axis(prim: Primitive) -> BatchRule:
    def rule(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, axis: int,
             **params: Any) -> Out:
        return [ctx.em.one(prim, args[0], axis=axis + 1, **params)], [True]
    return rule


def _broadcast_in_dim(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
                      shape: tuple[DimExpr, ...], broadcast_dimensions: tuple[int, ...]) -> Out:
    dims = (0, *(d + 1 for d in broadcast_dimensions))
    return [ctx.em.one(broadcast_in_dim_p, args[0], shape=(ctx.size, *shape),
                       broadcast_dimensions=dims)], [True]


def _reshape(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
             new_sizes: tuple[DimExpr, ...]) -> Out:
    # C order with the batch axis in front: each lane's elements stay together.
    return [ctx.em.one(reshape_p, args[0], new_sizes=(ctx.size, *new_sizes))], [True]


def _transpose(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
               permutation: tuple[int, ...]) -> Out:
    perm = (0, *(p + 1 for p in permutation))
    return [ctx.em.one(transpose_p, args[0], permutation=perm)], [True]


def _slice(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, start: tuple[Any, ...],
           step: tuple[Step, ...], shape: tuple[DimExpr, ...]) -> Out:
    return [ctx.em.one(slice_p, args[0], start=(DimExpr.const(0), *start), step=(1, *step),
                       shape=(ctx.size, *shape))], [True]


def _refine_shape(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
                  shape: tuple[DimExpr, ...]) -> Out:
    return [ctx.em.one(refine_shape_p, args[0], shape=(ctx.size, *shape))], [True]


def _concatenate(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, axis: int) -> Out:
    ins = [ctx.batched(a, b) for a, b in zip(args, batched, strict=True)]
    return [ctx.em.one(concatenate_p, *ins, axis=axis + 1)], [True]


def _update_slice(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
                  start: tuple[Any, ...], step: tuple[Step, ...]) -> Out:
    base, update = (ctx.batched(a, b) for a, b in zip(args, batched, strict=True))
    return [ctx.em.one(update_slice_p, base, update, start=(DimExpr.const(0), *start),
                       step=(1, *step))], [True]


def _dot_general(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
                 contracting: tuple[tuple[int, ...], ...],
                 batch: tuple[tuple[int, ...], ...]) -> Out:
    """Both batched: one more batch dimension. One batched: its batch axis is a free
    dimension of that side (rows of a bigger matmul), moved to the front afterwards."""
    (lc, rc), (lb, rb) = contracting, batch
    lhs, rhs = args
    bl, br = batched

    def up(axes: tuple[int, ...], flag: bool) -> tuple[int, ...]:
        return tuple(a + 1 for a in axes) if flag else axes

    lc2, rc2, lb2, rb2 = up(lc, bl), up(rc, br), up(lb, bl), up(rb, br)
    if bl and br:
        out = ctx.em.one(dot_general_p, lhs, rhs, contracting=(lc2, rc2),
                         batch=((0, *lb2), (0, *rb2)))
        return [out], [True]
    out = ctx.em.one(dot_general_p, lhs, rhs, contracting=(lc2, rc2), batch=(lb2, rb2))
    # The batch axis is the first free axis of its side.
    where = len(lb) if bl else len(lb) + (lhs.type.ndim - len(lc) - len(lb))
    return [ctx.moveaxis(out, where, 0)], [True]


def _take(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, axis: int) -> Out:
    x, idx = args
    bx, bi = batched
    em = ctx.em
    if not bi:
        return [em.one(take_p, x, idx, axis=axis + 1)], [True]
    if not bx:  # the gathered items land where the indices' batch axis is
        return [ctx.moveaxis(em.one(take_p, x, idx, axis=axis), axis, 0)], [True]
    # Both batched: lane b reads row b of x, so gather from x with the batch axis and
    # ``axis`` merged, at ``b * n + index``.
    n = x.type.shape[axis + 1]
    xt = ctx.moveaxis(x, axis + 1, 1)
    others = tuple(xt.type.shape[2:])
    flat_x = em.one(reshape_p, xt, new_sizes=(ctx.size * n, *others))
    i64 = idx if idx.type.dtype == I64 else em.one(convert_p, idx, dtype=I64)
    size = em.one(dim_value_p, expr=n)
    neg = em.one(_prim("lt"), i64, Lit(0, I64))
    i64 = em.one(_prim("select"), neg, em.one(_prim("add"), i64, size), i64)
    bad = em.one(_prim("logical_or"), em.one(_prim("lt"), i64, Lit(0, I64)),
                 em.one(_prim("ge"), i64, size))
    if ctx.mask is not None:
        bad = em.one(_prim("logical_and"), bad, ctx.to_shape(ctx.mask, bad.type.shape[1:]))
    em.emit(raise_if_p, bad, error="IndexError",
            message="index out of bounds in a gather under vmap")
    lane = em.one(iota_p, dtype=I64, shape=i64.type.shape, dimension=0)
    flat_i = em.one(_prim("add"), em.one(_prim("mul"), lane, size), i64)
    out = em.one(take_p, flat_x, flat_i, axis=0)  # (B, *idx, *x[:axis], *x[axis+1:])
    k = idx.type.ndim - 1
    perm = [0, *range(k + 1, k + 1 + axis), *range(1, k + 1),
            *range(k + 1 + axis, out.type.ndim)]
    return [em.one(transpose_p, out, permutation=tuple(perm))], [True]


def _searchsorted(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, side: str) -> Out:
    a, v = args
    if batched[0]:
        raise NoBatchingRule("vmap: searchsorted over a batch of sorted arrays has no "
                             "batching rule (only the searched values may be batched)",
                             loc=ctx.em.loc)
    return [ctx.em.one(searchsorted_p, a, v, side=side)], [True]


def _raise_if(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, error: str,
              message: str) -> Out:
    """Raise where any running lane would; the message's details come from the first
    such lane."""
    em = ctx.em
    cond = ctx.batched(args[0], batched[0])
    if ctx.mask is not None:
        cond = em.one(_prim("logical_and"), cond, ctx.to_shape(ctx.mask, cond.type.shape[1:]))
    details = args[1:]
    if not details:
        em.emit(raise_if_p, cond, error=error, message=message)
        return [], []
    hit = em.one(REDUCTIONS["reduce_or"], cond, axes=(0,))
    lane = em.one(ARG_REDUCTIONS["argmax"], em.one(convert_p, cond, dtype=I64), axis=0)
    picked = [em.one(take_p, d, lane, axis=0) if b else d
              for d, b in zip(details, batched[1:], strict=True)]
    em.emit(raise_if_p, hit, *picked, error=error, message=message)
    return [], []


def _python_number(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
                   argument: int) -> Out:
    """A lane of a batched argument is an array's item: a NumPy scalar."""
    return [Lit(False, BOOL)], [False]


def _c_contiguous(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
                  argument: int) -> Out:
    """The lanes along the first axis of a C-contiguous array are C-contiguous: the
    batched argument's own flag, for every lane."""
    return [ctx.em.one(c_contiguous_p, args[0], argument=argument)], [False]


def _numpy_loop(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, loop: str,
                shapes: tuple[tuple[DimExpr, ...], ...], flag: bool) -> Out:
    """The batch axis becomes the loop's first batch axis: every operand with batch
    axes (or batched) gets all of them; an unbatched scalar stays shared. A failure
    flag stays one flag: any lane's failure."""
    cores = BY_NAME[loop].operands
    lead: tuple[DimExpr, ...] = (ctx.size,)
    for a, b, core in zip(args, batched, cores, strict=False):
        if a.type.ndim - b > len(core):
            lead = (ctx.size, *a.type.shape[b:a.type.ndim - len(core)])
    ins = []
    for a, b, core in zip(args, batched, cores, strict=False):
        if (not b and a.type.ndim == len(core) == 0) \
                or (b and tuple(a.type.shape[:len(lead)]) == lead):
            ins.append(a)
            continue
        shape = (*lead, *a.type.shape[a.type.ndim - len(core):])
        kept = range(a.type.ndim - len(core) - b)  # the operand's own batch axes
        dims = ((0,) if b else ()) + tuple(len(lead) - len(kept) + k for k in kept) \
            + tuple(range(len(lead), len(shape)))
        ins.append(ctx.em.one(broadcast_in_dim_p, a, shape=shape, broadcast_dimensions=dims))
    shapes = tuple((*lead, *s[len(lead) - 1:]) for s in shapes)
    outs = ctx.em.emit(numpy_loop_p, *ins, loop=loop, shapes=shapes, flag=flag)
    return list(outs), [True] * len(shapes) + [False] * flag


for _p in ALL_PRIMITIVES.values():
    if _p.has(ELEMENTWISE):
        batch_rules[_p] = _elementwise(_p)
for _p in REDUCTIONS.values():
    batch_rules[_p] = _shift_axes(_p)
for _p in (*ARG_REDUCTIONS.values(), *CUMULATIVE.values(), sort_p, argsort_p):
    batch_rules[_p] = _shift_axis(_p)
batch_rules.update({
    broadcast_in_dim_p: _broadcast_in_dim, reshape_p: _reshape, transpose_p: _transpose,
    slice_p: _slice, refine_shape_p: _refine_shape, concatenate_p: _concatenate,
    update_slice_p: _update_slice, dot_general_p: _dot_general, take_p: _take,
    searchsorted_p: _searchsorted, raise_if_p: _raise_if, python_number_p: _python_number,
    c_contiguous_p: _c_contiguous,
    numpy_loop_p: _numpy_loop,
})
