"""``np.nanmedian``, ``np.nanquantile`` and ``np.nanpercentile``: the statistics of each
row's numbers, its NaNs left out.

A sort puts a row's NaNs last, so its ``c`` numbers are its first ``c`` elements, ``c``
counted per row; the arithmetic is then NumPy's on the compressed row: the median is
the middle element, or the two middle ones summed and halved; the quantile's virtual
index is ``(c - 1) * q``, its neighbours clipped to the row, ``gamma`` and the lerp as in
:mod:`.quantiles`. A row of NaNs only gives NaN (NumPy warns). Arrays without NaN
(integers) are :mod:`.quantiles`' functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer
from .creation import iota
from .functions_base import reject_unsupported, where
from .joining import take
from .quantiles import (
    _keep,
    _lerp,
    _q_array,
    check_method,
    median,
    method_index,
    percentile,
    quantile,
    sorted_rows,
)
from .reductions import sum_
from .shaping import ravel
from .sorting import sortable
from .statistics import clip
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


class _Rows:
    """A float array's sorted rows, how many numbers each holds, and gathers by a
    per-row position."""

    def __init__(self, x: Tracer, axis: Any) -> None:
        self.rows, self.kept_shape = sorted_rows(x, axis)
        self.lead = self.rows.aval.shape[:-1]
        self.count = sum_(lax.convert(_u(np.logical_not, _u(np.isnan, self.rows)), I64),
                          axis=-1)
        width = lax.dim_value(self.rows.aval.shape[-1])
        self.flat = ravel(self.rows)
        self.start = lax.reshape(iota(I64, (size(self.lead),), 0), self.lead) * width

    def at(self, position: Tracer) -> Tracer:
        """``row[position]`` for every row (``position`` ends with the rows' shape)."""
        return take(self.flat, self.start + _u(np.maximum, position, 0))

    def nan_where_empty(self, result: Tracer) -> Tracer:
        return where(self.count == 0, np.asarray(np.nan, result.dtype)[()], result)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tracer:
    reject_unsupported("nanmedian", {"out": out})
    x = sortable(a, "np.nanmedian")
    if x.dtype.kind != "f":
        return median(x, axis=axis, keepdims=keepdims)
    rows = _Rows(x, axis)
    low, high = rows.at((rows.count - 1) // 2), rows.at(rows.count // 2)
    odd = rows.count % 2 == 1
    result = where(odd, low, (low + high) / 2)
    return _keep(rows.nan_where_empty(result), (), rows.kept_shape, keepdims)


def _nanquantile(name: str, percent: bool, a: Any, q: Any, axis: Any, out: Any,
                 method: Any, keepdims: bool, weights: Any, interpolation: Any) -> Tracer:
    reject_unsupported(name.removeprefix("np."), {"out": out, "weights": weights,
                                                  "interpolation": interpolation})
    check_method(name, method)
    x = sortable(a, name)
    if x.dtype.kind != "f":
        return (percentile if percent else quantile)(x, q, axis=axis, method=method,
                                                     keepdims=keepdims)
    qt = _q_array(q, name, percent)
    rows = _Rows(x, axis)
    q_rows = lax.reshape(qt, qt.aval.shape + (DimExpr.const(1),) * len(rows.lead))
    last = rows.count - 1
    weak_q = type(q) in (int, float)  # a Python number takes the array's precision
    virtual = lax.convert(last, q_rows.dtype) * q_rows
    if weak_q:
        virtual = lax.convert(virtual, x.dtype)
    virtual = method_index(method, virtual)
    if virtual.dtype.kind in "iu":  # a position: the element itself
        picked = rows.at(clip(virtual, 0, last))
        return _keep(rows.nan_where_empty(picked), qt.aval.shape, rows.kept_shape, keepdims)
    previous = _u(np.floor, virtual)
    gamma = lax.convert(virtual - previous, virtual.dtype)
    gamma.weak = weak_q
    below, beyond = virtual < 0, virtual >= lax.convert(last, virtual.dtype)
    previous = lax.convert(previous, I64)
    lower = where(below, 0, where(beyond, last, previous))
    upper = where(below, 0, where(beyond, last, previous + 1))
    result = _lerp(rows.at(lower), rows.at(upper), gamma)
    return _keep(rows.nan_where_empty(result), qt.aval.shape, rows.kept_shape, keepdims)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: Any = "linear",
                keepdims: bool = False, *, weights: Any = None,
                interpolation: Any = None) -> Tracer:
    return _nanquantile("np.nanquantile", False, a, q, axis, out, method, keepdims,
                        weights, interpolation)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: Any = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Tracer:
    return _nanquantile("np.nanpercentile", True, a, q, axis, out, method, keepdims,
                        weights, interpolation)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.nanmedian: nanmedian, np.nanquantile: nanquantile, np.nanpercentile: nanpercentile,
}
