"""``np.delete`` and ``np.insert``: arrays with elements taken out or put in along an
axis (the flattened array for ``axis=None``), as NumPy's own code builds them.

- ``delete`` of one index joins the parts before and after it; of a slice, an index
  array or a boolean mask, it keeps the rest with ``compress`` (a size counted at run
  time). Out-of-range indices are NumPy's IndexError.
- ``insert`` at one position joins the part before it, the values (NumPy's
  ``array(values, ndmin=arr.ndim)`` with its first axis moved to ``axis``, broadcast to
  the array's other sizes) and the part after it; the position may be a runtime value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, bind_dim, current
from .creation import full_from_dims, iota
from .fancy import assign
from .functions_base import where
from .indexing import getitem, slice_bounds
from .joining import concatenate, moveaxis
from .selection import compress
from .shaping import normalize_axes, ravel
from .ufuncs import apply_ufunc, broadcast_into

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)


def _flat(arr: Any, axis: Any) -> tuple[Tracer, int]:
    x = as_tracer(arr)
    if axis is None:
        return ravel(x), 0
    return x, normalize_axes(axis, x.ndim)[0]


def _position(obj: Any, n: DimExpr, axis: int, end_ok: bool) -> DimExpr:
    """A scalar index along an axis of size ``n``, checked (IndexError as NumPy) and
    counted from the end when negative, as a size."""
    k = lax.convert(as_tracer(obj), I64)
    size = lax.dim_value(n)
    high = size if end_ok else size - 1
    bad: Any = np.logical_or(k > high, k < -size)
    lax.bind(raise_if_p, bad.atom, k.atom, size.atom, error="IndexError",
             message=f"index {{lhs}} is out of bounds for axis {axis} with size {{rhs}}")
    return bind_dim(where(k < 0, k + size, k), n)


def _part(x: Tracer, axis: int, start: DimExpr, stop: DimExpr | None) -> Tracer:
    key = [slice(None)] * x.ndim
    key[axis] = slice(lax.dim_value(start), None if stop is None else lax.dim_value(stop))
    return cast(Tracer, getitem(x, tuple(key)))


def _is_scalar_index(obj: Any) -> bool:
    if isinstance(obj, Tracer):
        return obj.ndim == 0 and obj.dtype.kind in "iu"
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_))


def delete(arr: Any, obj: Any, axis: Any = None) -> Tracer:
    ctx = current()
    x, ax = _flat(arr, axis)
    n = x.aval.shape[ax]
    if _is_scalar_index(obj):
        at = _position(obj, n, ax, end_ok=False)
        return concatenate([_part(x, ax, DimExpr.const(0), at), _part(x, ax, at + 1, None)],
                           axis=ax)
    keep = full_from_dims((n,), True, np.dtype(bool))
    if isinstance(obj, slice):
        start, step, length = slice_bounds(obj, n)
        gone = apply_ufunc(np.add, apply_ufunc(np.multiply, iota(I64, (length,), 0),
                                               lax.dim_value(step) if isinstance(step, DimExpr)
                                               else step), lax.dim_value(start))
    else:
        if isinstance(obj, (list, tuple)):  # an empty list deletes nothing (NumPy's intp)
            obj = np.asarray(obj, dtype=np.intp if len(obj) == 0 else None)
        index = as_tracer(obj)
        if index.dtype == np.bool_:
            if index.ndim != 1:
                raise ctx.error("boolean array argument obj to delete must be one "
                                "dimensional and match the axis length")
            ctx.check("==", index.aval.shape[0], n, "ValueError",
                      "boolean array argument obj to delete must be one dimensional and "
                      "match the axis length of {rhs}")
            return compress(apply_ufunc(np.logical_not, lax.refine_shape(index, (n,))), x,
                            axis=ax)
        if index.dtype.kind not in "iu":
            raise ctx.error("arrays used as indices must be of integer (or boolean) type")
        gone = ravel(index)
    assign(keep, (gone,), False)
    return compress(keep, x, axis=ax)


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Tracer:
    ctx = current()
    x, ax = _flat(arr, axis)
    if not _is_scalar_index(obj):
        raise ctx.error("np.insert at several positions is not supported yet",
                        hint="insert at one position at a time, from the last one")
    n = x.aval.shape[ax]
    at = _position(obj, n, ax, end_ok=True)
    v = lax.convert(as_tracer(values, None if isinstance(values, Tracer) else x.dtype),
                    x.dtype)
    v = lax.reshape(v, (ONE,) * (x.ndim - v.ndim) + v.aval.shape) if v.ndim < x.ndim else v
    v = moveaxis(v, 0, ax)
    shape = tuple(v.aval.shape[ax] if k == ax else d for k, d in enumerate(x.aval.shape))
    v = broadcast_into(v, shape, "could not broadcast input array of size {lhs} into size "
                                 "{rhs}")
    return concatenate([_part(x, ax, DimExpr.const(0), at), v, _part(x, ax, at, None)],
                       axis=ax)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {np.delete: delete, np.insert: insert}
