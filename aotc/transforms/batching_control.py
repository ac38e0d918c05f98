"""Batching rules of structured control flow: loops, ``while`` and ``cond``.

A loop carry batched after one iteration must be batched from the start (its type cannot
change between iterations), so the loop rules iterate to a fixed point of the carries'
flags. A ``while`` whose predicate is batched runs until every lane is done: its carries
all become batched and each iteration keeps, lane by lane, the old carry where that
lane's predicate is false. A ``cond`` whose index is batched evaluates every branch and
selects per lane (JAX's rule); effects in a branch only fire for the lanes that take it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir import Atom, Lit, Program, Var
from ..ops.control import cond_p, for_loop_p, scan_p, while_loop_p
from ..ops.core import ALL_PRIMITIVES
from ..ops.reduce import REDUCTIONS
from .batching import BatchCtx, batch_body, batch_eqns, batch_rules

Out = tuple[list[Atom], list[bool]]
I64 = np.dtype(np.int64)
_select = ALL_PRIMITIVES["select"]
_and = ALL_PRIMITIVES["logical_and"]


def _merge(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b, strict=True)]


def _carry_in(ctx: BatchCtx, atoms: Sequence[Atom], have: Sequence[bool],
              want: Sequence[bool]) -> list[Atom]:
    return [ctx.bcast(a) if w and not h else a for a, h, w in zip(atoms, have, want, strict=True)]


def _for_loop(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, body: Program,
              n_consts: int, step: int) -> Out:
    if batched[0] or batched[1]:
        raise ctx.em.error("vmap: a loop whose trip count depends on a batched value",
                           hint="write it as a while loop (lax.while_loop), whose batched "
                                "form runs until every lane is done")
    consts, carry = args[2:2 + n_consts], args[2 + n_consts:]
    cflags, have = batched[2:2 + n_consts], batched[2 + n_consts:]
    flags = list(have)
    while True:
        prog, out = batch_body(body, [*cflags, False, *flags], ctx, force=flags)
        if _merge(flags, out) == flags:
            break
        flags = _merge(flags, out)
    outs = ctx.em.emit(for_loop_p, args[0], args[1], *consts,
                       *_carry_in(ctx, carry, have, flags), body=prog, n_consts=n_consts,
                       step=step)
    return list(outs), flags


def _while_loop(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, cond: Program,
                body: Program, n_cond_consts: int, n_body_consts: int) -> Out:
    nc, nb = n_cond_consts, n_body_consts
    cc, bc, carry = args[:nc], args[nc:nc + nb], args[nc + nb:]
    ccf, bcf, have = batched[:nc], batched[nc:nc + nb], batched[nc + nb:]
    flags = list(have)
    while True:
        cond_prog, (pred_batched,) = batch_body(cond, [*ccf, *flags], ctx)
        if pred_batched:
            flags = [True] * len(flags)
        body_prog, out = batch_body(body, [*bcf, *flags], ctx, force=flags)
        if _merge(flags, out) == flags:
            break
        flags = _merge(flags, out)
    carry = _carry_in(ctx, carry, have, flags)
    if not pred_batched:
        outs = ctx.em.emit(while_loop_p, *cc, *bc, *carry, cond=cond_prog, body=body_prog,
                           n_cond_consts=nc, n_body_consts=nb)
        return list(outs), flags
    # Every lane runs until none is left: the loop's predicate is "any lane running", and
    # the body re-evaluates each lane's predicate to keep finished lanes as they were.
    cc_vars = _fresh(cc)
    carry_vars = _fresh(carry)
    inner = ctx.nested()
    (pred,), _ = batch_eqns(cond, [*cc_vars, *carry_vars], [*ccf, *flags], inner)
    running = inner.em.one(REDUCTIONS["reduce_or"], pred, axes=(0,))
    any_cond = Program((*cc_vars, *carry_vars), tuple(inner.em.eqns), (running,), name=cond.name)

    cc2, bc2, carry2 = _fresh(cc), _fresh(bc), _fresh(carry)
    inner = ctx.nested()
    (pred,), _ = batch_eqns(cond, [*cc2, *carry2], [*ccf, *flags], inner)
    inner.mask = pred if ctx.mask is None else inner.em.one(_and, pred, ctx.mask)
    new, new_flags = batch_eqns(body, [*bc2, *carry2], [*bcf, *flags], inner)
    kept = [inner.em.one(_select, inner.to_shape(pred, tuple(old.type.shape[1:])),
                         inner.batched(n, f), old)
            for n, f, old in zip(new, new_flags, carry2, strict=True)]
    lanes_body = Program((*cc2, *bc2, *carry2), tuple(inner.em.eqns), tuple(kept),
                         name=body.name)
    outs = ctx.em.emit(while_loop_p, *cc, *cc, *bc, *carry, cond=any_cond, body=lanes_body,
                       n_cond_consts=nc, n_body_consts=nc + nb)
    return list(outs), flags


def _fresh(atoms: Sequence[Atom]) -> list[Var]:
    """Inputs of a nested program standing for ``atoms`` (already in batched layout)."""
    return [Var(a.type) for a in atoms]


def _cond(ctx: BatchCtx, args: list[Atom], batched: list[bool], *,
          branches: tuple[Program, ...]) -> Out:
    index, ops, flags = args[0], args[1:], batched[1:]
    if not batched[0]:
        outs: list[bool] = [False] * len(branches[0].outputs)
        for branch in branches:
            outs = _merge(outs, batch_body(branch, flags, ctx)[1])
        progs = tuple(batch_body(b, flags, ctx, force=outs)[0] for b in branches)
        return list(ctx.em.emit(cond_p, index, *ops, branches=progs)), outs
    # A batched index: every branch runs on every lane, each lane keeps its own branch's
    # results. The index is clamped into range, as the cond primitive does.
    em, last = ctx.em, len(branches) - 1
    chosen: list[Atom] = []
    for k in range(len(branches)):
        test = "le" if k == 0 else "ge" if k == last else "eq"
        chosen.append(em.one(ALL_PRIMITIVES[test], index, Lit(k, I64)))
    results: list[list[Atom]] = []
    for k, branch in enumerate(branches):
        mask = chosen[k] if ctx.mask is None else em.one(_and, chosen[k], ctx.mask)
        inner = BatchCtx(em, ctx.size, mask)
        outs_k, flags_k = batch_eqns(branch, ops, flags, inner)
        results.append([ctx.batched(a, f) for a, f in zip(outs_k, flags_k, strict=True)])
    merged = results[last]
    for k in range(last - 1, -1, -1):
        merged = [em.one(_select, ctx.to_shape(chosen[k], tuple(a.type.shape[1:])), a, b)
                  for a, b in zip(results[k], merged, strict=True)]
    return merged, [True] * len(merged)


def _scan(ctx: BatchCtx, args: list[Atom], batched: list[bool], *, body: Program,
          n_consts: int, n_carry: int, length: Any, reverse: bool) -> Out:
    consts = args[:n_consts]
    init, xs = args[n_consts:n_consts + n_carry], args[n_consts + n_carry:]
    cflags = batched[:n_consts]
    have, xflags = batched[n_consts:n_consts + n_carry], batched[n_consts + n_carry:]
    # Scanned axis first, batch axis second: each slice is a batched value.
    xs = [ctx.moveaxis(x, 0, 1) if f else x for x, f in zip(xs, xflags, strict=True)]
    flags = list(have)
    while True:
        n_ys = len(body.outputs) - n_carry
        force = [*flags, *([False] * n_ys)]
        prog, out = batch_body(body, [*cflags, *flags, *xflags], ctx, force=force)
        if _merge(flags, out[:n_carry]) == flags:
            break
        flags = _merge(flags, out[:n_carry])
    outs = ctx.em.emit(scan_p, *consts, *_carry_in(ctx, init, have, flags), *xs, body=prog,
                       n_consts=n_consts, n_carry=n_carry, length=length, reverse=reverse)
    yflags = out[n_carry:]
    ys = [ctx.moveaxis(y, 1, 0) if f else y
          for y, f in zip(outs[n_carry:], yflags, strict=True)]
    return [*outs[:n_carry], *ys], [*flags, *yflags]


batch_rules.update({for_loop_p: _for_loop, while_loop_p: _while_loop, cond_p: _cond,
                    scan_p: _scan})
