"""Which equations are views (new index maps over their operand's bytes), and which
views keep C-contiguity. Shared by the buffer planner, the layout and the view rules."""

from __future__ import annotations

from ...ir import Eqn
from ...ops.core import ALL_PRIMITIVES, VIEW
from ...ops.shape import broadcast_in_dim_p, refine_shape_p, reshape_p, transpose_p
from ...shapes import DimExpr, Shape

#: Primitives whose result is a new index map over their first operand's bytes.
VIEW_PRIMITIVES = frozenset(p for p in ALL_PRIMITIVES.values() if p.has(VIEW))


def _nonunit(shape: Shape) -> tuple[DimExpr, ...]:
    return tuple(d for d in shape if not (d.is_const and d.value == 1))


def reshape_is_view(eqn: Eqn, contiguous: bool) -> bool:
    """A reshape is a view of contiguous data, or when it only adds/drops size-1 axes."""
    (x,), (out,) = eqn.inputs, eqn.outs
    return contiguous or _nonunit(x.type.shape) == _nonunit(out.type.shape)


def view_keeps_contiguity(eqn: Eqn) -> bool:
    """Views whose result is C-contiguous whenever their input is."""
    params = dict(eqn.params)
    if eqn.prim in (reshape_p, refine_shape_p):
        return True
    if eqn.prim is transpose_p:
        return tuple(params["permutation"]) == tuple(range(eqn.outs[0].type.ndim))
    if eqn.prim is broadcast_in_dim_p:
        dims = tuple(params["broadcast_dimensions"])
        out, x = eqn.outs[0].type.shape, eqn.inputs[0].type.shape
        added = [d for k, d in enumerate(out) if k not in dims]
        return (list(dims) == sorted(dims) and all(d.is_const and d.value == 1 for d in added)
                and all(x[i] == out[a] for i, a in enumerate(dims)))
    return False
