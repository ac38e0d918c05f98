"""Basic indexing: build-time integers, slices with steps, ``None`` and ``...``.

Bounds follow Python's rules on symbolic sizes: a slice is clamped, so ``x[1:]`` of
length ``n`` has length ``relu(n - 1)``; an integer index is checked at run time and
raises ``IndexError`` as NumPy does. The result is one ``slice`` (a view) followed by
a ``reshape`` that drops integer-indexed axes and inserts new ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..ops.index import dynamic_slice_p, raise_if_p
from ..shapes import DimExpr, ceil_div, if_neg, maximum, minimum, relu
from ..trace import Tracer, current
from .functions_base import where
from .masks import MaskedValue, read_masked
from .ufuncs import apply_ufunc
from .views import layout_view, make_view

ONE = DimExpr.const(1)


def _static_int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, Tracer):
        raise current().error(
            f"{what} is a traced value; indexing with runtime integers is not supported yet",
            hint="use a build-time integer, or np.where for selections",
        )
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise current().error(f"{what} {value!r} must be an integer")


def _bound(value: Any, what: str) -> DimExpr | None:
    """A slice bound as a size expression; it may be negative (counted from the end)."""
    if value is None:
        return None
    if isinstance(value, Tracer) and value.dim is not None and value.ndim == 0:
        return value.dim
    v = _static_int(value, what)
    assert v is not None
    return DimExpr.const(v)


def _normalized(b: DimExpr, n: DimExpr, step: int) -> DimExpr:
    """Python's reading of slice bound ``b`` on an axis of size ``n`` (``slice.indices``):
    a negative bound counts from the end, and the result is clamped into ``[0, n]``
    (``[-1, n - 1]`` for a negative step). ``b`` may be a signed runtime integer."""
    if step > 0:
        offset = b - n
        if offset.is_const and offset.value in (-1, -2):
            return relu(b)  # x[:n - 1]: the same value whichever way Python reads it
        return if_neg(b, relu(n + b), minimum(b, n))
    return if_neg(b, maximum(n + b, -1), minimum(b, n - 1))


def slice_bounds(s: slice, n: DimExpr) -> tuple[DimExpr, int, DimExpr]:
    """(start, step, length) of ``s`` on an axis of size ``n``, clamped like Python."""
    step = _static_int(s.step, "slice step")
    step = 1 if step is None else step
    if step == 0:
        raise current().error("slice step cannot be zero")
    start, stop = _bound(s.start, "slice start"), _bound(s.stop, "slice stop")
    if step > 0:
        lo = DimExpr.const(0) if start is None else _normalized(start, n, step)
        hi = n if stop is None else _normalized(stop, n, step)
        return lo, step, ceil_div(relu(hi - lo), step)
    # Clamped into [-1, n - 1]; -1 means "before the first element".
    lo = n - 1 if start is None else _normalized(start, n, step)
    hi = DimExpr.const(-1) if stop is None else _normalized(stop, n, step)
    return lo, step, ceil_div(relu(lo - hi), -step)


def _expand_key(key: Any, ndim: int) -> list[Any]:
    items = list(key) if isinstance(key, tuple) else [key]
    if any(isinstance(k, (list, np.ndarray, Tracer)) and not _is_scalar_index(k) for k in items):
        raise current().error(
            "indexing with arrays (fancy or boolean-mask indexing) is not supported yet",
            hint="use np.where(mask, x, fill) to select values",
        )
    ellipses = sum(1 for k in items if k is Ellipsis)
    if ellipses > 1:
        raise current().error("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if used > ndim:
        raise current().error(f"too many indices: the array has rank {ndim}")
    if ellipses:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (ndim - used)
        return items
    return items + [slice(None)] * (ndim - used)


def _is_scalar_index(k: Any) -> bool:
    return isinstance(k, Tracer) and k.ndim == 0


def is_runtime_index(item: Any) -> bool:
    return isinstance(item, Tracer) and item.ndim == 0 and item.dtype.kind in "iub" \
        and item.dtype != np.bool_


def split_runtime_indices(x: Tracer, key: Any) -> tuple[list[Any], dict[int, Tracer]]:
    """The key with runtime integers replaced by ``:``, and those integers by the axis
    of the static result they index."""
    items = _expand_key(key, x.ndim)
    static: list[Any] = []
    runtime: dict[int, Tracer] = {}
    out_axis = 0
    for item in items:
        if is_runtime_index(item):
            runtime[out_axis] = item
            static.append(slice(None))
            out_axis += 1
        else:
            static.append(item)
            if item is None or isinstance(item, slice):
                out_axis += 1
    return static, runtime


def runtime_starts(v: Tracer, runtime: dict[int, Tracer]) -> list[Tracer]:
    """Start indices per axis: checked against the size (IndexError), negatives wrapped."""
    starts = []
    for axis, n in enumerate(v.aval.shape):
        if axis not in runtime:
            starts.append(lax.convert(lax.dim_value(DimExpr.const(0)), np.dtype(np.int64)))
            continue
        i = lax.convert(runtime[axis], np.dtype(np.int64))
        size = lax.dim_value(n)
        bad = apply_ufunc(np.logical_or, apply_ufunc(np.greater_equal, i, size),
                          apply_ufunc(np.less, i, apply_ufunc(np.negative, size)))
        lax.bind(raise_if_p, bad.atom, error="IndexError",
                 message=f"index out of bounds for axis {axis} (a runtime index outside "
                         "[-n, n))")
        starts.append(where(apply_ufunc(np.less, i, 0), apply_ufunc(np.add, i, size), i))
    return starts


def _getitem_runtime(x: Tracer, key: Any) -> Tracer:
    static, runtime = split_runtime_indices(x, key)
    v = getitem(x, tuple(static))
    starts = runtime_starts(v, runtime)
    sizes = tuple(ONE if a in runtime else d for a, d in enumerate(v.aval.shape))
    block = lax.bind1(dynamic_slice_p, v.atom, *(s.atom for s in starts), sizes=sizes)
    result = lax.reshape(block, tuple(d for a, d in enumerate(sizes) if a not in runtime))
    # x[i] of a matrix is a view in NumPy: writing through it is refused, not ignored.
    return result if result.ndim == 0 else layout_view(x, result)


def getitem(x: Tracer, key: Any) -> Any:
    if is_mask_key(key):
        return read_masked(x, key)
    keys = key if isinstance(key, tuple) else (key,)
    if any(is_runtime_index(k) for k in keys):
        return _getitem_runtime(x, key)
    ctx = current()
    items = _expand_key(key, x.ndim)
    starts: list[DimExpr] = []
    steps: list[int] = []
    sizes: list[DimExpr] = []
    final: list[DimExpr] = []
    axis = 0
    for item in items:
        if item is None:
            final.append(ONE)
            continue
        n = x.aval.shape[axis]
        if isinstance(item, slice):
            lo, step, length = slice_bounds(item, n)
            starts.append(lo)
            steps.append(step)
            sizes.append(length)
            final.append(length)
        else:
            i = _static_int(item, "index")
            assert i is not None
            if i >= 0:
                ctx.check("<", DimExpr.const(i), n, "IndexError",
                          f"index {{lhs}} is out of bounds for axis {axis} with size {{rhs}}")
                starts.append(DimExpr.const(i))
            else:
                ctx.check(">=", n, DimExpr.const(-i), "IndexError",
                          f"index {i} is out of bounds for axis {axis} with size {{lhs}}")
                starts.append(n + i)
            steps.append(1)
            sizes.append(ONE)
        axis += 1
    view = lax.slice_(x, tuple(starts), tuple(steps), tuple(sizes))
    result = lax.reshape(view, tuple(final))
    if result is x:
        return x
    return make_view(x, result, lambda w: w.sliced(tuple(starts), tuple(steps), tuple(sizes))
                     .reshaped(tuple(final)))


def is_mask_key(key: Any) -> bool:
    """A boolean array used as an index (``x[mask]``)."""
    return isinstance(key, MaskedValue) or (
        isinstance(key, Tracer) and key.dtype == np.bool_ and key.ndim > 0) or (
        isinstance(key, np.ndarray) and key.dtype == np.bool_)
