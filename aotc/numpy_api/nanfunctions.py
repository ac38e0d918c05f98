"""NaN-ignoring reductions beyond ``nansum``/``nanmean``/``nanmax``/``nanmin``
(:mod:`.statistics`): ``nanprod``, ``nancumsum``, ``nancumprod``, ``nanvar``,
``nanstd``, ``nanargmax``, ``nanargmin``, as NumPy's ``nanfunctions`` writes them.

NaNs are replaced by the operation's identity (0 for sums, 1 for products, -inf/+inf
for argmax/argmin) and the plain reduction runs; integers (which hold no NaN) go straight
to it. ``nanvar`` centers on the mean of the valid values and divides by their count
minus ``ddof`` (NaN where that is not positive, as NumPy's warning case gives);
``nanargmax`` of an all-NaN slice is NumPy's ValueError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer, as_tracer
from .complexes import imag, real
from .functions_base import where
from .histograms import raise_if
from .joining import cumprod, cumsum
from .reductions import all_, prod, sum_
from .shaping import normalize_axes
from .statistics import argmax, argmin, nan_filled, var
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tracer:
    return prod(nan_filled(a, 1), axis=axis, dtype=dtype, keepdims=keepdims)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None) -> Tracer:
    return cumsum(nan_filled(a, 0), axis=axis, dtype=dtype)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None) -> Tracer:
    return cumprod(nan_filled(a, 1), axis=axis, dtype=dtype)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, ddof: Any = 0,
           keepdims: bool = False) -> Tracer:
    x = as_tracer(a)
    if x.dtype.kind not in "fc":
        return var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    axes = normalize_axes(axis, x.ndim)
    valid = apply_ufunc(np.logical_not, apply_ufunc(np.isnan, x))
    count = sum_(valid, axis=axes, dtype=I64, keepdims=True)
    values = where(valid, x, 0)
    total = sum_(values, axis=axes, dtype=dtype, keepdims=True)
    mean = lax.convert(apply_ufunc(np.true_divide, total, count), total.dtype)
    centered = where(valid, apply_ufunc(np.subtract, values, mean), 0)
    if centered.dtype.kind == "c":
        re, im = real(centered), imag(centered)
        squares = re * re + im * im
    else:
        squares = centered * centered
    result_dtype = np.var(np.zeros(1, x.dtype), dtype=dtype).dtype
    spread = sum_(squares, axis=axes, dtype=dtype, keepdims=keepdims)
    dof = apply_ufunc(np.subtract, sum_(valid, axis=axes, dtype=I64, keepdims=keepdims), ddof)
    out = lax.convert(apply_ufunc(np.true_divide, spread, dof), spread.dtype)
    return lax.convert(where(dof <= 0, np.nan, out), result_dtype)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, ddof: Any = 0,
           keepdims: bool = False) -> Tracer:
    return apply_ufunc(np.sqrt, nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _nan_arg(pick: Callable[..., Tracer], fill: float) -> Callable[..., Tracer]:
    def nan_arg(a: Any, axis: Any = None, keepdims: bool = False) -> Tracer:
        x = as_tracer(a)
        if x.dtype.kind not in "fc":
            return pick(x, axis=axis, keepdims=keepdims)
        nan = apply_ufunc(np.isnan, x)
        raise_if(all_(nan, axis=axis), "All-NaN slice encountered")
        return pick(where(nan, fill, x), axis=axis, keepdims=keepdims)
    return nan_arg


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.nanprod: nanprod, np.nancumsum: nancumsum, np.nancumprod: nancumprod,
    np.nanvar: nanvar, np.nanstd: nanstd, np.nanargmax: _nan_arg(argmax, -np.inf),
    np.nanargmin: _nan_arg(argmin, np.inf),
}
