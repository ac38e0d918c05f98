"""Diagonals: ``np.diag``, ``np.diagonal`` and ``np.fill_diagonal``.

A diagonal is a gather from the flattened matrix at ``i * (m + 1) + start`` (NumPy's
diagonal is a strided view of the same elements), with NumPy's length
``max(0, min(n, m - offset))`` for a non-negative offset (``min(n + offset, m)`` for a
negative one): a size expression, so the matrix's sizes may be runtime ones. The result
is a copy: NumPy's is a read-only view, so no write could tell them apart. ``diag`` of a
vector is a ``where`` over the ``n x n`` mask ``j - i == k``, and ``fill_diagonal``
writes ``where(on_diagonal, val, a)`` back into ``a`` in place (with NumPy's ``wrap``
for tall matrices: every ``(m + 1)``-th element of the flattened array, and ``val``
repeated along the diagonal when it is an array).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..shapes import DimExpr, minimum, relu
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import full_from_dims, iota
from .functions_base import where
from .joining import concatenate, moveaxis, take
from .shaping import ravel
from .ufuncs import apply_ufunc
from .writes import write

I64 = np.dtype(np.int64)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _offset(value: Any, name: str) -> int:
    if isinstance(value, Tracer) or not isinstance(value, (int, np.integer)):
        raise current().error(f"np.{name}: the offset must be a build-time integer",
                              hint="the diagonal's length depends on it")
    return int(value)


def _zero(dtype: np.dtype) -> Any:
    return np.zeros((), dtype)[()]


def diagonal(a: Any, offset: Any = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
    x = as_tracer(a)
    if x.ndim < 2:
        raise current().error("diag requires an array of at least two dimensions")
    k = _offset(offset, "diagonal")
    first, second = (int(axis1) % x.ndim, int(axis2) % x.ndim)
    if first == second:
        raise current().error("axis1 and axis2 cannot be the same")
    x = moveaxis(x, (first, second), (-2, -1))
    n, m = x.aval.shape[-2:]
    length = relu(minimum(n, m - k)) if k >= 0 else relu(minimum(n + k, m))
    start = k if k >= 0 else _u(np.multiply, -k, lax.dim_value(m))
    flat = lax.reshape(x, x.aval.shape[:-2] + (n * m,))
    positions = _u(np.add, _u(np.multiply, iota(I64, (length,), 0),
                              _u(np.add, lax.dim_value(m), 1)), start)
    return take(flat, positions, axis=-1)


def diag(v: Any, k: Any = 0) -> Tracer:
    x = as_tracer(v)
    offset = _offset(k, "diag")
    if x.ndim == 2:
        return diagonal(x, offset)
    if x.ndim != 1:
        raise current().error("Input must be 1- or 2-d.")
    pad = DimExpr.const(abs(offset))
    n = x.aval.shape[0] + pad
    padded = concatenate([x, full_from_dims((pad,), 0, x.dtype)]) if offset else x
    rows, cols = iota(I64, (n, n), 0), iota(I64, (n, n), 1)
    on = _u(np.equal, _u(np.subtract, cols, rows), offset)
    values = padded[:, None] if offset >= 0 else padded[None, :]
    return where(on, values, _zero(x.dtype))


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    if not isinstance(a, Tracer):
        raise current().error("np.fill_diagonal fills an array of the kernel in place")
    if a.ndim < 2:
        raise current().error("array must be at least 2-d")
    shape = a.aval.shape
    if a.ndim == 2:
        _n, m = shape
        rows, cols = iota(I64, shape, 0), iota(I64, shape, 1)
        stride = _u(np.add, lax.dim_value(m), 1)
        flat = _u(np.add, _u(np.multiply, rows, lax.dim_value(m)), cols)
        on = _u(np.equal, _u(np.remainder, flat, stride), 0) if wrap else \
            _u(np.equal, rows, cols)
        position = _u(np.floor_divide, flat, stride)  # which diagonal element
    else:
        for d in shape[1:]:
            if d != shape[0]:
                current().check("==", d, shape[0], "ValueError",
                                "All dimensions of input must be of equal length")
        position = iota(I64, shape, 0)
        on = full_from_dims(shape, True, np.dtype(bool))
        for axis in range(1, a.ndim):
            on = _u(np.logical_and, on, _u(np.equal, iota(I64, shape, axis), position))
    values = lax.convert(as_tracer(val), a.dtype)
    if values.ndim:  # NumPy repeats the values along the diagonal
        items = ravel(values)
        count = _u(np.maximum, lax.dim_value(items.aval.shape[0]), 1)
        values = take(items, _u(np.remainder, position, count))
    write(a, Ellipsis, where(on, values, a))


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.diag: diag, np.diagonal: diagonal, np.fill_diagonal: fill_diagonal,
}
