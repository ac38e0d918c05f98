"""Row fusion: when a fusion group may take in a reduction whose result it uses.

softmax reads each row three times when its row max, its sum of exponentials and its
quotient are three loops over the whole array, and writes ``exp(x - max)`` in between.
Taken into one group, the reductions become row statistics: the loop nest runs over
the rows, and in each row one pass of the row per statistic, then one that stores
(see :class:`aotc.codegen.fusion_plan.FusionPlan`). A row of a few kilobytes stays in
the first-level cache between passes, so the input is read from memory once and
nothing in between is written, as in XLA's row fusion.

This is worth it, and possible, only for reductions of the last axis (the contiguous
one) that keep some leading axes, over the group's whole iteration space, and read
back at the kept index they reduce to; :func:`read_in_phases` checks the last on the
built group, through the same index maps the lowering uses.
"""

from __future__ import annotations

from typing import Protocol

from ..errors import UnsupportedError
from ..ir import Atom, Eqn, Var
from ..ops.indexmaps import BODY_REDUCTIONS, read_indices
from ..shapes import DimExpr


class _Grouping(Protocol):
    shape: tuple[DimExpr, ...]
    axes: tuple[int, ...]
    stats: bool


def takes_stat(group: _Grouping, eqn: Eqn) -> bool:
    """May ``group`` compute reduction ``eqn`` row by row, before using its result?"""
    shape = group.shape
    axes = tuple(sorted(eqn.params["axes"]))
    return (group.stats and eqn.inputs[0].type.shape == shape and len(shape) - 1 in axes
            and len(axes) < len(shape) and group.axes in ((), axes))


def read_in_phases(fused: Eqn) -> bool:
    """Are the fusion's body reductions read back only at the row they reduce?"""
    body = fused.params["body"]
    producer = {v: e for e in body.eqns for v in e.outs}
    roots: list[Atom] = []
    for atom in body.outputs:
        eqn = producer.get(atom) if isinstance(atom, Var) else None
        reduced = eqn is not None and eqn.prim in BODY_REDUCTIONS
        roots.append(eqn.inputs[0] if reduced and eqn is not None else atom)
    try:
        read_indices(body, roots, len(fused.params["shape"]), tuple(fused.params["axes"]))
    except UnsupportedError:
        return False
    return True
