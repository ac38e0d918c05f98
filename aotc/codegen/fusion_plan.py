"""What one ``fusion`` loop body computes, as a graph of values at symbolic loop indices.

The lowering in :mod:`.fusion` emits one loop nest; this module decides, without any
LLVM, what the body of that nest is. Inside the nest, every index component a value is
read at has the form ``start + step * i_axis`` (or a constant), because the view
equations the fusion pass absorbs only ever move, reverse, skip or repeat one loop
index: a slice scales and shifts it, a transpose permutes components, a broadcast or
unit reshape drops or inserts constant components. So views compose into one
:class:`Affine` per component and cost nothing at run time.

A :class:`Node` is one body value at one such index: a load of a body input, a
literal, or an elementwise equation applied to nodes. Nodes are shared, so a value
used twice (``x[:-1]`` in rosen) is computed once per iteration. Each node records the
loop depth it varies with, so the lowering can compute it in the outermost loop where
its index is known: a row mean in layernorm is loaded once per row, not once per
element. For example, the body of ``np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + ...)``
over ``(n - 1,)`` reads ``x`` at two nodes, ``x[1 + 1*i0]`` and ``x[0 + 1*i0]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import UnsupportedError
from ..ir import Atom, Eqn, Lit, Program, Var
from ..ops.core import ELEMENTWISE, Primitive
from ..ops.reduce import REDUCTIONS
from ..ops.shape import broadcast_in_dim_p, refine_shape_p, reshape_p, slice_p, transpose_p
from ..shapes import DimExpr

ZERO = DimExpr.const(0)


@dataclass(frozen=True)
class Affine:
    """One index component: ``start + step * i[axis]``, or just ``start`` if ``axis`` is
    None (a broadcast axis). ``axis`` is an axis of the iteration space."""

    axis: int | None
    start: DimExpr = ZERO
    step: int = 1


Index = tuple[Affine, ...]
CONSTANT = Affine(None, ZERO, 0)


def _is_unit(d: DimExpr) -> bool:
    return d.is_const and d.value == 1


# -- view equations as index maps: output index -> input index ------------------------

def _broadcast_in_dim(eqn: Eqn, index: Index) -> Index:
    shape = eqn.inputs[0].type.shape
    return tuple(CONSTANT if _is_unit(d) else index[axis]
                 for d, axis in zip(shape, eqn.params["broadcast_dimensions"], strict=True))


def _transpose(eqn: Eqn, index: Index) -> Index:
    out: list[Affine] = [CONSTANT] * len(index)
    for k, p in enumerate(eqn.params["permutation"]):
        out[p] = index[k]
    return tuple(out)


def _slice(eqn: Eqn, index: Index) -> Index:
    return tuple(Affine(c.axis, start + step * c.start, step * c.step)
                 for c, start, step in zip(index, eqn.params["start"], eqn.params["step"],
                                           strict=True))


def _reshape(eqn: Eqn, index: Index) -> Index:
    """Only size-1 axes may be inserted or dropped (the fusion pass absorbs no others)."""
    before, after = eqn.inputs[0].type.shape, eqn.outs[0].type.shape
    if [d for d in before if not _is_unit(d)] != [d for d in after if not _is_unit(d)]:
        raise UnsupportedError("fusion: a reshape that is not an index map")
    kept = [c for c, d in zip(index, after, strict=True) if not _is_unit(d)]
    return tuple(CONSTANT if _is_unit(d) else kept.pop(0) for d in before)


IndexMap = Callable[[Eqn, Index], Index]
INDEX_MAPS: dict[Primitive, IndexMap] = {
    broadcast_in_dim_p: _broadcast_in_dim,
    transpose_p: _transpose,
    slice_p: _slice,
    reshape_p: _reshape,
    refine_shape_p: lambda eqn, index: index,
}
_REDUCTIONS = frozenset(REDUCTIONS.values())


# -- the graph ----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Node:
    """A body value at one index. ``source`` is a body input (a load, or the Scalar
    itself for rank 0), a :class:`~aotc.ir.Lit`, or the elementwise equation applied to
    ``args``. ``depth`` is the innermost loop it varies with (-1: none)."""

    source: Var | Lit | Eqn
    index: Index
    depth: int
    args: tuple[Node, ...] = ()


@dataclass(frozen=True)
class Output:
    """A body output: ``node`` stored at every index, or reduced with ``reduction``."""

    node: Node
    reduction: str | None
    dtype: np.dtype


@dataclass
class FusionPlan:
    """The loop order and the body's node graph.

    Reductions normally run the kept axes outside and the reduced ones inside,
    accumulating in registers. When the last axis is kept (``x.sum(axis=0)``), reading
    along it is what is contiguous, so the plan keeps it innermost instead (``rows``):
    each reduction accumulates a whole row of results in its output, element by element,
    as NumPy does. ``start`` is how many loops enclose one reduction state: it is reset
    inside the first ``start`` loops, before the others, and finished after them.
    """

    order: tuple[int, ...]
    kept: tuple[int, ...]  # in the order of the output's axes
    rows: bool
    nodes: list[Node] = field(default_factory=list)  # operands before their users
    outputs: list[Output] = field(default_factory=list)

    @property
    def start(self) -> int:
        return len(self.kept) - 1 if self.rows else len(self.kept)

    def at_depth(self, depth: int) -> list[Node]:
        return [n for n in self.nodes if n.depth == depth]


def plan_fusion(body: Program, shape: tuple[DimExpr, ...], axes: tuple[int, ...]
                ) -> FusionPlan:
    """The nodes ``body``'s outputs need, each once, in an order that can be emitted."""
    reduced = tuple(sorted(axes))
    kept = tuple(a for a in range(len(shape)) if a not in reduced)
    rows = bool(reduced) and bool(kept) and kept[-1] == len(shape) - 1 \
        and not _is_unit(shape[-1])
    order = kept[:-1] + reduced + kept[-1:] if rows else kept + reduced
    plan = FusionPlan(order, kept, rows)
    depth_of = {axis: d for d, axis in enumerate(order)}
    identity = tuple(Affine(a) for a in range(len(shape)))
    producer = {v: e for e in body.eqns for v in e.outs}

    roots: list[tuple[Atom, str | None]] = []
    for atom in body.outputs:
        eqn = producer.get(atom) if isinstance(atom, Var) else None
        if eqn is not None and eqn.prim in _REDUCTIONS and eqn.params["axes"]:
            if sorted(eqn.params["axes"]) != list(reduced) or len(eqn.inputs[0].type.shape) \
                    != len(shape):
                raise UnsupportedError("fusion: a reduction over other axes than the loop's")
            roots.append((eqn.inputs[0], eqn.prim.name))
        elif eqn is not None and eqn.prim in _REDUCTIONS:
            roots.append((eqn.inputs[0], None))  # over no axes: the value itself
        elif atom.type.ndim == len(shape):
            roots.append((atom, None))
        else:
            raise UnsupportedError(f"fusion: output {atom.type} is not computed by the loop")

    # Backwards: the indices each variable is needed at (views map them to their input).
    wanted: dict[Var, dict[Index, None]] = {}

    def want(atom: Atom, index: Index) -> None:
        if isinstance(atom, Var):
            wanted.setdefault(atom, {})[index if atom.type.ndim else ()] = None

    for atom, _ in roots:
        want(atom, identity)
    for eqn in reversed(body.eqns):
        for index in wanted.get(eqn.outs[0], {}) if eqn.outs else ():
            if eqn.prim in INDEX_MAPS:
                want(eqn.inputs[0], INDEX_MAPS[eqn.prim](eqn, index))
            elif eqn.prim.has(ELEMENTWISE) and len(eqn.outs) == 1:
                for a in eqn.inputs:
                    want(a, index)
            else:
                raise UnsupportedError(f"fusion: '{eqn.prim.name}' cannot be computed at "
                                       "a loop index")

    # Forwards: one node per (variable, index), operands first.
    nodes: dict[tuple[Atom, Index], Node] = {}

    def node(atom: Atom, index: Index) -> Node:
        if isinstance(atom, Lit):
            if (atom, ()) not in nodes:
                add(atom, (), Node(atom, (), -1))
        return nodes[(atom, index if atom.type.ndim else ())]

    def add(atom: Atom, index: Index, made: Node) -> None:
        nodes[(atom, index)] = made
        plan.nodes.append(made)

    for var in body.inputs:
        for index in wanted.get(var, {}):
            depth = max((depth_of[c.axis] for c in index if c.axis is not None), default=-1)
            add(var, index, Node(var, index, depth))
    for eqn in body.eqns:
        for index in wanted.get(eqn.outs[0], {}) if eqn.outs else ():
            if eqn.prim in INDEX_MAPS:  # the same node as the input's, read elsewhere
                nodes[(eqn.outs[0], index)] = node(eqn.inputs[0], INDEX_MAPS[eqn.prim](eqn, index))
                continue
            args = tuple(node(a, index) for a in eqn.inputs)
            add(eqn.outs[0], index, Node(eqn, index, max(a.depth for a in args), args))
    plan.outputs = [Output(node(atom, identity), reduction, atom.type.dtype)
                    for atom, reduction in roots]
    return plan


def reads_only_at_own_index(plan: FusionPlan, var: Var) -> bool:
    """Whether body input ``var`` is read only at the loop index itself, never through a
    slice, transpose or broadcast. A loop-shaped output may then share ``var``'s buffer:
    the lowering reads every element of a chunk before it stores any, and a value it
    computes in an outer loop is read there, before the inner loop stores anything."""
    identity = tuple(Affine(a) for a in range(len(plan.order)))
    return all(n.index == identity for n in plan.nodes if n.source is var)
