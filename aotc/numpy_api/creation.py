"""Array creation: zeros/ones/empty/full (and ``_like``), arange, linspace, eye.

Functions with no array argument never reach ``__array_function__``, so converted
kernels call these instead of NumPy's (``aotc.autograph.runtime.call``), whatever name
the function was imported under. Sizes may be integers or sizes derived from shapes and
integer arguments (``np.zeros((n + 2, n + 2))``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..lax import as_dim, size_value
from ..ops.index import raise_if_p
from ..ops.shape import iota_p
from ..shapes import DimExpr, ceil_div, relu
from ..tracing.tracer import Tracer, as_tracer, current
from .functions_base import reject_unsupported, where
from .ufuncs import apply_ufunc, promote_types

I64 = np.dtype(np.int64)
#: Keyword arguments about memory layout, meaningless for kernel values.
LAYOUT = ("order", "like")
F64 = np.dtype(np.float64)


def _shape(shape: Any) -> tuple[DimExpr, ...]:
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    return tuple(as_dim(s, "array size") for s in items)


#: NumPy's error for an array of more bytes than an index can count (``PY_SSIZE_T_MAX``).
TOO_BIG = ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
           "possible size.")


def _allocatable(dims: tuple[DimExpr, ...], dtype: np.dtype) -> tuple[DimExpr, ...]:
    """``dims``, checked as NumPy checks a new array when the kernel is called: a fused
    ``np.zeros(2**61).sum()`` allocates nothing, and would loop for centuries where NumPy
    raises at once."""
    total = DimExpr.const(1)
    for d in dims:
        total = total * d
    current().check("<=", total, DimExpr.const((2**63 - 1) // max(dtype.itemsize, 1)),
                    "ValueError", TOO_BIG)
    return dims


def full(shape: Any, fill_value: Any, dtype: Any = None, **kwargs: Any) -> Tracer:
    reject_unsupported("full", kwargs, LAYOUT)
    dtype = np.dtype(dtype) if dtype is not None else promote_types(fill_value)
    if dtype.kind == "O":  # (np.full(3, 2**64): no integer dtype holds the value)
        raise current().error(f"np.full of {fill_value!r} makes an array of Python "
                              "objects, which aotc does not support",
                              hint="give a dtype (dtype=np.float64) or a value that fits "
                                   "int64")
    value = lax.convert(as_tracer(fill_value, dtype if not isinstance(fill_value, Tracer)
                                  else None), dtype)
    return lax.broadcast_in_dim(value, _allocatable(_shape(shape), dtype), ())


def zeros(shape: Any, dtype: Any = float, **kwargs: Any) -> Tracer:
    return full(shape, 0, np.dtype(dtype), **kwargs)


def ones(shape: Any, dtype: Any = float, **kwargs: Any) -> Tracer:
    return full(shape, 1, np.dtype(dtype), **kwargs)


def _like(fill: int | None) -> Any:
    """``zeros_like``-style functions; ``fill=None`` takes the value as an argument."""
    def like(a: Any, *args: Any, dtype: Any = None, shape: Any = None, **kwargs: Any) -> Tracer:
        x = as_tracer(a)
        value = fill if fill is not None else (args[0] if args else kwargs.pop("fill_value"))
        if fill is not None and args:  # zeros_like(a, np.float32): dtype by position
            dtype, args = args[0], args[1:]
        reject_unsupported("full_like", kwargs, LAYOUT + ("subok",))
        dims = x.aval.shape if shape is None else _shape(shape)
        return full_from_dims(dims, value, np.dtype(dtype) if dtype is not None else x.dtype)
    return like


def full_from_dims(dims: tuple[DimExpr, ...], value: Any, dtype: np.dtype) -> Tracer:
    v = lax.convert(as_tracer(value, None if isinstance(value, Tracer) else dtype), dtype)
    return lax.broadcast_in_dim(v, tuple(dims), ())


def iota(dtype: np.dtype, shape: tuple[DimExpr, ...], dimension: int) -> Tracer:
    return lax.bind1(iota_p, dtype=np.dtype(dtype), shape=tuple(shape), dimension=dimension)


def _is_size(value: Any) -> bool:
    return (isinstance(value, (int, np.integer)) and not isinstance(value, bool)) or (
        isinstance(value, Tracer) and value.dim is not None)


def arange(*args: Any, dtype: Any = None, **kwargs: Any) -> Tracer:
    reject_unsupported("arange", kwargs, LAYOUT)
    if not 1 <= len(args) <= 3:
        raise current().error("np.arange takes 1 to 3 positional arguments")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if isinstance(step, Tracer):
        return _runtime_arange(start, stop, step, dtype)
    if step == 0:
        raise current().error("np.arange: the step must not be zero")
    integral = isinstance(step, (int, np.integer))
    if integral and all(_is_size(v) for v in (start, stop)):
        lo, hi = _dim_or_value(start), _dim_or_value(stop)
        length = ceil_div(relu(hi - lo), step) if step > 0 else ceil_div(relu(lo - hi), -step)
        out_dtype = np.dtype(dtype) if dtype is not None else I64
        values = iota(I64, (length,), 0)
        if step != 1:
            values = apply_ufunc(np.multiply, values, int(step))
        if not (isinstance(start, (int, np.integer)) and start == 0):
            values = apply_ufunc(np.add, values, _as_value(start))
        return lax.convert(values, out_dtype)
    if any(isinstance(v, Tracer) for v in (start, stop)):
        return _runtime_arange(start, stop, step, dtype)
    count = max(math.ceil((stop - start) / step), 0)
    out_dtype = np.dtype(dtype) if dtype is not None else np.arange(start, stop, step).dtype
    values = iota(out_dtype, (DimExpr.const(count),), 0)
    return lax.convert(apply_ufunc(np.add, apply_ufunc(np.multiply, values, step), start),
                       out_dtype)


def _runtime_arange(start: Any, stop: Any, step: Any, dtype: Any) -> Tracer:
    """``np.arange`` whose length NumPy computes from values, ``ceil((stop - start) /
    step)`` (in integers for integers): a size computed from the scalar arguments
    (:mod:`aotc.tracing.derived`), so the bounds and step must come from them."""
    kind = promote_types(start, stop, step)
    zero: Any = np.equal(step, 0)
    lax.bind(raise_if_p, as_tracer(zero).atom, error="ZeroDivisionError",
             message="division by zero" if kind.kind in "iu" else "float division by zero")
    safe = where(zero, 1, step)
    if kind.kind in "iu":  # -((start - stop) // step), exactly
        count = np.negative(np.floor_divide(np.subtract(start, stop), safe))
    else:
        count = np.ceil(np.true_divide(np.subtract(stop, start), safe))
    length = size_value(lax.convert(as_tracer(np.maximum(count, 0)), I64), "np.arange's length")
    out_dtype = np.dtype(dtype) if dtype is not None else kind
    values = iota(kind, (length,), 0)
    return lax.convert(apply_ufunc(np.add, apply_ufunc(np.multiply, values, step), start),
                       out_dtype)


def _dim_or_value(v: Any) -> DimExpr:
    if isinstance(v, Tracer):
        assert v.dim is not None  # a size (see _is_size)
        return v.dim
    return DimExpr.const(int(v))


def _as_value(v: Any) -> Any:
    return v if isinstance(v, Tracer) else int(v)


def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """NumPy's algorithm: ``start + i * step``, ``step = (stop - start) / div``, and the
    last point set to ``stop`` exactly; ``retstep`` also gives ``step`` (NaN when there
    is no interval: ``div`` is 0)."""
    if axis != 0:
        raise current().error("np.linspace: axis is not supported",
                              hint="np.moveaxis(np.linspace(...), 0, axis) gives the same")
    n = size_value(num, "num")
    if n.is_const and n.value < 0:
        raise current().error(f"Number of samples, {n.value}, must be non-negative.")
    current().check(">=", n, DimExpr.const(0), "ValueError",
                    "Number of samples, {lhs}, must be non-negative.")
    div = n - 1 if endpoint else n
    ftype = promote_types(start, stop, 1.0)
    index = iota(ftype, (n,), 0)
    delta = apply_ufunc(np.subtract, stop, start)
    div_value = lax.convert(lax.dim_value(div), ftype)
    safe_div = apply_ufunc(np.maximum, div_value, np.asarray(1, ftype)[()])
    step = apply_ufunc(np.true_divide, delta, safe_div)
    y = apply_ufunc(np.multiply, index, step)
    y = apply_ufunc(np.add, y, start)
    if endpoint:
        last = apply_ufunc(np.equal, lax.convert(iota(I64, (n,), 0), I64),
                           lax.dim_value(n - 1))
        y = where(apply_ufunc(np.logical_and, last, apply_ufunc(np.greater, div_value, 0.0)),
                  stop, y)
    y = lax.convert(y, np.dtype(dtype) if dtype is not None else ftype)
    if retstep:
        return y, where(apply_ufunc(np.greater, div_value, 0.0), step, np.nan)
    return y


def eye(N: Any, M: Any = None, k: int = 0, dtype: Any = float, **kwargs: Any) -> Tracer:
    reject_unsupported("eye", kwargs, LAYOUT)
    shape = (as_dim(N), as_dim(N if M is None else M))
    rows, cols = iota(I64, shape, 0), iota(I64, shape, 1)
    on_diagonal = apply_ufunc(np.equal, apply_ufunc(np.subtract, cols, rows), int(k))
    dtype = np.dtype(dtype)
    return where(on_diagonal, np.asarray(1, dtype)[()], np.asarray(0, dtype)[()])


def identity(n: Any, dtype: Any = float, **kwargs: Any) -> Tracer:
    return eye(n, dtype=dtype, **kwargs)


#: Functions swapped into ``numpy`` while a kernel is traced.
#: NumPy's creation functions by name (``np.array`` and friends are in ``joining``).
CREATION: dict[str, Callable[..., Tracer]] = {
    "zeros": zeros, "ones": ones, "empty": zeros, "full": full, "arange": arange,
    "linspace": linspace, "eye": eye, "identity": identity}
LIKE: dict[Callable[..., Any], Callable[..., Tracer]] = {
    np.zeros_like: _like(0), np.ones_like: _like(1), np.empty_like: _like(0),
    np.full_like: _like(None)}
