"""Snapshots: copy a small view of an array before an update, not the whole array.

Writes are functional in the IR, and ``row = a[k].copy()`` is the value ``a[k]``: the
copy is gone by the time buffers are planned. A row swap then reads as::

    row = a[k]              # a view of a's bytes
    b = update(a, a[p], k)  # a[k] = a[p]
    c = update(b, row, p)   # a[p] = row: reads a's old bytes after the write

The old row is still read after the first update, so the planner must keep ``a``'s
bytes intact and copies the whole matrix into a new buffer, twice per swap (Gaussian
elimination with pivoting ran 60% of its time in ``memmove``). Here the small view is
copied instead, right before the update that would overwrite it::

    row = a[k]
    saved = convert(row)    # a fresh buffer of one row
    b = update(a, a[p], k)  # now in place: nothing reads a's old bytes afterwards
    c = update(b, saved, p)

Only when every later reader of the base's bytes is such a view, defined before the
update, of fewer non-unit axes than the base (so smaller by at least one axis). Runs
last, after fusion: a snapshot must stay an equation of its own.
"""

from __future__ import annotations

from ..ir import Eqn, Params, Program, Var
from ..ops.core import VIEW
from ..ops.elementwise import convert_p
from ..ops.shape import update_slice_p
from ..shapes import DimExpr
from .rewrite import Renamer, map_nested


def snapshots(program: Program) -> Program:
    """Snapshot the small views read after each update of their base (see above)."""
    eqns = [map_nested(e, snapshots) for e in program.eqns]
    root: dict[Var, Var] = {}
    made: dict[Var, int] = {}
    for p, eqn in enumerate(eqns):
        made.update((v, p) for v in eqn.outs)
        if eqn.prim.has(VIEW) and isinstance(eqn.inputs[0], Var):
            root[eqn.outs[0]] = root.get(eqn.inputs[0], eqn.inputs[0])
    saved: dict[int, list[Var]] = {}
    for p, eqn in enumerate(eqns):
        base = eqn.inputs[0] if eqn.prim is update_slice_p else None
        if isinstance(base, Var) and base.type.ndim:
            views = _late_views(program, eqns, base, p, root, made)
            if views:
                saved[p] = views
    if not saved:
        return program.replace(eqns=tuple(eqns))
    rename = Renamer()
    out: list[Eqn] = []
    for p, eqn in enumerate(eqns):
        for view in saved.get(p, ()):
            copy = Var(view.type)
            out.append(Eqn(convert_p, (view,), Params.of({"dtype": view.type.dtype}), (copy,),
                           eqn.loc))
            rename.env[view] = copy
        out.append(rename.eqn(eqn))
    return rename.finish(program, out)


def _late_views(program: Program, eqns: list[Eqn], base: Var, p: int, root: dict[Var, Var],
                made: dict[Var, int]) -> list[Var]:
    """The views of ``base`` read after equation ``p``, if all are small and made
    before it; else none (then copying them would not spare the copy of ``base``)."""
    late: dict[Var, None] = {}
    derived: set[Var] = set()  # views, made after p, of a view being snapshot
    readers = [(q, a) for q in range(p + 1, len(eqns)) for a in eqns[q].inputs]
    readers += [(len(eqns), a) for a in program.outputs]
    readers += [(len(eqns), a) for _, a in program.writebacks]
    for q, atom in readers:
        if not isinstance(atom, Var) or (atom is not base and root.get(atom) is not base):
            continue
        if atom not in derived:
            if atom is base or made.get(atom, -1) >= p \
                    or not _smaller(atom.type.shape, base.type.shape):
                return []
            late[atom] = None
        if q < len(eqns) and eqns[q].prim.has(VIEW):
            derived.update(eqns[q].outs)
    return list(late)


def _smaller(view: tuple[DimExpr, ...], base: tuple[DimExpr, ...]) -> bool:
    def nonunit(shape: tuple[DimExpr, ...]) -> int:
        return sum(1 for d in shape if not (d.is_const and d.value == 1))
    return nonunit(view) < nonunit(base)


__all__ = ["snapshots"]
