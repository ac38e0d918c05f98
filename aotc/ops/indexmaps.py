"""Where a ``fusion`` body reads each of its values, as affine maps of the loop index.

Inside a fused loop nest every index component a value is read at has the form
``start + step * i_axis`` (or a constant), because the view equations fusion absorbs
only ever move, reverse, skip or repeat one loop index: a slice scales and shifts it, a
transpose permutes components, a broadcast or unit reshape drops or inserts constant
components. So views compose into one :class:`Affine` per component and cost nothing
at run time. Each view primitive's rule maps an index of its output to the index of
its input (:data:`INDEX_MAPS`).

``iota`` reads nothing: its value at an index is that index's component along its
``dimension`` (:func:`iota_component`), so a fused body computes it instead of loading
a materialized ``arange``.

A reduction inside a body (a row statistic that later values of the row use, as in
softmax) is read at an index of the kept axes only; its input is then read along the
reduced axes at that kept index. That is computable row by row only when the kept
index does not move with a reduced axis (``x / x.sum(axis=1)`` on a square ``x``
divides row ``i`` by the sum of row ``j``): :func:`read_indices` refuses it.

The fusion pass (which groups) and the lowering (which plans the loop nest) both use
this module, so it depends on nothing but the IR and the primitives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UnsupportedError
from ..ir import Atom, Eqn, Program, Var
from ..shapes import DimExpr, Step
from .core import ELEMENTWISE, Primitive
from .reduce import REDUCTIONS
from .shape import (
    broadcast_in_dim_p,
    iota_p,
    refine_shape_p,
    reshape_p,
    slice_p,
    transpose_p,
)

ZERO = DimExpr.const(0)


@dataclass(frozen=True)
class Affine:
    """One index component: ``start + step * i[axis]``, or just ``start`` if ``axis`` is
    None (a broadcast axis). ``axis`` is an axis of the iteration space."""

    axis: int | None
    start: DimExpr = ZERO
    step: Step = 1


Index = tuple[Affine, ...]
CONSTANT = Affine(None, ZERO, 0)
BODY_REDUCTIONS = frozenset(REDUCTIONS.values())


def is_unit(d: DimExpr) -> bool:
    return d.is_const and d.value == 1


# -- view equations as index maps: output index -> input index ------------------------

def _broadcast_in_dim(eqn: Eqn, index: Index) -> Index:
    shape = eqn.inputs[0].type.shape
    return tuple(CONSTANT if is_unit(d) else index[axis]
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
    if [d for d in before if not is_unit(d)] != [d for d in after if not is_unit(d)]:
        raise UnsupportedError("fusion: a reshape that is not an index map")
    kept = [c for c, d in zip(index, after, strict=True) if not is_unit(d)]
    return tuple(CONSTANT if is_unit(d) else kept.pop(0) for d in before)


IndexMap = Callable[[Eqn, Index], Index]
INDEX_MAPS: dict[Primitive, IndexMap] = {
    broadcast_in_dim_p: _broadcast_in_dim,
    transpose_p: _transpose,
    slice_p: _slice,
    reshape_p: _reshape,
    refine_shape_p: lambda eqn, index: index,
}


def reduction_input_index(index: Index, ndim: int, axes: tuple[int, ...]) -> Index:
    """The index a body reduction over ``axes`` reads its input at, for its result read
    at ``index`` (one component per kept axis). Raises :class:`UnsupportedError` when
    the result would be read at an index moving with a reduced axis."""
    if any(c.axis in axes for c in index):
        raise UnsupportedError("fusion: a row statistic read across the axes it reduces")
    kept = iter(index)
    return tuple(Affine(a) if a in axes else next(kept) for a in range(ndim))


def root_index(atom: Atom, ndim: int, axes: tuple[int, ...]) -> Index:
    """The index a fusion output is computed at: the loop index, or its kept axes for an
    output of the kept rank (see :func:`read_indices`)."""
    if axes and atom.type.ndim == ndim - len(axes):
        return tuple(Affine(a) for a in range(ndim) if a not in axes)
    return tuple(Affine(a) for a in range(ndim))


def iota_component(eqn: Eqn, index: Index) -> Affine:
    """The loop-index component an ``iota`` at ``index`` takes its value from."""
    dimension: int = eqn.params["dimension"]
    return index[dimension]


def read_indices(body: Program, roots: list[Atom], ndim: int, axes: tuple[int, ...]
                 ) -> dict[Var, dict[Index, None]]:
    """The indices each variable of ``body`` is needed at (insertion-ordered), for
    ``roots`` needed at the loop index itself, or at its kept axes for a root of their
    rank (a value computed from body reductions: ``sqrt(sum(d**2, -1))``). Reductions
    among ``roots`` are the callers' business (their input is a root); those inside the
    body reduce ``axes``."""
    wanted: dict[Var, dict[Index, None]] = {}

    def want(atom: Atom, index: Index) -> None:
        if isinstance(atom, Var):
            wanted.setdefault(atom, {})[index if atom.type.ndim else ()] = None

    for atom in roots:
        want(atom, root_index(atom, ndim, axes))
    for eqn in reversed(body.eqns):
        for index in wanted.get(eqn.outs[0], {}) if eqn.outs else ():
            if eqn.prim in INDEX_MAPS:
                want(eqn.inputs[0], INDEX_MAPS[eqn.prim](eqn, index))
            elif eqn.prim.has(ELEMENTWISE) and len(eqn.outs) == 1:
                for a in eqn.inputs:
                    want(a, index)
            elif eqn.prim is iota_p:
                pass  # reads nothing
            elif eqn.prim in BODY_REDUCTIONS and tuple(sorted(eqn.params["axes"])) == axes \
                    and eqn.inputs[0].type.ndim == ndim:
                want(eqn.inputs[0], reduction_input_index(index, ndim, axes))
            else:
                raise UnsupportedError(f"fusion: '{eqn.prim.name}' cannot be computed at "
                                       "a loop index")
    return wanted
