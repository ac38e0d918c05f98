"""Slice writes that fill a fresh array piece by piece become one ``concatenate``.

``out = np.empty((n, n, 3)); out[..., 0] = a; out[..., 1] = b; out[..., 2] = 1.0``
traces to three ``update_slice`` equations on a base nothing reads. Lowered one by one,
each is a strided pass over the whole output (every cache line of it, for a thin last
axis): three passes, as NumPy makes them. When the blocks tile the base along one axis
(whole along every other axis, constant and disjoint along that one, covering it) and
the base is a fresh array (a broadcast scalar: ``np.empty``, ``np.zeros``, ``np.full``),
the chain *is* the concatenation of its operands along that axis, in order. Only
operands that are views of data (an argument, a scalar broadcast, slices and reshapes
of them) qualify: a computed operand is already written straight into its block
(destination passing, :mod:`aotc.codegen.memory.inplace`), with no temporary. Codegen
writes a concatenation along a thin last axis in one pass
(:func:`aotc.codegen.nests.indexing.lower_concatenate`), and along any other axis block by
block, as the updates did.
"""

from __future__ import annotations

from collections import Counter

from ..ir import Atom, Eqn, Params, Program, Var
from ..ops.core import VIEW
from ..ops.shape import broadcast_in_dim_p, concatenate_p, update_slice_p
from ..shapes import axis_span
from .rewrite import map_nested


def interleave(program: Program) -> Program:
    uses = Counter(a for e in program.eqns for a in e.inputs if isinstance(a, Var))
    uses.update(a for a in program.outputs if isinstance(a, Var))
    uses.update(a for _, a in program.writebacks if isinstance(a, Var))
    made = {v: e for e in program.eqns for v in e.outs}
    users: dict[Var, Eqn] = {}
    for e in program.eqns:
        if e.prim is update_slice_p and isinstance(e.inputs[0], Var):
            users.setdefault(e.inputs[0], e)
    replaced: dict[int, Eqn | None] = {}  # id(update) -> the concatenate, or None: dropped
    for eqn in program.eqns:
        base = eqn.inputs[0] if eqn.prim is update_slice_p else None
        if not isinstance(base, Var) or not _fresh(made.get(base)) or uses[base] != 1:
            continue
        chain = [eqn]
        while uses[chain[-1].outs[0]] == 1 and chain[-1].outs[0] in users:
            chain.append(users[chain[-1].outs[0]])
        pieces = _tiles(base, chain)
        if pieces is None or not all(_viewed(a, made) for a in pieces[1]):
            continue
        axis, operands = pieces
        last = chain[-1]
        for update in chain[:-1]:
            replaced[id(update)] = None
        replaced[id(last)] = Eqn(concatenate_p, tuple(operands), Params.of({"axis": axis}),
                                 last.outs, last.loc)
    eqns = [replaced.get(id(e), e) for e in program.eqns]
    kept = [map_nested(e, interleave) for e in eqns if e is not None]
    return program.replace(eqns=tuple(kept))


def _viewed(atom: Atom, made: dict[Var, Eqn]) -> bool:
    """Whether ``atom`` is data already there, seen through views: nothing to compute."""
    while isinstance(atom, Var) and atom in made:
        eqn = made[atom]
        if not eqn.prim.has(VIEW):
            return False
        atom = eqn.inputs[0]
    return True


def _fresh(eqn: Eqn | None) -> bool:
    """A new array whose own values nobody needs to see: a broadcast scalar."""
    return eqn is not None and eqn.prim is broadcast_in_dim_p and not eqn.inputs[0].type.ndim


def _tiles(base: Var, chain: list[Eqn]) -> tuple[int, list[Atom]] | None:
    """The axis and the operands in order, if the chain's blocks tile ``base``."""
    shape = base.type.shape
    if any(set(u.params["step"]) != {1} or u.inputs[1].type.dtype != base.type.dtype
           or len(u.inputs[1].type.shape) != len(shape) for u in chain):
        return None
    for axis, whole in enumerate(shape):
        spans: list[tuple[int, int, Atom]] = []
        for update in chain:
            span = axis_span(shape, tuple(update.params["start"]), update.inputs[1].type.shape,
                             axis)
            if span is None:
                break
            spans.append((*span, update.inputs[1]))
        else:
            spans.sort(key=lambda s: s[0])
            ends = [0] + [high for _, high, _ in spans]
            abutting = all(low == end < high
                           for (low, high, _), end in zip(spans, ends[:-1], strict=True))
            if abutting and whole.is_const and ends[-1] == whole.value:
                return axis, [operand for _, _, operand in spans]
    return None
