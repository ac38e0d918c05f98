"""Statistics as decompositions: var/std with ddof, average with weights, argmin/argmax,
count_nonzero, clip, and the NaN-ignoring reductions.

Each follows NumPy's own algorithm (``numpy/_core/_methods.py``) so results agree to
rounding: ``var`` subtracts the mean computed in the result dtype, squares, sums and
divides by ``max(n - ddof, 0)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..ops.reduce import ARG_REDUCTIONS
from ..shapes import DimExpr, relu, size
from ..tracing.tracer import Tracer, as_tracer, current
from ..types import complex_dtype
from .complexes import imag, real
from .functions_base import reject_unsupported, where
from .reductions import _keep, any_, max_, mean, min_, sum_
from .shaping import normalize_axes, ravel
from .ufuncs import apply_ufunc, promote_types

I64 = np.dtype(np.int64)


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, **extra: Any) -> Tracer:
    reject_unsupported("var", {"out": out, **extra})
    x = as_tracer(a)
    axes = normalize_axes(axis, x.ndim)
    result_dtype = np.var(np.zeros(1, x.dtype), dtype=dtype).dtype
    # complex values are centered in complex; |x - mean|**2 = re**2 + im**2 is real
    work = complex_dtype(result_dtype) if x.dtype.kind == "c" else result_dtype
    centered = apply_ufunc(np.subtract, lax.convert(x, work),
                           mean(x, axis=axes, dtype=work, keepdims=True))
    if work.kind == "c":
        re, im = real(centered), imag(centered)
        squares = apply_ufunc(np.add, apply_ufunc(np.multiply, re, re),
                              apply_ufunc(np.multiply, im, im))
    else:
        squares = apply_ufunc(np.multiply, centered, centered)
    total = sum_(squares, axis=axes, keepdims=keepdims)
    count = relu(size(tuple(x.aval.shape[i] for i in axes)) - int(ddof))
    return lax.convert(apply_ufunc(np.true_divide, total,
                                   lax.convert(lax.dim_value(count), result_dtype)), result_dtype)


def std(a: Any, *args: Any, **kwargs: Any) -> Tracer:
    v = var(a, *args, **kwargs)
    return apply_ufunc(np.sqrt, v)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if returned:
            x = as_tracer(a)
            n = size(tuple(x.aval.shape[i] for i in normalize_axes(axis, x.ndim)))
            return avg, lax.convert(lax.dim_value(n), avg.dtype)
        return avg
    x, w = as_tracer(a), as_tracer(weights)
    kinds = (x.dtype, w.dtype) + ((np.dtype("f8"),) if x.dtype.kind in "biu" else ())
    result_dtype = np.result_type(*kinds)
    axes = normalize_axes(axis, x.ndim)
    if w.ndim != x.ndim:
        if w.ndim != 1 or len(axes) != 1:
            raise current().error("np.average: 1-D weights need a single axis")
        shape = tuple(DimExpr.const(1) if i != axes[0] else w.aval.shape[0]
                      for i in range(x.ndim))
        w = lax.reshape(w, shape)
    scale = sum_(lax.convert(w, result_dtype), axis=axes, keepdims=keepdims)
    zero = apply_ufunc(np.equal, scale, 0)
    lax.bind(raise_if_p, zero.atom, error="ZeroDivisionError",
             message="Weights sum to zero, can't be normalized")
    weighted = apply_ufunc(np.multiply, lax.convert(x, result_dtype), lax.convert(w, result_dtype))
    avg = apply_ufunc(np.true_divide, sum_(weighted, axis=axes, keepdims=keepdims), scale)
    return (avg, scale) if returned else avg


def _arg(name: str) -> Any:
    prim = ARG_REDUCTIONS[name]

    def arg_reduction(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
        reject_unsupported(name, {"out": out})
        x = as_tracer(a)
        if axis is None:
            x, ax = ravel(x), 0
        else:
            (ax,) = normalize_axes(axis, x.ndim)
        current().check(">=", x.aval.shape[ax], DimExpr.const(1), "ValueError",
                        f"attempt to get {name} of an empty sequence")
        result = lax.bind1(prim, x.atom, axis=ax)
        return _keep(as_tracer(a), result, (ax,), keepdims) if axis is not None else result

    arg_reduction.__name__ = name
    return arg_reduction


argmax, argmin = _arg("argmax"), _arg("argmin")


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Tracer:
    x = as_tracer(a)
    return sum_(apply_ufunc(np.not_equal, x, 0), axis=axis, dtype=I64, keepdims=keepdims)


def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Tracer:
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    reject_unsupported("clip", {"out": out, **kwargs})
    dtype = promote_types(*(v for v in (a, a_min, a_max) if v is not None))
    result = lax.fresh(lax.convert(as_tracer(a), dtype))
    if a_min is not None:
        result = apply_ufunc(np.maximum, result, a_min)
    if a_max is not None:
        result = apply_ufunc(np.minimum, result, a_max)
    return result


def _isnan(x: Tracer) -> Tracer:
    return apply_ufunc(np.isnan, x)


def nan_filled(a: Any, fill: Any) -> Tracer:
    """``a`` with its NaNs made ``fill`` (the identity of a NaN-ignoring reduction);
    integers hold none and are ``a`` itself."""
    x = as_tracer(a)
    return where(_isnan(x), fill, x) if x.dtype.kind in "fc" else x


def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tracer:
    return sum_(nan_filled(a, 0), axis=axis, dtype=dtype, keepdims=keepdims)


def _nan_extreme(name: str, reduce: Callable[..., Tracer], fill: float) -> Any:
    def nan_reduction(a: Any, axis: Any = None, keepdims: bool = False) -> Tracer:
        x = as_tracer(a)
        if x.dtype.kind == "c":  # NumPy's fmax.reduce: an all-NaN slice gives its first NaN
            raise current().error(f"np.{name} of complex values is not supported yet",
                                  hint="reduce np.where(np.isnan(z), fill, z) with np.max "
                                       "or np.min")
        if x.dtype.kind != "f":
            return reduce(x, axis=axis, keepdims=keepdims)
        nan = _isnan(x)
        best = reduce(where(nan, fill, x), axis=axis, keepdims=keepdims)
        all_nan = apply_ufunc(np.logical_not, any_(apply_ufunc(np.logical_not, nan), axis=axis,
                                                   keepdims=keepdims))
        return where(all_nan, np.asarray(np.nan, x.dtype)[()], best)
    return nan_reduction


nanmax = _nan_extreme("nanmax", max_, -np.inf)
nanmin = _nan_extreme("nanmin", min_, np.inf)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tracer:
    x = as_tracer(a)
    if x.dtype.kind not in "fc":
        return mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    valid = apply_ufunc(np.logical_not, _isnan(x))
    total = nansum(x, axis=axis, dtype=dtype, keepdims=keepdims)
    count = sum_(valid, axis=axis, dtype=I64, keepdims=keepdims)
    return lax.convert(apply_ufunc(np.true_divide, total, lax.convert(count, total.dtype)),
                       total.dtype)
