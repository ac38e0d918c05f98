"""Row fusion: when a fusion group may take in a reduction whose result it uses.

softmax reads each row three times when its row max, its sum of exponentials and its
quotient are three loops over the whole array, and writes ``exp(x - max)`` in between.
Taken into one group, the reductions become row statistics: the loop nest runs over
the rows, and in each row one pass of the row per statistic, then one that stores
(see :class:`aotc.codegen.nests.fusion_plan.FusionPlan`). A row of a few kilobytes stays in
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
from ..ops import ALL_PRIMITIVES  # (the package: once the elementwise ones are registered)
from ..ops.core import ELEMENTWISE
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


def takes_result_reduction(group: _Grouping, eqn: Eqn) -> bool:
    """May ``group``, elementwise work over reduction ``eqn``'s result, take in the
    reduction itself? Its work then runs once per kept index when the reduction is
    done (``np.sqrt((d ** 2).sum(-1))``, a mean's quotient), instead of a second loop
    over the result: over the same reductions of the last axis as row statistics."""
    axes = tuple(sorted(eqn.params["axes"]))
    ndim = eqn.inputs[0].type.ndim
    return (group.stats and group.axes == () and group.shape != ()
            and eqn.outs[0].type.shape == group.shape and ndim - 1 in axes
            and len(axes) < ndim)


#: Elementwise work a few instructions long. Taken in with a reduction, work over its
#: result runs once per kept index in scalar code (the loop over the kept index is not
#: the innermost one, so it is not vectorized); for these that costs less than the loop
#: over the result it saves, for calls into math functions not (a row of 5 and ``log``
#: of each row's max: 0.3 ms slower in 2 ms).
CHEAP = frozenset(ALL_PRIMITIVES[name] for name in (
    "neg", "abs", "sign", "square", "sqrt", "floor", "ceil", "trunc", "rint", "reciprocal",
    "logical_not", "invert", "conj", "add", "sub", "mul", "div", "max", "min", "fmax",
    "fmin", "copysign", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and",
    "logical_or", "logical_xor", "isnan", "isinf", "isfinite", "signbit", "eq", "ne", "lt",
    "le", "gt", "ge", "select", "convert", "real", "imag", "complex"))


def cheap_after_reductions(root: Eqn, shape: tuple[DimExpr, ...], members: list[Eqn]
                           ) -> bool:
    """Is the work at the kept index of a group that took in its root's reductions
    (``takes_result_reduction``) all :data:`CHEAP`? True for other groups."""
    kept = root.outs[0].type.shape
    if not root.prim.has(ELEMENTWISE) or kept == shape:
        return True
    return all(e.prim in CHEAP for e in members if e.prim.has(ELEMENTWISE)
               and e.outs[0].type.shape == kept)


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
