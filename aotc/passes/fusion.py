"""Fusion: group elementwise and view equations, and the reductions consuming them,
into ``fusion`` equations that each become one loop nest (an ``iota`` they read is
computed in the loop, not materialized).

Before::                                    After::

    b:f64[n] = mul y z                          d:f64[] = fusion[shape=(n,) axes=(0,)] x y z
    c:f64[n] = add x b                            { lambda e f g . h = mul f g
    d:f64[] = reduce_sum[axes=(0,)] c                                i = add e h
                                                                     j = reduce_sum i
                                                                  in (j) }

so ``np.sum(x + y * z)`` reads each input once and writes nothing. Groups grow from a
root (an elementwise equation or a reduction) backwards through producers whose every
use is inside the group. View equations (slices, transposes, broadcasts) are index
maps, so they are absorbed even when shared: the copy left outside serves the other
users. Reductions over the same iteration space that do not depend on each other are
merged into one pass (a mean and a mean of squares read the data once). A reduction of
the last axis whose result the group reads back at its row is taken in as a row
statistic (:mod:`.fusion_rows`): softmax and layernorm are one loop over the rows.
Loop bodies are fused too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..ir import Eqn, Params, Program, Var
from ..ops.core import ELEMENTWISE, REDUCTION
from ..ops.elementwise import convert_p
from ..ops.fusion import fusion_p
from ..ops.reduce import REDUCTIONS
from ..ops.shape import (
    broadcast_in_dim_p,
    iota_p,
    refine_shape_p,
    reshape_p,
    slice_p,
    transpose_p,
)
from ..shapes import DimExpr
from .fusion_rows import (
    cheap_after_reductions,
    read_in_phases,
    takes_result_reduction,
    takes_stat,
)
from .rewrite import Renamer, map_nested

_INDEX_MAPS = {broadcast_in_dim_p, transpose_p, slice_p, refine_shape_p}
_REDUCTIONS = set(REDUCTIONS.values())
ONE = DimExpr.const(1)


def _is_view(eqn: Eqn) -> bool:
    if eqn.prim in _INDEX_MAPS:
        return True
    if eqn.prim is reshape_p:  # only inserting or dropping unit axes is an index map
        before = [d for d in eqn.inputs[0].type.shape if d != ONE]
        after = [d for d in eqn.outs[0].type.shape if d != ONE]
        return before == after
    return False


def _is_free(eqn: Eqn, eqns: tuple[Eqn, ...], producer: dict[Var, int]) -> bool:
    """A view, or a value of the loop index alone (an ``iota``, converted or viewed):
    recomputed at the loop index for less than a load, so absorbed even when other
    equations use it too (the original then serves them)."""
    return _is_view(eqn) or _of_index(eqn, eqns, producer)


def _of_index(eqn: Eqn, eqns: tuple[Eqn, ...], producer: dict[Var, int]) -> bool:
    if eqn.prim is iota_p:
        return True
    if eqn.prim is not convert_p and not _is_view(eqn):
        return False
    p = producer.get(eqn.inputs[0]) if isinstance(eqn.inputs[0], Var) else None
    return p is not None and _of_index(eqns[p], eqns, producer)


def _is_elementwise(eqn: Eqn) -> bool:
    return eqn.prim.has(ELEMENTWISE) and len(eqn.outs) == 1


def _is_reduction(eqn: Eqn) -> bool:
    return eqn.prim in _REDUCTIONS and eqn.prim.has(REDUCTION)


@dataclass
class _Group:
    root: int
    shape: tuple[DimExpr, ...]
    axes: tuple[int, ...]
    members: set[int] = field(default_factory=set)
    #: May the group take in reductions whose results it uses (row fusion)?
    stats: bool = True

    def heavy(self, eqns: tuple[Eqn, ...]) -> int:
        return sum(1 for i in self.members if not _is_view(eqns[i]))


def _consumers(program: Program) -> dict[Var, list[int]]:
    uses: dict[Var, list[int]] = defaultdict(list)
    for i, eqn in enumerate(program.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var):
                uses[a].append(i)
    return uses


def _grow(group: _Group, eqns: tuple[Eqn, ...], producer: dict[Var, int],
          uses: dict[Var, list[int]], escaping: set[Var], taken: dict[int, _Group],
          duplicated: set[int]) -> None:
    """Absorb producers of the group's inputs while that keeps intermediates internal.

    Whether a value stays internal depends on consumers the group may absorb later (in
    harris, ``dx`` feeds two products reached one after the other), so a producer that
    does not qualify yet waits until nothing else can grow. Only then does the group
    settle for less, one producer at a time: a view with outside users is duplicated,
    an elementwise value used outside becomes an extra output at the loop index.
    """
    pending = [a for a in eqns[group.root].inputs if isinstance(a, Var)]
    waiting: list[Var] = []

    def absorb(var: Var, settle: bool) -> bool | None:
        """True: absorbed; False: never; None: not yet."""
        p = producer.get(var)
        if p is None or p in group.members or p in taken:
            return False
        eqn = eqns[p]
        outside = var in escaping or any(u not in group.members for u in uses[var])
        if _is_free(eqn, eqns, producer):
            if outside:
                if not settle:
                    return None
                duplicated.add(p)  # shared index map: the original stays for the others
            elif not _is_view(eqn):
                duplicated.add(p)  # an index value: other groups may compute it too
        elif _is_reduction(eqn) and takes_stat(group, eqn):
            if outside:
                return None if not settle else False
            group.axes = _row_axes(eqn)
        elif _is_reduction(eqn) and takes_result_reduction(group, eqn):
            if outside:
                return None if not settle else False
            group.shape, group.axes = eqn.inputs[0].type.shape, _row_axes(eqn)
        elif _is_elementwise(eqn):
            if outside or any(u in duplicated for u in uses[var]):
                if not settle:
                    return None
                # Used outside too: worth it only as an extra output at the group's own
                # loop index (multi-output fusion). Recomputing cheap values instead
                # (layernorm's x - mean) measured no faster here, so it is not done.
                if eqn.outs[0].type.shape != group.shape or any(u < group.root
                                                                for u in uses[var]):
                    return False
        else:
            return False
        group.members.add(p)
        pending.extend(a for a in eqn.inputs if isinstance(a, Var))
        return True

    while pending or waiting:
        while pending:
            var = pending.pop()
            if absorb(var, settle=False) is None:
                waiting.append(var)
        retry, waiting = waiting, []
        for var in retry:
            if absorb(var, settle=False) is None:
                waiting.append(var)
        if pending or not waiting or len(waiting) < len(retry):
            continue
        # Nothing grows as it is: settle one waiting producer (views first, they are free).
        waiting.sort(key=lambda v: not _is_free(eqns[producer[v]], eqns, producer))
        absorb(waiting.pop(0), settle=True)


def _groups(program: Program) -> tuple[list[_Group], set[int]]:
    eqns = program.eqns
    producer = {v: i for i, e in enumerate(eqns) for v in e.outs}
    uses = _consumers(program)
    escaping = {a for a in program.outputs if isinstance(a, Var)}
    escaping |= {a for _, a in program.writebacks if isinstance(a, Var)}
    taken: dict[int, _Group] = {}
    duplicated: set[int] = set()
    groups = []
    for i in reversed(range(len(eqns))):
        eqn = eqns[i]
        if i in taken:
            continue
        if _is_reduction(eqn):
            shape, axes = eqn.inputs[0].type.shape, tuple(eqn.params["axes"])
        elif _is_elementwise(eqn) and eqn.outs[0].type.shape != ():
            shape, axes = eqn.outs[0].type.shape, ()
        else:
            continue
        group = _Group(i, shape, axes, {i})
        first = set(duplicated)
        _grow(group, eqns, producer, uses, escaping, taken, duplicated)
        if any(_is_reduction(eqns[m]) for m in group.members - {i}) and not (
                read_in_phases(_build(group, program, uses, escaping, duplicated)[0])
                and cheap_after_reductions(eqn, group.shape,
                                           [eqns[m] for m in group.members])):
            duplicated.intersection_update(first)  # again, without row statistics
            group = _Group(i, shape, axes, {i}, stats=False)
            _grow(group, eqns, producer, uses, escaping, taken, duplicated)
        if group.heavy(eqns) < 2 and not _is_reduction(eqn):
            continue  # one operation: its own loop already
        for m in group.members:
            if m not in duplicated:
                taken[m] = group
        groups.append(group)
    # A lone reduction is fused too: the fused lowering vectorizes reductions (several
    # accumulators, pairwise float sums) where the standalone one is a scalar loop.
    kept = [g for g in _merge_siblings(groups, eqns, producer)
            if g.heavy(eqns) >= 2 or _is_reduction(eqns[g.root])]
    return kept, duplicated


def _row_axes(eqn: Eqn) -> tuple[int, ...]:
    return tuple(sorted(eqn.params["axes"]))


def _depends(later: _Group, earlier: _Group, eqns: tuple[Eqn, ...],
             producer: dict[Var, int]) -> bool:
    """Does ``later`` read (transitively) anything ``earlier`` computes?"""
    targets = earlier.members
    seen: set[int] = set()
    stack = [a for m in later.members for a in eqns[m].inputs if isinstance(a, Var)]
    while stack:
        p = producer.get(stack.pop())
        if p is None or p in seen:
            continue
        if p in targets:
            return True
        seen.add(p)
        stack.extend(a for a in eqns[p].inputs if isinstance(a, Var))
    return False


def _merge_siblings(groups: list[_Group], eqns: tuple[Eqn, ...],
                    producer: dict[Var, int]) -> list[_Group]:
    """One pass for independent reductions over the same iteration space."""
    merged: list[_Group] = []
    for group in sorted(groups, key=lambda g: g.root):
        partner = next((m for m in merged if m.axes and group.axes == m.axes
                        and m.shape == group.shape
                        and not _depends(group, m, eqns, producer)
                        and _inputs_ready(group, m.root, eqns, producer)), None)
        if partner is None:
            merged.append(group)
        else:
            partner.members |= group.members
    return merged


def _inputs_ready(group: _Group, position: int, eqns: tuple[Eqn, ...],
                  producer: dict[Var, int]) -> bool:
    """Are the group's outside inputs all computed before ``position``?"""
    for m in group.members:
        for a in eqns[m].inputs:
            if isinstance(a, Var) and producer.get(a, -1) not in group.members \
                    and producer.get(a, -1) >= position:
                return False
    return True


def _build(group: _Group, program: Program, uses: dict[Var, list[int]],
           escaping: set[Var], duplicated: set[int]) -> tuple[Eqn, list[Var]]:
    eqns = program.eqns
    members = sorted(group.members)
    inside = {v for m in members for v in eqns[m].outs}
    externals: list[Var] = []
    for m in members:
        for a in eqns[m].inputs:
            if isinstance(a, Var) and a not in inside and a not in externals:
                externals.append(a)
    outputs = [v for m in members for v in eqns[m].outs
               if v in escaping or any(u not in group.members for u in uses[v])
               or m == group.root]
    outputs = [v for v in outputs if not _is_view(eqns[_def(v, eqns, members)])
               and _def(v, eqns, members) not in duplicated]  # the original serves them
    params = {v: Var(v.type) for v in externals}
    rename = Renamer()
    rename.env.update(params)
    body_eqns = [rename.eqn(eqns[m]) for m in members]
    body = Program(tuple(params[v] for v in externals), tuple(body_eqns),
                   tuple(rename(v) for v in outputs), name="fusion")
    outs = [Var(v.type) for v in outputs]
    eqn = Eqn(fusion_p, tuple(externals),
              Params.of({"body": body, "shape": group.shape, "axes": group.axes}),
              tuple(outs), eqns[group.root].loc)
    return eqn, outputs


def _keep_producers(removed: set[int], program: Program, renamed: set[Var]) -> set[int]:
    """Equations left outside (shared views, recomputed values) still need what they
    read: keep those producers too, unless their value is now a fused output."""
    producer = {v: i for i, e in enumerate(program.eqns) for v in e.outs}
    removed = set(removed)
    changed = True
    while changed:
        changed = False
        for i, eqn in enumerate(program.eqns):
            if i in removed:
                continue
            for a in eqn.inputs:
                p = producer.get(a) if isinstance(a, Var) and a not in renamed else None
                if p in removed:
                    removed.discard(p)
                    changed = True
    return removed


def _def(v: Var, eqns: tuple[Eqn, ...], members: list[int]) -> int:
    return next(m for m in members if v in eqns[m].outs)


def fusion(program: Program) -> Program:
    program = program.replace(eqns=tuple(map_nested(e, fusion) for e in program.eqns))
    groups, duplicated = _groups(program)
    if not groups:
        return program
    uses = _consumers(program)
    escaping = {a for a in program.outputs if isinstance(a, Var)}
    escaping |= {a for _, a in program.writebacks if isinstance(a, Var)}
    at: dict[int, tuple[Eqn, list[Var]]] = {}
    members: set[int] = set()
    renamed: set[Var] = set()
    for group in groups:  # at its root: the last member, or the first root of merged ones
        at[group.root] = _build(group, program, uses, escaping, duplicated)
        renamed.update(at[group.root][1])
        members |= {m for m in group.members if m not in duplicated}
    members = _keep_producers(members, program, renamed)
    rename = Renamer()
    out: list[Eqn] = []
    for i, eqn in enumerate(program.eqns):
        if i in at:
            fused, replaced = at[i]
            fused = rename.eqn(fused)
            out.append(fused)
            rename.env.update(zip(replaced, fused.outs, strict=True))
        if i in members:
            continue
        out.append(rename.eqn(eqn))
    return rename.finish(program, out)
