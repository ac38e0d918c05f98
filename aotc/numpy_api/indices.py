"""Index arithmetic: ``np.unravel_index``, ``np.ravel_multi_index``, ``np.triu_indices``,
``np.tril_indices``, ``np.diag_indices`` (and their ``_from`` forms).

Flat indices and coordinates are integer arithmetic on the shape's sizes, which may be
runtime sizes (``x.shape``) or integer arguments: ``unravel_index`` peels coordinates off
with ``%`` and ``//`` from the last axis (C order) or the first (F order), and
``ravel_multi_index`` sums coordinates times strides. Out-of-range indices are NumPy's
``ValueError``, raised by the kernel with NumPy's message (naming the first bad index,
for ``unravel_index``). The triangle indices are NumPy's own definition, the
``nonzero`` of a ``triu``/``tril`` mask, so their count is a size bound at run time.

These take no array argument (``np.unravel_index(5, x.shape)``), so they are also
creation-style stand-ins (``CREATION``) that a converted kernel calls by any name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import full_from_dims, iota
from .joining import concatenate
from .reductions import any_
from .selection import nonzero
from .shaping import ravel
from .statistics import argmax
from .triangular import tril, triu
from .ufuncs import apply_ufunc, broadcast_all

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _dims(shape: Any) -> list[DimExpr]:
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    return [lax.as_dim(d, "dimension") for d in items]


def _integers(values: Any) -> Tracer:
    x = as_tracer(values)
    if x.dtype.kind not in "iu":
        raise current().error("only int indices permitted")
    return lax.convert(x, I64)


def _order(order: Any) -> bool:
    """Whether ``order`` is C's (the last axis varies fastest)."""
    if order not in ("C", "F"):
        raise current().error("only 'C' or 'F' order is permitted")
    return bool(order == "C")


def raise_first(bad: Tracer, values: Tracer, limit: DimExpr, message: str,
                error: str = "ValueError") -> None:
    """Fail with ``error(message)`` naming (``{lhs}``) the first value where ``bad``
    holds, and the limit (``{rhs}``)."""
    if bad.ndim:
        flat_bad = concatenate([ravel(bad), full_from_dims((ONE,), False, np.dtype(bool))])
        flat_values = concatenate([ravel(values), full_from_dims((ONE,), 0, I64)])
        first = flat_values[argmax(flat_bad)]
        bad = any_(bad)
    else:
        first = values
    lax.bind(raise_if_p, bad.atom, as_tracer(first).atom, lax.dim_value(limit).atom,
             error=error, message=message)


def unravel_index(indices: Any, shape: Any, order: Any = "C") -> tuple[Tracer, ...]:
    c_order = _order(order)
    index = _integers(indices)
    dims = _dims(shape)
    total = size(tuple(dims))
    bad = _u(np.logical_or, _u(np.less, index, 0),
             _u(np.greater_equal, index, lax.dim_value(total)))
    raise_first(bad, index, total, "index {lhs} is out of bounds for array with size {rhs}")
    coords: list[Any] = [None] * len(dims)
    rest = index
    for k in (reversed(range(len(dims))) if c_order else range(len(dims))):
        extent = _u(np.maximum, lax.dim_value(dims[k]), 1)  # no division by an empty axis
        coords[k] = _u(np.remainder, rest, extent)
        rest = _u(np.floor_divide, rest, extent)
    return tuple(coords)


def _modes(mode: Any, count: int) -> list[str]:
    modes = list(mode) if isinstance(mode, (tuple, list)) else [mode] * count
    if len(modes) != count or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise current().error("clipmode must be one of 'raise', 'wrap' or 'clip' (one, or "
                              "one per dimension)")
    return modes


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise",
                      order: Any = "C") -> Tracer:
    c_order = _order(order)
    sizes = _dims(dims)
    if isinstance(multi_index, Tracer):
        first = multi_index.aval.shape[0] if multi_index.ndim else None
        if first is None or not first.is_const:
            raise current().error("np.ravel_multi_index: multi_index must be a sequence of "
                                  "build-time length")
        multi_index = [multi_index[k] for k in range(first.value)]
    if len(multi_index) != len(sizes):
        raise current().error(f"parameter multi_index must be a sequence of length "
                              f"{len(sizes)}")
    coords = broadcast_all([_integers(c) for c in multi_index])
    result: Any = full_from_dims(coords[0].aval.shape, 0, I64) if coords else as_tracer(
        np.int64(0))
    stride = DimExpr.const(1)
    modes = _modes(mode, len(sizes))
    for k in reversed(range(len(sizes))) if c_order else range(len(sizes)):
        c, extent, m = coords[k], lax.dim_value(sizes[k]), modes[k]
        if m == "raise":
            bad = _u(np.logical_or, _u(np.less, c, 0), _u(np.greater_equal, c, extent))
            lax.bind(raise_if_p, (any_(bad) if bad.ndim else bad).atom, error="ValueError",
                     message="invalid entry in coordinates array")
        elif m == "wrap":
            c = _u(np.remainder, c, _u(np.maximum, extent, 1))
        else:
            c = _u(np.minimum, _u(np.maximum, c, 0), _u(np.subtract, extent, 1))
        result = _u(np.add, result, _u(np.multiply, c, lax.dim_value(stride)))
        stride = stride * sizes[k]
    return cast(Tracer, result)


def _mask(n: Any, m: Any) -> Tracer:
    rows = lax.as_dim(n, "n")
    return full_from_dims((rows, rows if m is None else lax.as_dim(m, "m")), True,
                          np.dtype(bool))


def triu_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[Tracer, ...]:
    return nonzero(triu(_mask(n, m), k))


def tril_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[Tracer, ...]:
    return nonzero(tril(_mask(n, m), k))


def diag_indices(n: Any, ndim: int = 2) -> tuple[Tracer, ...]:
    index = iota(I64, (lax.as_dim(n, "n"),), 0)
    return (index,) * int(ndim)


def _matrix(arr: Any, name: str) -> Tracer:
    x = as_tracer(arr)
    if x.ndim != 2:
        raise current().error("input array must be 2-d", hint=f"np.{name} takes a matrix")
    return x


def triu_indices_from(arr: Any, k: Any = 0) -> tuple[Tracer, ...]:
    x = _matrix(arr, "triu_indices_from")
    return triu_indices(x.shape[0], k, x.shape[1])


def tril_indices_from(arr: Any, k: Any = 0) -> tuple[Tracer, ...]:
    x = _matrix(arr, "tril_indices_from")
    return tril_indices(x.shape[0], k, x.shape[1])


def diag_indices_from(arr: Any) -> tuple[Tracer, ...]:
    x = as_tracer(arr)
    if x.ndim < 2:
        raise current().error("input array must be at least 2-d")
    first = x.aval.shape[0]
    for d in x.aval.shape[1:]:
        if d != first:
            current().check("==", d, first, "ValueError",
                            "All dimensions of input must be of equal length")
    return diag_indices(x.shape[0], x.ndim)


#: Callables with no array argument: swapped in by converted kernels (and dispatched).
CREATION: dict[Callable[..., Any], Callable[..., Any]] = {
    np.unravel_index: unravel_index, np.ravel_multi_index: ravel_multi_index,
    np.triu_indices: triu_indices, np.tril_indices: tril_indices,
    np.diag_indices: diag_indices,
}
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.triu_indices_from: triu_indices_from, np.tril_indices_from: tril_indices_from,
    np.diag_indices_from: diag_indices_from,
}
