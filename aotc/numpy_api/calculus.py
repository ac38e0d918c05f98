"""``np.trapezoid``, ``np.unwrap``, ``np.cumulative_sum``/``cumulative_prod`` and
``np.array_equal``, written as NumPy writes them (the same operations in the same order,
so results agree bit for bit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import full_from_dims
from .functions_base import where
from .joining import concatenate, cumprod, cumsum, diff
from .reductions import all_, sum_
from .shaping import normalize_axes
from .ufuncs import apply_ufunc

ONE = DimExpr.const(1)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _part(x: Tracer, axis: int, start: int | None, stop: int | None) -> Tracer:
    key = tuple(slice(start, stop) if k == axis else slice(None) for k in range(x.ndim))
    return cast(Tracer, x[key])


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Tracer:
    v = as_tracer(y)
    (ax,) = normalize_axes(axis, v.ndim)
    if x is None:
        d: Any = dx
    else:
        xs = as_tracer(x)
        if xs.ndim == 1:
            d = diff(xs)
            d = lax.reshape(d, tuple(d.aval.shape[0] if k == ax else ONE
                                     for k in range(v.ndim)))
        else:
            d = diff(xs, axis=ax)
    pairs = _u(np.add, _part(v, ax, 1, None), _part(v, ax, None, -1))
    return sum_(_u(np.true_divide, _u(np.multiply, d, pairs), 2.0), axis=ax)


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * math.pi
           ) -> Tracer:
    v = as_tracer(p)
    (ax,) = normalize_axes(axis, v.ndim)
    dd = diff(v, axis=ax)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(dd.dtype, np.asarray(period).dtype if not isinstance(period, float)
                           else np.float64)
    if dtype.kind in "iu":
        raise current().error("np.unwrap of integer phases is not supported yet")
    high = period / 2
    low = -high
    ddmod = _u(np.add, _u(np.remainder, _u(np.subtract, dd, low), period), low)
    ddmod = where(_u(np.logical_and, ddmod == low, dd > 0), high, ddmod)
    correct = _u(np.subtract, ddmod, dd)
    correct = where(_u(np.absolute, dd) < discont, 0, correct)
    up = lax.convert(v, dtype)
    tail = _u(np.add, _part(up, ax, 1, None), cumsum(correct, axis=ax))
    return concatenate([_part(up, ax, None, 1), lax.convert(tail, dtype)], axis=ax)


def _cumulative(scan: Callable[..., Tracer], identity: int) -> Callable[..., Tracer]:
    def apply(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
              include_initial: bool = False) -> Tracer:
        v = as_tracer(x)
        if out is not None:
            raise current().error("np.cumulative_*: out= is not supported")
        if axis is None:
            if v.ndim > 1:
                raise current().error("axis must be specified for multi-dimensional arrays")
            axis = 0
        (ax,) = normalize_axes(axis, v.ndim)
        result = scan(v, axis=ax, dtype=dtype)
        if not include_initial:
            return result
        shape = tuple(ONE if k == ax else d for k, d in enumerate(result.aval.shape))
        return concatenate([full_from_dims(shape, identity, result.dtype), result], axis=ax)
    return apply


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Tracer:
    """Same shape and the same elements (NaN equal to NaN with ``equal_nan``): a shape
    known only at run time is compared there, the elements only where it matches."""
    x, y = as_tracer(a1), as_tracer(a2)
    if x.ndim != y.ndim:
        return as_tracer(np.False_)

    def same(pair: tuple[Tracer, Tracer]) -> Tracer:
        u, w = pair
        w = lax.refine_shape(w, u.aval.shape)
        equal: Tracer = _u(np.equal, u, w)
        if equal_nan:
            equal = _u(np.logical_or, equal, _u(np.logical_and, _u(np.isnan, u),
                                                _u(np.isnan, w)))
        return all_(equal)

    differ = [(d, e) for d, e in zip(x.aval.shape, y.aval.shape, strict=True) if d != e]
    if not differ:
        return same((x, y))
    if any((d - e).is_const for d, e in differ):  # sizes that can never be equal
        return as_tracer(np.False_)
    shape_equal: Any = np.True_
    for d, e in differ:
        shape_equal = _u(np.logical_and, shape_equal, lax.dim_value(d) == lax.dim_value(e))
    return cast(Tracer, lax.cond(shape_equal, same, lambda pair: as_tracer(np.False_), (x, y)))


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.trapezoid: trapezoid, np.unwrap: unwrap, np.array_equal: array_equal,
    np.cumulative_sum: _cumulative(cumsum, 0), np.cumulative_prod: _cumulative(cumprod, 1),
}
if hasattr(np, "trapz"):  # removed in NumPy 2.4
    FUNCTIONS[np.trapz] = trapezoid
