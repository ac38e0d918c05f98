"""The methods of binary ufuncs: ``np.add.reduce``, ``np.maximum.accumulate``,
``np.subtract.outer``, ``np.add.reduceat`` and the others, for every binary ufunc aotc
compiles.

``reduce`` uses the reduction primitive where one exists (``add`` is ``np.sum``,
``maximum`` is ``np.max``, ``logical_or`` is ``np.any``...), so it sums pairwise and
vectorizes as those do; ``accumulate`` of ``add``/``multiply`` is ``cumsum``/``cumprod``.
Every other ufunc folds left to right along the axis with ``lax.scan``, which is NumPy's
order for a one-axis reduction (``subtract.reduce([a, b, c])`` is ``(a - b) - c``), so
any binary ufunc has the three methods. ``outer`` is the call on ``a[..., None, ...]`` and
``b``: the ufunc's own broadcasting.

Dtypes, axis errors and refusals are NumPy's own: the method runs once at build time on a
one-element array of the same rank and dtype, and what NumPy does with it (the result
dtype, or the exception) is what the kernel does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import full_from_dims, iota
from .fancy import assign, is_fancy_key
from .functions_base import reject_unsupported, where
from .indexing import getitem
from .indices import raise_first
from .joining import cumprod, cumsum, moveaxis
from .reductions import all_, any_, max_, min_, prod, sum_
from .shaping import normalize_axes, ravel
from .writes import check_same_kind, write

I64 = np.dtype(np.int64)

#: Reductions with a primitive of their own (pairwise sums, vectorized extrema).
REDUCTIONS: dict[np.ufunc, Callable[..., Tracer]] = {
    np.add: sum_, np.multiply: prod, np.maximum: max_, np.minimum: min_,
    np.logical_or: any_, np.logical_and: all_,
}
#: Accumulations with a scan primitive of their own.
ACCUMULATIONS: dict[np.ufunc, Callable[..., Tracer]] = {np.add: cumsum, np.multiply: cumprod}


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    """``ufunc(*args)`` on tracers, as a tracer."""
    return as_tracer(ufunc(*args))


def _numpy_result(ufunc: np.ufunc, method: str, x: Tracer, **kwargs: Any) -> np.ndarray:
    """What NumPy's ``ufunc.method`` gives for a one-element array like ``x`` (its dtype,
    and NumPy's checks of the arguments, as a located build error)."""
    sample = np.ones((1,) * x.ndim, x.dtype)
    try:
        with np.errstate(all="ignore"):
            return np.asarray(getattr(ufunc, method)(sample, **kwargs))
    except (TypeError, ValueError) as err:
        raise current().error(f"np.{ufunc.__name__}.{method}: {err}") from None


def _binary(ufunc: np.ufunc, method: str) -> None:
    if ufunc.nin != 2 or ufunc.nout != 1:
        raise current().error(f"np.{ufunc.__name__}.{method}: {method} only supported for "
                              "binary functions")


def _fold(ufunc: np.ufunc, x: Tracer, axis: int, dtype: np.dtype) -> tuple[Tracer, Tracer]:
    """``ufunc`` folded left to right along ``axis``: the final value and every partial
    one (stacked along axis 0). With no elements the final value is the identity (or 0:
    callers check there is an element when the ufunc has none)."""
    items = moveaxis(lax.convert(x, dtype), axis, 0)
    n = items.aval.shape[0]
    identity = ufunc.identity if ufunc.identity is not None else 0

    def step(acc: Tracer, item: tuple[Tracer, Tracer]) -> tuple[Tracer, Tracer]:
        value, k = item
        combined = lax.convert(as_tracer(ufunc(acc, value)), dtype)
        new = where(np.equal(k, 0), value, combined)
        return new, new

    start = full_from_dims(items.aval.shape[1:], identity, dtype)
    return cast(tuple[Tracer, Tracer], lax.scan(step, start, (items, iota(I64, (n,), 0))))


def _nonempty(ufunc: np.ufunc, extent: DimExpr) -> None:
    if ufunc.identity is None:
        current().check(">=", extent, DimExpr.const(1), "ValueError",
                        f"zero-size array to reduction operation {ufunc.__name__} which has "
                        "no identity")


def reduce(ufunc: np.ufunc, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = np._NoValue, where: Any = True) -> Tracer:
    """``ufunc.reduce``: NumPy's default axis is 0, not all of them."""
    _binary(ufunc, "reduce")
    reject_unsupported(f"{ufunc.__name__}.reduce",
                       {"out": out, "initial": initial, "where": where})
    x = as_tracer(array)
    expected = _numpy_result(ufunc, "reduce", x, axis=axis, dtype=dtype, keepdims=keepdims)
    table = REDUCTIONS.get(ufunc)
    if table is not None:
        return lax.convert(table(x, axis=axis, dtype=dtype, keepdims=keepdims), expected.dtype)
    if axis == ():  # no axis to reduce: NumPy's copy, in the result dtype
        return lax.convert(lax.fresh(x), expected.dtype)
    if axis is None:
        x, axis = ravel(x), 0  # NumPy allows it here for one dimension only (checked above)
    (ax,) = normalize_axes(axis[0] if isinstance(axis, tuple) else axis, x.ndim)
    _nonempty(ufunc, x.aval.shape[ax])
    total, _ = _fold(ufunc, x, ax, expected.dtype)
    if keepdims:
        shape = tuple(DimExpr.const(1) if i == ax else d for i, d in enumerate(x.aval.shape))
        return lax.reshape(total, shape)
    return total


def accumulate(ufunc: np.ufunc, array: Any, axis: Any = 0, dtype: Any = None,
               out: Any = None) -> Tracer:
    _binary(ufunc, "accumulate")
    reject_unsupported(f"{ufunc.__name__}.accumulate", {"out": out})
    x = as_tracer(array)
    expected = _numpy_result(ufunc, "accumulate", x, axis=axis, dtype=dtype)
    (ax,) = normalize_axes(axis, x.ndim)
    table = ACCUMULATIONS.get(ufunc)
    if table is not None:
        return table(x, axis=ax, dtype=expected.dtype)
    _, partial = _fold(ufunc, x, ax, expected.dtype)
    return moveaxis(partial, 0, ax)


def outer(ufunc: np.ufunc, a: Any, b: Any, **kwargs: Any) -> Tracer:
    """``ufunc(a[..., None, ...], b)``: the result's shape is ``a.shape + b.shape``."""
    _binary(ufunc, "outer")
    x, y = as_tracer(a), as_tracer(b)
    spread = lax.reshape(x, x.aval.shape + (DimExpr.const(1),) * y.ndim)
    return as_tracer(ufunc(spread, y, **kwargs))


def at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """``ufunc.at``: ``a[indices] = ufunc(a[indices], b)`` unbuffered (a repeated index
    takes every update, in order), cast back into ``a`` with 'same_kind'."""
    x = as_tracer(a)
    if ufunc.nout != 1 or ufunc.nin not in (1, 2):
        raise current().error(f"np.{ufunc.__name__}.at: only unary and binary ufuncs")
    if (b is None) != (ufunc.nin == 1):
        raise current().error("second operand needed for ufunc" if b is None else
                              "second operand provided when ufunc is unary")

    def combine(old: Tracer, item: Tracer) -> Tracer:
        new = as_tracer(ufunc(old) if ufunc.nin == 1 else ufunc(old, item))
        check_same_kind(new, x.dtype, f"write np.{ufunc.__name__} of")
        return new

    if is_fancy_key(indices):
        assign(x, indices, 0 if b is None else b, combine)
    else:  # basic indices: each place once, as the buffered operator does
        write(x, indices, combine(getitem(x, indices), as_tracer(0 if b is None else b)))


def reduceat(ufunc: np.ufunc, array: Any, indices: Any, axis: Any = 0, dtype: Any = None,
             out: Any = None) -> Tracer:
    """``ufunc.reduceat``: item ``i`` reduces ``x[indices[i]:indices[i + 1]]`` along the
    axis (to the end for the last), or is ``x[indices[i]]`` where the next index is not
    larger: a loop over the indices, each a :func:`reduce` of a runtime slice."""
    _binary(ufunc, "reduceat")
    reject_unsupported(f"{ufunc.__name__}.reduceat", {"out": out})
    x = as_tracer(array)
    expected = _numpy_result(ufunc, "reduceat", x, indices=[0], axis=axis, dtype=dtype)
    (ax,) = normalize_axes(axis, x.ndim)
    items = moveaxis(x, ax, 0)
    starts = lax.convert(as_tracer(indices), I64)
    if starts.ndim != 1:
        raise current().error(f"np.{ufunc.__name__}.reduceat: indices must be 1-D")
    n, m = items.aval.shape[0], starts.aval.shape[0]
    raise_first(_u(np.logical_or, starts < 0, starts >= lax.dim_value(n)), starts, n,
                f"index {{lhs}} out-of-bounds in {ufunc.__name__}.reduceat [0, {{rhs}})",
                "IndexError")
    count = lax.dim_value(m)

    def segment(i: Any, result: Any) -> Any:
        start = starts[i]
        following = starts[_u(np.minimum, i + 1, count - 1)]
        stop = where(i + 1 < count, following, lax.dim_value(n))
        part = items[start:where(stop > start, stop, start + 1)]
        result[i] = reduce(ufunc, part, axis=0, dtype=expected.dtype)
        return result

    empty = full_from_dims((m,) + items.aval.shape[1:], 0, expected.dtype)
    return moveaxis(lax.fori_loop(0, count, segment, empty), 0, ax)


#: ``ufunc.<name>(...)`` as ``METHODS[name](ufunc, ...)`` (``__array_ufunc__``'s method).
METHODS: dict[str, Callable[..., Tracer | None]] = {
    "reduce": reduce, "accumulate": accumulate, "outer": outer, "at": at,
    "reduceat": reduceat,
}
