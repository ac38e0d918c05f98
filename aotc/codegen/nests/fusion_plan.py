"""What one ``fusion`` loop body computes, as a graph of values at symbolic loop indices.

The lowering in :mod:`.fusion` emits one loop nest; this module decides, without any
LLVM, what the body of that nest is. Every value is read at an affine index of the
loop (views compose into one :class:`Affine` per component, see
:mod:`aotc.ops.indexmaps`), so views cost nothing at run time.

A :class:`Node` is one body value at one such index: a load of a body input, a literal,
an elementwise equation applied to nodes, an ``iota`` (the index itself), or a row
statistic (a body reduction whose result later values use). Nodes are shared, so a value
used twice (``x[:-1]`` in rosen) is computed once per iteration. Each node records the
loop depth it varies with, so the lowering can compute it in the outermost loop where
its index is known: a row mean in layernorm is loaded once per row, not once per
element. For example, the body of ``np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + ...)``
over ``(n - 1,)`` reads ``x`` at two nodes, ``x[1 + 1*i0]`` and ``x[0 + 1*i0]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import UnsupportedError
from ...ir import Atom, Eqn, Lit, Program, Var
from ...ops.indexmaps import (
    BODY_REDUCTIONS,
    CONSTANT,
    INDEX_MAPS,
    ZERO,
    Affine,
    Index,
    iota_component,
    is_unit,
    read_indices,
    reduction_input_index,
    root_index,
)
from ...ops.shape import iota_p
from ...shapes import DimExpr

__all__ = ["CONSTANT", "ZERO", "Affine", "FusionPlan", "Index", "Node", "Output",
           "plan_fusion", "reads_only_at_own_index"]


# -- the graph ----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Node:
    """A body value at one index. ``source`` is a body input (a load, or the Scalar
    itself for rank 0), a :class:`~aotc.ir.Lit`, the elementwise equation applied to
    ``args``, or a body reduction of ``args[0]`` (a row statistic: ``index`` has the
    kept axes only). ``depth`` is the innermost loop it varies with (-1: none);
    ``level`` how many body reductions it waits for, so the phase it is known in."""

    source: Var | Lit | Eqn
    index: Index
    depth: int
    args: tuple[Node, ...] = ()
    level: int = 0

    @property
    def is_stat(self) -> bool:
        return isinstance(self.source, Eqn) and self.source.prim in BODY_REDUCTIONS

    @property
    def dtype(self) -> np.dtype:
        source = self.source
        return source.outs[0].type.dtype if isinstance(source, Eqn) else (
            source.type.dtype if isinstance(source, Var) else source.dtype)


@dataclass(frozen=True)
class Output:
    """A body output: ``node`` stored at every index, or reduced with ``reduction``, or
    (``kept``) a value of the body reductions' results stored once per kept index when
    they are known (``sqrt`` of a sum over the last axis, a mean's quotient)."""

    node: Node
    reduction: str | None
    dtype: np.dtype
    kept: bool = False


@dataclass
class FusionPlan:
    """The loop order and the body's node graph.

    Reductions normally run the kept axes outside and the reduced ones inside,
    accumulating in registers. When the last axis is kept (``x.sum(axis=0)``), reading
    along it is what is contiguous, so the plan keeps it innermost instead (``rows``):
    each reduction accumulates a whole row of results in its output, element by element,
    as NumPy does. ``start`` is how many loops enclose one reduction state: it is reset
    inside the first ``start`` loops, before the others, and finished after them.

    Row fusion: a body reduction that later values use (softmax's row max) splits the
    reduced loops into ``phases``, run one after the other at each kept index: phase
    ``p`` computes the values of level ``p`` its reductions and stores need, so a row
    is read from memory once and from cache after. Loop-shaped outputs are stored in
    the last phase, after every read of the row (an output may share an input's buffer).
    A value the last phase needs that is dear to recompute (softmax's ``exp``) is
    ``carried`` instead: the phase before stores it into an output's row, and the last
    reloads it from there, from cache (see :func:`_carry`).
    """

    order: tuple[int, ...]
    kept: tuple[int, ...]  # in the order of the output's axes
    rows: bool
    nodes: list[Node] = field(default_factory=list)  # operands before their users
    outputs: list[Output] = field(default_factory=list)
    phases: int = 1
    #: Nodes the last phase reloads from output ``k`` instead of computing them.
    carried: dict[Node, int] = field(default_factory=dict)

    @property
    def start(self) -> int:
        return len(self.kept) - 1 if self.rows else len(self.kept)

    def at_depth(self, depth: int) -> list[Node]:
        return [n for n in self.nodes if n.depth == depth]

    def stats(self) -> list[Node]:
        """The body reductions whose results later phases use."""
        return [n for n in self.nodes if n.is_stat]

    def phase_of(self, out: Output) -> int:
        return out.node.level if out.reduction is not None else self.phases - 1

    def at_kept_index(self, out: Output) -> bool:
        """Is ``out`` stored at the kept index (a reduction's or a kept output)?"""
        return out.reduction is not None or out.kept

    def phase_nodes(self, phase: int) -> list[Node]:
        """The nodes phase ``phase`` computes inside the reduced loops (operands first):
        what its reductions and, in the last phase, the stores need."""
        roots = [s.args[0] for s in self.stats() if s.args[0].level == phase]
        roots += [o.node for o in self.outputs if self.phase_of(o) == phase]
        leaves = self.carried if phase == self.phases - 1 else {}
        needed: set[int] = set()
        stack = [r for r in roots if r.depth >= self.start]
        while stack:
            n = stack.pop()
            if id(n) not in needed:
                needed.add(id(n))
                if n not in leaves:
                    stack.extend(a for a in n.args if a.depth >= self.start)
        return [n for n in self.nodes if id(n) in needed]


def plan_fusion(body: Program, shape: tuple[DimExpr, ...], axes: tuple[int, ...]
                ) -> FusionPlan:
    """The nodes ``body``'s outputs need, each once, in an order that can be emitted."""
    reduced = tuple(sorted(axes))
    kept = tuple(a for a in range(len(shape)) if a not in reduced)
    rows = bool(reduced) and bool(kept) and kept[-1] == len(shape) - 1 \
        and not is_unit(shape[-1])
    order = kept[:-1] + reduced + kept[-1:] if rows else kept + reduced
    plan = FusionPlan(order, kept, rows)
    depth_of = {axis: d for d, axis in enumerate(order)}
    producer = {v: e for e in body.eqns for v in e.outs}

    roots: list[tuple[Atom, str | None]] = []
    for atom in body.outputs:
        eqn = producer.get(atom) if isinstance(atom, Var) else None
        if eqn is not None and eqn.prim in BODY_REDUCTIONS and eqn.params["axes"]:
            if sorted(eqn.params["axes"]) != list(reduced) or len(eqn.inputs[0].type.shape) \
                    != len(shape):
                raise UnsupportedError("fusion: a reduction over other axes than the loop's")
            roots.append((eqn.inputs[0], eqn.prim.name))
        elif eqn is not None and eqn.prim in BODY_REDUCTIONS:
            roots.append((eqn.inputs[0], None))  # over no axes: the value itself
        elif atom.type.ndim == len(shape) or (reduced and not rows and atom.type.ndim \
                == len(kept)):
            roots.append((atom, None))
        else:
            raise UnsupportedError(f"fusion: output {atom.type} is not computed by the loop")

    # Backwards: the indices each variable is needed at (views map them to their input).
    wanted = read_indices(body, [a for a, _ in roots], len(shape), reduced)

    # Forwards: one node per (variable, index), operands first.
    nodes: dict[tuple[Atom, Index], Node] = {}

    def node(atom: Atom, index: Index) -> Node:
        if isinstance(atom, Lit) and (atom, ()) not in nodes:
            add(atom, (), Node(atom, (), -1))
        return nodes[(atom, index if atom.type.ndim else ())]

    def add(atom: Atom, index: Index, made: Node) -> None:
        nodes[(atom, index)] = made
        plan.nodes.append(made)

    def depth(index: Index) -> int:
        return max((depth_of[c.axis] for c in index if c.axis is not None), default=-1)

    for var in body.inputs:
        for index in wanted.get(var, {}):
            add(var, index, Node(var, index, depth(index)))
    for eqn in body.eqns:
        for index in wanted.get(eqn.outs[0], {}) if eqn.outs else ():
            if eqn.prim in INDEX_MAPS:  # the same node as the input's, read elsewhere
                nodes[(eqn.outs[0], index)] = node(eqn.inputs[0], INDEX_MAPS[eqn.prim](eqn, index))
                continue
            if eqn.prim in BODY_REDUCTIONS:  # a statistic: known once its phase is over
                if rows:
                    raise UnsupportedError("fusion: a row statistic along a kept last axis")
                arg = node(eqn.inputs[0], reduction_input_index(index, len(shape), reduced))
                add(eqn.outs[0], index, Node(eqn, index, depth(index), (arg,), arg.level + 1))
                continue
            if eqn.prim is iota_p:  # the index itself: varies with one loop at most
                add(eqn.outs[0], index, Node(eqn, index, depth((iota_component(eqn, index),))))
                continue
            args = tuple(node(a, index) for a in eqn.inputs)
            add(eqn.outs[0], index, Node(eqn, index, max(a.depth for a in args), args,
                                         max(a.level for a in args)))
    plan.outputs = [Output(node(atom, root_index(atom, len(shape), reduced)), reduction,
                           atom.type.dtype, atom.type.ndim < len(shape))
                    for atom, reduction in roots]
    plan.phases = 1 + max((o.node.level for o in plan.outputs), default=0)
    if plan.phases > 1:
        plan.carried = _carry(plan)
    return plan


def _carry(plan: FusionPlan) -> dict[Node, int]:
    """For each loop-shaped output, at most one value of the phase before the last to
    carry into its row: the latest one of the output's dtype that costs two operations
    or more to recompute. Only when, so, the last phase loads no input at all: an output
    may share the buffer of an input read at its own index, which the carried value
    would have overwritten."""
    last, inner = plan.phases - 1, len(plan.order) - 1
    before = {id(n) for n in plan.phase_nodes(last - 1)}
    carried: dict[Node, int] = {}
    for k, out in enumerate(plan.outputs):
        if plan.at_kept_index(out):
            continue
        for node in reversed(plan.phase_nodes(last)):
            if id(node) in before and node.depth == inner and node.dtype == out.dtype \
                    and node is not out.node and _cost(node, plan.start) >= 2:
                carried[node] = k
                break
    plan.carried = carried
    if any(isinstance(n.source, Var) and n not in carried for n in plan.phase_nodes(last)):
        return {}
    return carried


def _cost(node: Node, start: int) -> int:
    """Operations inside the reduced loops that computing ``node`` takes."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) not in seen and n.depth >= start and isinstance(n.source, Eqn):
            seen.add(id(n))
            stack.extend(n.args)
    return len(seen)


def reads_only_at_own_index(plan: FusionPlan, var: Var) -> bool:
    """Whether body input ``var`` is read only at the loop index itself, never through a
    slice, transpose or broadcast. A loop-shaped output may then share ``var``'s buffer:
    the lowering reads every element of a chunk before it stores any, a value it
    computes in an outer loop is read there, before the inner loop stores anything, and
    stores wait for the last phase of a row."""
    identity = tuple(Affine(a) for a in range(len(plan.order)))
    return all(n.index == identity for n in plan.nodes if n.source is var)
