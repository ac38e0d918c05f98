"""``np.searchsorted`` and ``np.interp``, by binary search.

The insertion index of ``v`` in a sorted ``a`` is how many elements of ``a`` sort
before it (``side='left'``), or not after it (``'right'``), in NumPy's order for floats,
where NaN sorts after everything: the ``searchsorted`` primitive finds it by binary
search, O(len(v) * log len(a)). For sorted input (which NumPy assumes as well) the
results are NumPy's.

``np.interp`` finds its interval the same way (``j = searchsorted(xp, x, 'right') - 1``,
what NumPy's ``binary_search_with_guess`` returns for increasing ``xp``), then follows
NumPy's ``arr_interp`` step by step: ``left``/``right`` outside, ``fp[j]`` on a sample
point, ``slope * (x - xp[j]) + fp[j]`` inside, retried from the right end when that is
NaN. ``period=`` is not supported yet.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..ops.index import take_p
from ..ops.sorting import searchsorted_p
from ..shapes import DimExpr, relu
from ..tracing.tracer import WEAK_TYPES, Tracer, as_tracer, current
from .functions_base import where
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
F64 = np.dtype(np.float64)
ONE = DimExpr.const(1)


def _ufunc(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def strong_dtype(value: Any) -> np.dtype:
    """The dtype NumPy gives ``value`` when it makes an array of it (Python int: int64)."""
    if isinstance(value, Tracer):
        return value.dtype
    return np.asarray(value).dtype


def one_dimensional(value: Any, what: str) -> Tracer:
    x = as_tracer(value)
    if x.ndim > 1:
        raise current().error("object too deep for desired array",
                              hint=f"{what} must be one-dimensional")
    if x.ndim == 0:
        raise current().error("object of too small depth for desired array",
                              hint=f"{what} must be one-dimensional")
    return x


def take(x: Tracer, indices: Tracer) -> Tracer:
    """``x[indices]`` for a 1-D ``x`` (indices in range)."""
    return lax.bind1(take_p, x.atom, indices.atom, axis=0)


def count_before(a: Tracer, v: Tracer, side: str) -> Tracer:
    """For each element of ``v`` (any shape), how many elements of the sorted 1-D ``a``
    sort before it (``'left'``) or not after it (``'right'``), in NumPy's NaN-last
    order. ``a`` and ``v`` share a dtype."""
    return lax.bind1(searchsorted_p, a.atom, v.atom, side=side)


def searchsorted(a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Tracer:
    """``np.searchsorted`` by binary search, see the module docstring."""
    x = one_dimensional(a, "a")
    if side not in ("left", "right"):
        raise current().error(f"search side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        order = as_tracer(sorter)
        if order.ndim != 1 or order.dtype.kind not in "iu":
            raise current().error("np.searchsorted: sorter must be a 1-D array of integers")
        current().check("==", order.aval.shape[0], x.aval.shape[0], "ValueError",
                        "sorter.size must equal a.size")
        x = take(x, order)
    dtype = np.result_type(x.dtype, strong_dtype(v))
    keys = lax.convert(as_tracer(v, dtype if isinstance(v, WEAK_TYPES) else None), dtype)
    return count_before(lax.convert(x, dtype), keys, side)


def _scalar_f64(value: Any, what: str) -> Tracer:
    t = as_tracer(value, F64 if isinstance(value, WEAK_TYPES) else None)
    if t.ndim:
        raise current().error(f"np.interp: {what} must be a scalar")
    if t.dtype.kind == "c":
        raise current().error(f"np.interp: a complex {what} is not supported yet",
                              hint="interpolate the real and imaginary parts separately")
    return lax.convert(t, F64)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Tracer:
    """``np.interp`` for increasing ``xp``, see the module docstring."""
    ctx = current()
    if period is not None:
        raise ctx.error("np.interp with period= is not supported yet (it sorts the sample "
                        "points)", hint="map x into one period yourself, e.g. x % period, "
                                        "and pass sample points that cover it in order")
    values = as_tracer(fp)
    if values.dtype.kind == "c":
        raise ctx.error("np.interp with complex fp is not supported yet",
                        hint="interpolate fp.real and fp.imag separately")
    xs = lax.convert(as_tracer(x, F64 if isinstance(x, WEAK_TYPES) else None), F64)
    pts = lax.convert(one_dimensional(xp, "xp"), F64)
    vals = lax.convert(one_dimensional(values, "fp"), F64)
    n = pts.aval.shape[0]
    ctx.check(">=", n, ONE, "ValueError", "array of sample points is empty")
    if vals.aval.shape[0] != n:
        ctx.check("==", vals.aval.shape[0], n, "ValueError",
                  "fp and xp are not of the same length.")
        vals = lax.refine_shape(vals, (n,))
    first, last = vals[0], vals[-1]
    lval = first if left is None else _scalar_f64(left, "left")
    rval = last if right is None else _scalar_f64(right, "right")

    j = _ufunc(np.subtract, count_before(pts, xs, "right"), 1)  # xp[j] <= x < xp[j + 1]
    top = lax.dim_value(n - 1)
    j0 = _ufunc(np.minimum, _ufunc(np.maximum, j, 0), lax.dim_value(relu(n - 2)))
    j1 = _ufunc(np.minimum, _ufunc(np.add, j0, 1), top)
    x0, x1, y0, y1 = take(pts, j0), take(pts, j1), take(vals, j0), take(vals, j1)
    slope = _ufunc(np.true_divide, _ufunc(np.subtract, y1, y0), _ufunc(np.subtract, x1, x0))
    inside = _ufunc(np.add, _ufunc(np.multiply, slope, _ufunc(np.subtract, xs, x0)), y0)
    retry = _ufunc(np.add, _ufunc(np.multiply, slope, _ufunc(np.subtract, xs, x1)), y1)
    result = where(_ufunc(np.isnan, inside), retry, inside)
    flat = _ufunc(np.logical_and, _ufunc(np.isnan, result), _ufunc(np.equal, y0, y1))
    result = where(flat, y0, result)
    result = where(_ufunc(np.equal, xs, x0), y0, result)  # on a sample point: exact
    result = where(_ufunc(np.equal, j, top), last, result)
    result = where(_ufunc(np.less, xs, pts[0]), lval, result)
    result = where(_ufunc(np.greater, xs, pts[-1]), rval, result)
    # NaN: itself, except that NumPy's one-point path compares it and returns fp[0].
    single = _ufunc(np.equal, lax.dim_value(n), 1)
    return where(_ufunc(np.isnan, xs), where(single, first, xs), result)
