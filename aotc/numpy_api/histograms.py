"""``np.bincount`` and ``np.histogram`` with output sizes known before the kernel runs.

``bincount(x, weights, minlength=N)``: NumPy's result has ``max(N, max(x) + 1)`` bins,
a size computed before the kernel runs (:mod:`aotc.tracing.derived`) when ``x`` is an
argument or computed from them at the kernel's top level. For an ``x`` sized by the data
or made in a loop, ``minlength`` is required and every value is checked to fit
(``ValueError``); a negative value is NumPy's ``ValueError``. Counting is NumPy's
loop, ``counts[x[i]] += w[i]`` in order: O(len(x) + N), the same sums.

``histogram(a, bins, range=(lo, hi))`` follows NumPy's ``_histograms_impl`` step by
step, so counts, edges and dtypes are NumPy's: edges from ``linspace`` in NumPy's
``bin_type``, bin indices from ``(a - first) / (last - first) * bins`` with NumPy's
corrections on the edges (the last bin is closed), values outside the range dropped,
then counted as ``bincount`` does. ``bins`` is a build-time integer or an integer
argument (the output size then known when the kernel starts). Without ``range`` the
data's min and max are used (0 and 1 for empty data, a ``ValueError`` for non-finite
ones), widened by 0.5 when equal. ``bins`` may also be an array of increasing edges
(NumPy's sort and binary search of the data, without weights). ``density=True`` divides
by the bin widths and the total.
"""

from __future__ import annotations

import operator
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..ops.reduce import REDUCTIONS
from ..ops.sorting import sort_p
from ..shapes import DimExpr
from ..tracing.bind import size_value
from ..tracing.derived import derived_size
from ..tracing.tracer import WEAK_TYPES, Tracer, as_tracer, current
from .creation import full_from_dims, linspace
from .functions_base import where
from .joining import concatenate, diff
from .reductions import any_, sum_
from .searching import count_before, one_dimensional, take
from .shaping import ravel
from .ufuncs import apply_ufunc, promote_types

I64 = np.dtype(np.int64)
F64 = np.dtype(np.float64)
ONE = DimExpr.const(1)


def _ufunc(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def raise_if(cond: Any, message: str, error: str = "ValueError") -> None:
    """Fail the kernel with ``error(message)`` where any element of ``cond`` (a traced
    bool, from NumPy functions or operators on tracers) is true."""
    cond = as_tracer(cond)
    flag = any_(cond) if cond.ndim else cond
    lax.bind(raise_if_p, flag.atom, error=error, message=message)


# -- bincount -------------------------------------------------------------------------------

def bincount(x: Any, weights: Any = None, minlength: Any = None) -> Tracer:
    ctx = current()
    values = one_dimensional(x, "x")
    if not np.can_cast(values.dtype, I64, "safe"):
        raise ctx.error(f"Cannot cast array data from dtype('{values.dtype}') to "
                        "dtype('int64') according to the rule 'safe'")
    if not isinstance(minlength, Tracer) and isinstance(minlength, (int, np.integer)) \
            and minlength < 0:
        raise ctx.error("'minlength' must not be negative")
    no_minimum = minlength is None or (not isinstance(minlength, Tracer) and minlength == 0)
    least = DimExpr.const(0) if no_minimum else lax.as_dim(minlength, "minlength")
    if values.aval.shape[0] == DimExpr.const(0):  # NumPy: int64 zeros, even with weights
        return full_from_dims((least,), 0, I64)
    bins = _bins_from_data(values, least)
    index = lax.convert(values, I64)
    raise_if(_ufunc(np.less, index, 0), "'list' argument must have no negative elements")
    if bins is None:  # NumPy's length is not known before the kernel runs: minlength's
        if no_minimum:
            raise ctx.error("np.bincount without minlength= of an array the kernel "
                            "computes: NumPy's output size is max(x) + 1, known only while "
                            "the kernel runs", hint="give the number of bins: "
                            "np.bincount(x, minlength=N); aotc returns N bins and checks at "
                            "run time that max(x) < N")
        bins = least
        raise_if(_ufunc(np.greater_equal, index, lax.dim_value(bins)),
                 "np.bincount: a value is >= minlength; aotc needs the bins to fit in "
                 "minlength (the output size must be known before the kernel runs)")
    return _counted(index, _weights(values, weights), bins)


def _weights(values: Tracer, weights: Any) -> Tracer | None:
    if weights is None:
        return None
    ctx = current()
    w = one_dimensional(weights, "weights")
    if w.dtype.kind == "c":
        raise ctx.error(f"np.bincount: cannot cast the weights from {w.dtype} to float64 "
                        "according to the rule 'safe' (complex weights)",
                        hint="pass weights.real and weights.imag in two calls")
    n = values.aval.shape[0]
    if w.aval.shape[0] != n:
        ctx.check("==", w.aval.shape[0], n, "ValueError",
                  "The weights and list don't have the same length.")
        w = lax.refine_shape(w, (n,))
    return lax.convert(w, F64)


def _counted(index: Tracer, weights: Tracer | None, bins: DimExpr) -> Tracer:
    """``counts[index[i]] += weights[i]`` (or 1) in order, as NumPy's loop: O(n + bins),
    and with weights the same sums, rounding for rounding."""
    dtype = I64 if weights is None else F64
    counts = full_from_dims((bins,), 0, dtype)

    def count(i: Tracer, c: Tracer) -> Tracer:
        k = index[i]
        c[k] = c[k] + (1 if weights is None else weights[i])
        return c

    return cast(Tracer, lax.fori_loop(0, lax.dim_value(index.aval.shape[0]), count, counts))


def _bins_from_data(values: Tracer, least: DimExpr) -> DimExpr | None:
    """NumPy's length, ``max(max(x) + 1, minlength)``, as a size computed before the
    kernel runs (aotc.tracing.derived), or None. An ``x`` computed from the arguments at
    the kernel's top level (``x // 2``, ``(y * 10).astype(int)``) is computed once more
    for it, before the kernel runs."""
    top = lax.reduce(REDUCTIONS["reduce_max"], values, (0,))  # an identity if x is empty
    count = _ufunc(np.add, lax.convert(top, I64), 1)
    length = _ufunc(np.maximum, count, lax.dim_value(least))
    return derived_size(length) or derived_size(length, loops=True)


def counted_into(x: Tracer, weights: Any, bins: DimExpr) -> Tracer:
    """``bincount`` of an ``x`` known to fit ``bins`` (``histogram2d``'s flat indices):
    exactly ``bins`` counts, a size the code after it can rely on."""
    return _counted(lax.convert(x, I64), _weights(x, weights), bins)


# -- histogram ------------------------------------------------------------------------------

def _is_static(value: Any) -> bool:
    return not isinstance(value, Tracer)


def _weak(value: Any) -> bool:
    if isinstance(value, Tracer):
        return value.weak
    return isinstance(value, WEAK_TYPES) and not isinstance(value, np.generic)


def _as_weak(result: Tracer, like: Any) -> Tracer:
    """Python arithmetic on a Python number gives a Python number (weak, as in NumPy)."""
    if _weak(like):
        result.weak = True
    return result


def _unsigned_subtract(a: Any, b: Any) -> Any:
    """NumPy's ``_unsigned_subtract``: ``a - b`` in their common dtype, with signed
    integers subtracted as their unsigned counterparts (wrapping, so the difference of
    any two values of the dtype is exact). The result is a NumPy (strong) scalar."""
    if _is_static(a) and _is_static(b):
        dt = np.result_type(a, b)
        if dt.kind == "i":
            unsigned = np.dtype(f"u{dt.itemsize}")
            return np.subtract(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt),
                               casting="unsafe", dtype=unsigned)[()]
        return np.subtract(a, b, dtype=dt)
    dt = promote_types(a, b)
    x = lax.convert(as_tracer(a, dt if _is_static(a) else None), dt)
    y = lax.convert(as_tracer(b, dt if _is_static(b) else None), dt)
    if dt.kind == "i":
        unsigned = np.dtype(f"u{dt.itemsize}")
        x, y = lax.convert(x, unsigned), lax.convert(y, unsigned)
    return _ufunc(np.subtract, x, y)


def _static_range(range_: Any) -> tuple[Any, Any]:
    first, last = range_
    if first > last:
        raise current().error("max must be larger than min in range parameter.")
    if not (np.isfinite(first) and np.isfinite(last)):
        raise current().error(f"supplied range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


class _Edges:
    """The outer edges NumPy's ``_get_outer_edges`` picks, and what follows from them."""

    def __init__(self, first: Any, last: Any, denom: Any, bin_type: np.dtype) -> None:
        self.first, self.last, self.denom, self.bin_type = first, last, denom, bin_type


def _bin_type(first: Any, last: Any, data: Tracer) -> np.dtype:
    bin_type = promote_types(first, last, data)
    return np.result_type(bin_type, 1.0) if bin_type.kind in "iu" else bin_type


def _traced_edges(first: Tracer, last: Tracer, data: Tracer) -> _Edges:
    """Edges from runtime values (the data's min and max, or a runtime range): widened
    by 0.5 when equal, as NumPy's Python arithmetic does it (a Python number stays one)."""
    equal = _ufunc(np.equal, first, last)
    lo = _as_weak(_ufunc(np.subtract, first, 0.5), first)
    hi = _as_weak(_ufunc(np.add, last, 0.5), last)
    denom = where(equal, _unsigned_subtract(hi, lo), _unsigned_subtract(last, first))
    first = _as_weak(where(equal, lo, first), first)
    last = _as_weak(where(equal, hi, last), last)
    return _Edges(first, last, denom, _bin_type(first, last, data))


def _outer_edges(data: Tracer, range_: Any) -> tuple[_Edges, _Edges | None, Tracer | None]:
    """The edges to use, and for data whose size is known only at run time, the edges
    NumPy uses for empty data (0 and 1) and whether the data is empty."""
    if range_ is not None:
        if len(range_) != 2:
            raise current().error("np.histogram: range must be a pair (min, max)")
        first, last = range_
        if _is_static(first) and _is_static(last):
            first, last = _static_range(range_)
            return _Edges(first, last, _unsigned_subtract(last, first),
                          _bin_type(first, last, data)), None, None
        first, last = as_tracer(first), as_tracer(last)
        if first.ndim or last.ndim:
            raise current().error("np.histogram: range must be a pair of scalars")
        raise_if(_ufunc(np.greater, first, last),
                 "max must be larger than min in range parameter.")
        finite = _ufunc(np.logical_and, _ufunc(np.isfinite, first), _ufunc(np.isfinite, last))
        raise_if(_ufunc(np.logical_not, finite), "supplied range of [min, max] is not finite")
        return _traced_edges(first, last, data), None, None
    n = data.aval.shape[0]
    empty = _Edges(0, 1, _unsigned_subtract(1, 0), _bin_type(0, 1, data))
    if n.is_const and n.value == 0:
        return empty, None, None
    low, high = _extreme(data, "min"), _extreme(data, "max")
    nonempty = None if n.is_const else _ufunc(np.greater, lax.dim_value(n), 0)
    finite = _ufunc(np.logical_and, _ufunc(np.isfinite, low), _ufunc(np.isfinite, high))
    bad = _ufunc(np.logical_not, finite)
    raise_if(bad if nonempty is None else _ufunc(np.logical_and, nonempty, bad),
             "autodetected range of [min, max] is not finite")
    edges = _traced_edges(low, high, data)
    return edges, (None if nonempty is None else empty), nonempty


def _extreme(data: Tracer, which: str) -> Tracer:
    """``data.min()`` / ``data.max()`` without the empty-array error: data whose size is
    known only at run time gets the reduction's identity appended (it takes the other
    edges when empty, and the identity changes no other minimum or maximum)."""
    if not data.aval.shape[0].is_const:
        if data.dtype.kind == "f":
            identity: Any = np.inf if which == "min" else -np.inf
        else:
            info = np.iinfo(data.dtype)
            identity = info.max if which == "min" else info.min
        pad = lax.broadcast_in_dim(as_tracer(np.asarray(identity, data.dtype)[()]), (ONE,), ())
        data = concatenate([data, pad])
    return lax.reduce(REDUCTIONS[f"reduce_{which}"], data, (0,))


def _edge_values(edges: _Edges, bins: DimExpr | int) -> Tracer:
    count = bins if isinstance(bins, DimExpr) else DimExpr.const(bins)
    return cast(Tracer, linspace(edges.first, edges.last, lax.dim_value(count + 1),
                                 dtype=edges.bin_type))


def _check_increasing(values: Tracer, bins: Tracer, nonempty: Tracer | None) -> None:
    bad = any_(_ufunc(np.greater_equal, values[:-1], values[1:]))
    if nonempty is not None:
        bad = _ufunc(np.logical_and, bad, nonempty)
    lax.bind(raise_if_p, bad.atom, bins.atom, bins.atom, error="ValueError",
             message="Too many bins for data range. Cannot create {lhs} finite-sized bins.")


def _uniform_counts(data: Tracer, weights: Tracer | None, edges: _Edges, values: Tracer,
                    count: DimExpr) -> Tracer:
    """NumPy's fast path: bin indices computed from the edges, then a bincount (values
    outside the range counted in one more bin, dropped after)."""
    bins = lax.dim_value(count)
    keep = _ufunc(np.logical_and, _ufunc(np.greater_equal, data, edges.first),
                  _ufunc(np.less_equal, data, edges.last))
    tmp = lax.convert(data, edges.bin_type)
    scaled = _ufunc(np.multiply, _ufunc(np.true_divide, _unsigned_subtract(tmp, edges.first),
                                        edges.denom), bins)
    index = lax.convert(scaled, I64)
    index = where(_ufunc(np.equal, index, bins), _ufunc(np.subtract, index, 1), index)
    # Dropped values may have any index: keep every gather in range.
    index = _ufunc(np.minimum, _ufunc(np.maximum, index, 0), bins - 1)
    index = _ufunc(np.subtract, index, _ufunc(np.less, tmp, take(values, index)))
    index = _ufunc(np.minimum, _ufunc(np.maximum, index, 0), bins - 1)
    up = _ufunc(np.logical_and, _ufunc(np.greater_equal, tmp,
                                       take(values, _ufunc(np.add, index, 1))),
                _ufunc(np.not_equal, index, bins - 1))
    index = where(keep, _ufunc(np.add, index, up), bins)
    w = None if weights is None else lax.convert(weights, F64)
    counts = _counted(index, w, count + 1)[:bins]
    return counts if weights is None else lax.convert(counts, weights.dtype)


def _edge_counts(data: Tracer, values: Tracer) -> Tracer:
    """NumPy's path for explicit edges: ``diff`` of how many values sort before each edge
    (the last edge inclusive), by binary search in the sorted data."""
    dtype = np.result_type(data.dtype, values.dtype)
    a, e = lax.convert(data, dtype), lax.convert(values, dtype)
    a = lax.bind1(sort_p, a.atom, axis=0)
    cumulative = concatenate([count_before(a, e[:-1], "left"),
                              count_before(a, e[-1:], "right")])
    return diff(cumulative)


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple[Tracer, Tracer]:
    ctx = current()
    data = as_tracer(a)
    if data.dtype == np.bool_:  # NumPy converts (with a RuntimeWarning)
        data = lax.convert(data, np.dtype(np.uint8))
    if data.dtype.kind == "c":
        raise ctx.error("np.histogram of complex values is not supported (complex values "
                        "have no order for bins)", hint="histogram np.abs(a) or a.real")
    w = None
    if weights is not None:
        w = as_tracer(weights)
        if w.dtype.kind == "c":
            raise ctx.error("np.histogram with complex weights is not supported yet",
                            hint="histogram weights.real and weights.imag separately")
        if w.ndim != data.ndim:
            raise ctx.error("weights should have the same shape as a.")
        for dw, da in zip(w.aval.shape, data.aval.shape, strict=True):
            if dw != da:
                ctx.check("==", dw, da, "ValueError", "weights should have the same shape as a.")
        w = ravel(lax.refine_shape(w, data.aval.shape))
    data = ravel(data)
    if isinstance(bins, str):
        raise ctx.error(f"np.histogram with bins={bins!r} picks the number of bins from the "
                        "data, so the output size would be known only at run time",
                        hint="give the number of bins (bins=10) or the bin edges")
    if isinstance(bins, Tracer) and bins.ndim == 0:  # a count known when the kernel starts
        if bins.dtype.kind not in "iu":
            raise ctx.error("`bins` must be an integer, a string, or an array")
        return _uniform(data, w, size_value(bins, "bins"), range, density)
    if isinstance(bins, Tracer) or np.ndim(bins) == 1:
        edges = one_dimensional(bins, "bins")
        if w is not None:
            raise ctx.error("np.histogram with bin edges and weights is not supported yet "
                            "(NumPy sums the weights in sorted order)",
                            hint="use a number of bins with range=, or np.bincount")
        raise_if(_ufunc(np.greater, edges[:-1], edges[1:]),
                 "`bins` must increase monotonically, when an array")
        counts = _edge_counts(data, edges)
        return _density(counts, edges) if density else (counts, edges)
    if np.ndim(bins) != 0:
        raise ctx.error("`bins` must be 1d, when an array")
    try:
        count = operator.index(bins)
    except TypeError:
        raise ctx.error("`bins` must be an integer, a string, or an array") from None
    if count < 1:
        raise ctx.error("`bins` must be positive, when an integer")
    return _uniform(data, w, DimExpr.const(count), range, density)


def _uniform(data: Tracer, w: Tracer | None, count: DimExpr, range_: Any, density: Any
             ) -> tuple[Tracer, Tracer]:
    """``count`` equal bins between NumPy's outer edges."""
    ctx = current()
    bins = lax.dim_value(count)
    if not count.is_const:
        ctx.check(">=", count, DimExpr.const(1), "ValueError",
                  "`bins` must be positive, when an integer")
    outer, empty, nonempty = _outer_edges(data, range_)
    values = _edge_values(outer, count)
    if count.is_const and all(_is_static(v) for v in (outer.first, outer.last)):
        with np.errstate(all="ignore"):
            expected = np.linspace(outer.first, outer.last, count.value + 1,
                                   dtype=outer.bin_type)
        if np.any(expected[:-1] >= expected[1:]):
            raise ctx.error(f"Too many bins for data range. Cannot create {count.value} "
                            "finite-sized bins.")
    else:
        _check_increasing(values, bins, nonempty)
    counts = _uniform_counts(data, w, outer, values, count)
    if empty is not None and nonempty is not None:
        values = where(nonempty, values, _edge_values(empty, count))
    return _density(counts, values) if density else (counts, values)


def _density(counts: Tracer, edges: Tracer) -> tuple[Tracer, Tracer]:
    widths = lax.convert(diff(edges), F64)
    total = sum_(counts)
    return _ufunc(np.true_divide, _ufunc(np.true_divide, counts, widths), total), edges



def bin_edges(data: Tracer, count: int, range_: Any) -> Tracer:
    """The ``count + 1`` edges ``np.histogramdd`` gives one axis of ``data``: a linspace
    between NumPy's outer edges (0 and 1 for empty data)."""
    outer, empty, nonempty = _outer_edges(data, range_)
    values = _edge_values(outer, count)
    if empty is not None and nonempty is not None:
        values = where(nonempty, values, _edge_values(empty, count))
    return values
