"""``np.median``, ``np.percentile`` and ``np.quantile`` (methods ``'linear'``, the
default, ``'lower'``, ``'higher'``, ``'nearest'`` and ``'midpoint'``), as decompositions
over the ``sort`` primitive.

Each sorts the reduced axes (moved last and merged: every row is one sample), then
follows NumPy's own arithmetic so results agree bit for bit:

- ``median`` is NumPy's ``mean`` of the one or two middle elements (``(a + b) / 2`` in
  the mean's dtype, ``a`` itself for an odd count), NaN when the row holds a NaN (which
  sorts last), NaN for an empty row;
- ``quantile`` computes the virtual index ``(n - 1) * q`` (for the other methods, turned
  into a position or a midpoint as NumPy's method table does), its neighbours and weight
  ``gamma`` as ``_quantile`` does, and NumPy's ``_lerp``: ``a + (b - a) * gamma``, or
  ``b - (b - a) * (1 - gamma)`` when ``gamma >= 0.5``. A Python ``q`` is weak (a float32
  array gives float32 results), an integer ``q`` picks elements without interpolating
  (an integer array gives integers), as in NumPy. Rows holding a NaN give NaN.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p, take_p
from ..ops.sorting import sort_p
from ..shapes import DimExpr, relu, size
from ..tracing.tracer import Tracer, as_tracer, current
from .functions_base import reject_unsupported, where
from .joining import moveaxis
from .reductions import any_, mean
from .shaping import normalize_axes
from .sorting import sortable
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)


def sorted_rows(x: Tracer, axis: Any) -> tuple[Tracer, tuple[DimExpr, ...]]:
    """``x`` with the ``axis`` axes (all for None) moved last and merged into one, sorted
    along it; and the shape ``keepdims=True`` gives the result."""
    axes = normalize_axes(axis, x.ndim)
    kept = [k for k in range(x.ndim) if k not in axes]
    rows = moveaxis(x, axes, tuple(range(len(kept), x.ndim))) if axes else x
    shape = tuple(x.aval.shape[k] for k in kept)
    rows = lax.reshape(rows, shape + (size(tuple(x.aval.shape[k] for k in axes)),))
    kept_shape = tuple(ONE if k in axes else d for k, d in enumerate(x.aval.shape))
    return lax.bind1(sort_p, rows.atom, axis=rows.ndim - 1), kept_shape


def _last(rows: Tracer, start: DimExpr, count: DimExpr) -> Tracer:
    """``rows[..., start:start + count]``."""
    lead = rows.aval.shape[:-1]
    return lax.slice_(rows, (DimExpr.const(0),) * len(lead) + (start,), (1,) * rows.ndim,
                      lead + (count,))


def _keep(result: Tracer, lead: tuple[DimExpr, ...], kept_shape: tuple[DimExpr, ...],
          keepdims: bool) -> Tracer:
    return lax.reshape(result, lead + kept_shape) if keepdims else result


def _nan_rows(rows: Tracer) -> Tracer | None:
    """Whether each row's last element is NaN (a NaN sorts last); None for no NaN."""
    if rows.dtype.kind != "f":
        return None
    n = rows.aval.shape[-1]
    return any_(apply_ufunc(np.isnan, _last(rows, relu(n - 1), n - relu(n - 1))), axis=-1)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tracer:
    """NumPy's ``_median``: the mean of the middle one or two elements of each row."""
    reject_unsupported("median", {"out": out})
    x = sortable(a, "np.median")
    rows, kept_shape = sorted_rows(x, axis)
    n = rows.aval.shape[-1]
    # The middle slice: [(n-1)//2, n//2] (one element for odd n), nothing for n == 0.
    start = relu(n - 1) // 2
    middle = _last(rows, start, n // 2 + 1 - start - relu(1 - n))
    result = mean(middle, axis=-1)
    has_nan = _nan_rows(rows)
    if has_nan is not None:
        result = where(has_nan, np.asarray(np.nan, result.dtype)[()], result)
    return _keep(result, (), kept_shape, keepdims)


def _q_array(q: Any, name: str, percent: bool) -> Tracer:
    """``q`` (over 100 for a percentile) as a tracer, checked to be in range: at build
    time for constants, while the kernel runs for traced values."""
    ctx = current()
    scale = "[0, 100]" if percent else "[0, 1]"
    message = f"{'Percentiles' if percent else 'Quantiles'} must be in the range {scale}"
    if isinstance(q, Tracer):
        if q.dtype.kind == "c":
            raise ctx.error(f"{name}: q must be real")
        qt = apply_ufunc(np.true_divide, q, 100) if percent else q
        bad = apply_ufunc(np.logical_not, apply_ufunc(np.logical_and,
                                                      apply_ufunc(np.greater_equal, qt, 0),
                                                      apply_ufunc(np.less_equal, qt, 1)))
        lax.bind(raise_if_p, bad.atom, error="ValueError", message=message)
    else:
        value = np.asarray(q)
        if value.dtype.kind not in "biuf":
            raise ctx.error(f"{name}: q must be real numbers")
        if percent:
            value = np.true_divide(value, 100)
        if not np.all((value >= 0) & (value <= 1)):
            raise ctx.error(message)
        qt = as_tracer(value[()] if value.ndim == 0 else value)
    if qt.ndim > 1:
        raise ctx.error("q must be a scalar or 1d")
    return qt


def _pick(rows: Tracer, index: Tracer) -> Tracer:
    """``rows[..., index]`` with ``index``'s axes first (NumPy's ``arr[index]`` with the
    sampled axis first)."""
    picked = lax.bind1(take_p, rows.atom, index.atom, axis=rows.ndim - 1)
    lead = rows.ndim - 1
    order = tuple(range(lead, picked.ndim)) + tuple(range(lead))
    return lax.transpose(picked, order)


def _lerp(a: Tracer, b: Tracer, t: Tracer) -> Tracer:
    """NumPy's ``_lerp``: from the nearer end, so ``t == 1`` gives ``b`` exactly."""
    diff = apply_ufunc(np.subtract, b, a)
    low = apply_ufunc(np.add, a, apply_ufunc(np.multiply, diff, t))
    rest = apply_ufunc(np.subtract, 1, t)
    rest.weak = t.weak
    high = apply_ufunc(np.subtract, lax.convert(b, low.dtype),
                       lax.convert(apply_ufunc(np.multiply, diff, rest), low.dtype))
    return where(apply_ufunc(np.greater_equal, t, 0.5), high, low)


def _quantile(name: str, percent: bool, a: Any, q: Any, axis: Any, out: Any,
              method: Any, keepdims: bool, weights: Any, interpolation: Any) -> Tracer:
    ctx = current()
    reject_unsupported(name.removeprefix("np."), {"out": out, "weights": weights,
                                                  "interpolation": interpolation})
    check_method(name, method)
    weak_q = type(q) in (int, float)
    x = sortable(a, name)
    qt = _q_array(q, name, percent)
    rows, kept_shape = sorted_rows(x, axis)
    n = rows.aval.shape[-1]
    ctx.check(">=", n, ONE, "IndexError", "index -1 is out of bounds for axis 0 with size 0")
    count = lax.dim_value(n - 1)  # a Python int in NumPy: weak
    virtual = method_index(method, apply_ufunc(np.multiply, count, qt))
    has_nan = _nan_rows(rows)
    last = _pick(rows, lax.dim_value(n - 1))
    if virtual.dtype.kind in "iub":  # integer positions: no interpolation
        result = _pick(rows, lax.convert(virtual, I64))
    else:
        if x.dtype.kind == "b":
            raise ctx.error("numpy boolean subtract, the `-` operator, is not supported, use "
                            "the bitwise_xor, the `^` operator, or the logical_xor function "
                            "instead.")
        result = _interpolate(rows, virtual, n, weak_q, rows.ndim - 1)
    if has_nan is not None:
        result = where(has_nan, lax.convert(last, result.dtype), result)
    return _keep(result, qt.aval.shape, kept_shape, keepdims)


def _interpolate(rows: Tracer, virtual: Tracer, n: DimExpr, weak_q: bool,
                 batch_ndim: int) -> Tracer:
    """NumPy's ``_get_indexes``, ``_get_gamma`` and ``_lerp`` for the linear method."""
    previous = apply_ufunc(np.floor, virtual)
    following = apply_ufunc(np.add, previous, 1)
    top = lax.dim_value(n - 1)
    above = apply_ufunc(np.greater_equal, virtual, top)
    below = apply_ufunc(np.less, virtual, 0)
    nan = apply_ufunc(np.isnan, virtual)
    to_last = apply_ufunc(np.logical_or, above, nan)  # index -1: the last element
    previous = where(below, 0, where(to_last, -1, previous))
    following = where(below, 0, where(to_last, -1, following))
    previous, following = lax.convert(previous, I64), lax.convert(following, I64)
    gamma = lax.convert(apply_ufunc(np.subtract, virtual, previous), virtual.dtype)
    if weak_q:
        gamma.weak = True
    else:
        gamma = lax.reshape(gamma, gamma.aval.shape + (ONE,) * batch_ndim)
    size_ = lax.dim_value(n)
    lower = _pick(rows, where(apply_ufunc(np.less, previous, 0),
                              apply_ufunc(np.add, previous, size_), previous))
    upper = _pick(rows, where(apply_ufunc(np.less, following, 0),
                              apply_ufunc(np.add, following, size_), following))
    return _lerp(lower, upper, gamma)


#: NumPy's methods aotc has, and how each turns ``(n - 1) * q`` into the index it uses:
#: an integer picks an element, a float interpolates between its neighbours.
METHODS: dict[str, Callable[[Tracer], Tracer] | None] = {
    "linear": None,
    "lower": lambda v: lax.convert(apply_ufunc(np.floor, v), I64),
    "higher": lambda v: lax.convert(apply_ufunc(np.ceil, v), I64),
    "nearest": lambda v: lax.convert(apply_ufunc(np.rint, v), I64),  # np.around: to even
    "midpoint": lambda v: apply_ufunc(np.multiply, 0.5, apply_ufunc(
        np.add, apply_ufunc(np.floor, v), apply_ufunc(np.ceil, v))),
}


def check_method(name: str, method: Any) -> None:
    if method not in METHODS:
        raise current().error(f"{name}: method={method!r} is not supported",
                              hint="methods: " + ", ".join(repr(m) for m in METHODS))


def method_index(method: str, virtual: Tracer) -> Tracer:
    """``virtual`` (``(n - 1) * q``) as ``method`` uses it; integer positions stay."""
    rule = METHODS[method]
    if rule is None or virtual.dtype.kind in "iub":
        return virtual
    return rule(virtual)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: Any = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Tracer:
    return _quantile("np.quantile", False, a, q, axis, out, method, keepdims, weights,
                     interpolation)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: Any = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Tracer:
    return _quantile("np.percentile", True, a, q, axis, out, method, keepdims, weights,
                     interpolation)

