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
from ..ops.index import raise_if_p
from ..shapes import (
    SYMBOL_LIMIT,
    DimExpr,
    Step,
    ceil_div,
    if_neg,
    maximum,
    minimum,
    relu,
    within_limit,
)
from ..tracing.tracer import Tracer, as_tracer, bind_dim, current, dim_value
from ..value_bounds import constant_gap
from .functions_base import where
from .masks import MaskedValue, read_masked
from .views import make_view

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
    return DimExpr.const(within_limit(v))


#: NumPy's IndexError for an integer index that does not fit int64.
_NOT_AN_INDEX = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                 "integer or boolean arrays are valid indices")


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


def slice_bounds(s: slice, n: DimExpr) -> tuple[DimExpr, Step, DimExpr]:
    """(start, step, length) of ``s`` on an axis of size ``n``, clamped like Python."""
    if isinstance(s.step, Tracer):
        return _runtime_slice_bounds(s.start, s.stop, s.step, n)
    step = _static_int(s.step, "slice step")
    step = 1 if step is None else within_limit(step)
    if step == 0:
        raise current().error("slice step cannot be zero")
    if any(isinstance(b, Tracer) and b.dim is None for b in (s.start, s.stop)):
        return _runtime_slice_bounds(s.start, s.stop, step, n)
    start, stop = _bound(s.start, "slice start"), _bound(s.stop, "slice stop")
    if step > 0:
        lo = DimExpr.const(0) if start is None else _normalized(start, n, step)
        hi = n if stop is None else _normalized(stop, n, step)
        return lo, step, ceil_div(relu(hi - lo), step)
    # Clamped into [-1, n - 1]; -1 means "before the first element".
    lo = n - 1 if start is None else _normalized(start, n, step)
    hi = DimExpr.const(-1) if stop is None else _normalized(stop, n, step)
    return lo, step, ceil_div(relu(lo - hi), -step)


def _runtime_slice_bounds(start: Any, stop: Any, step: int | Tracer, n: DimExpr
                          ) -> tuple[DimExpr, Step, DimExpr]:
    """Bounds or a step known only at run time (``M[i:, i]`` with a loop index ``i``,
    ``sieve[i * i::i] = False``): Python's clamping (``slice.indices``) is computed on the
    values, then the start and the length become sizes bound there (both at most ``n``),
    so the slice is a view like any other and writes through it reach the array.

    A runtime step is checked (ValueError for 0, as in Python) and bound as its
    magnitude and its sign: the view's step is ``magnitude * (1 - 2 * negative)``. A
    magnitude beyond the axis is bound as the axis' size: such a slice has at most one
    element, which the step never moves."""
    ctx = current()
    key = ("slice", _bound_key(start), _bound_key(stop), _bound_key(step), n)
    found = ctx.remembered(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    size = dim_value(n)
    up: Any = step > 0 if isinstance(step, int) else None
    if isinstance(step, Tracer):
        k = _integer(step)
        zero: Any = np.equal(k, 0)
        lax.bind(raise_if_p, zero.atom, error="ValueError",
                 message="slice step cannot be zero")
        up = k > 0

    def pick(forward: Any, backward: Any) -> Any:
        """``forward`` for a positive step, else ``backward``."""
        return (forward if up else backward) if isinstance(up, bool) else \
            where(up, forward, backward)

    def clamped(bound: Any, forward: Any, backward: Any) -> Tracer:
        if bound is None:
            return as_tracer(pick(forward, backward))
        value = _integer(as_tracer(bound))
        low, high = pick(0, -1), pick(size, size - 1)
        return where(value < 0, np.maximum(value + size, low), np.minimum(value, high))

    lo: Any = clamped(start, 0, size - 1)
    hi: Any = clamped(stop, size, -1)
    span: Any = pick(hi - lo, lo - hi)
    if isinstance(step, Tracer):
        reach = np.maximum(size, 1)  # a longer step takes the same one element
        magnitude: Any = np.maximum(np.minimum(pick(k, -np.maximum(k, -reach)), reach), 1)
        length = where(span > 0, (span - 1) // magnitude + 1, 0)
        negative = bind_dim(where(up, 0, 1), ONE)
        stride = bind_dim(np.minimum(magnitude, size), n)
        bound_step: Step = stride - 2 * stride * negative
    else:
        length = np.maximum(span, 0)
        if abs(step) > 1:
            length = (length + (abs(step) - 1)) // abs(step)
        bound_step = step
    longest = _longest(start, stop, step, n)
    if longest is not n:
        length = as_tracer(np.minimum(length, dim_value(longest)))  # the same, proven
    found = (bind_dim(np.maximum(lo, 0), n), bound_step, bind_dim(length, longest))
    ctx.remember(key, found)
    return found


def _longest(start: Any, stop: Any, step: int | Tracer, n: DimExpr) -> DimExpr:
    """At most how long a slice with runtime bounds is: the axis, or for ``x[i:i + w]``
    (step 1) with ``w >= 0`` at most ``w``, whatever the signs of ``i`` and ``i + w``
    (clamping only shortens it). A negative ``w`` can still select most of the axis
    (``x[0:-1]``)."""
    gap = constant_gap(start, stop) if isinstance(start, Tracer) \
        and isinstance(stop, Tracer) and isinstance(step, int) and step == 1 else None
    return n if gap is None else if_neg(gap, n, minimum(n, gap))


def _integer(value: Tracer) -> Tracer:
    """A slice index or step as int64 (Python's TypeError for anything but integers)."""
    if value.ndim or value.dtype.kind not in "iu":
        what = f"{value.dtype} values" if value.ndim == 0 else "arrays"
        raise current().error(f"slice indices must be integers, not {what}")
    return lax.convert(value, np.dtype(np.int64))


def _bound_key(bound: Any) -> Any:
    """What identifies a slice bound's value: a traced value by its variable."""
    return ("value", bound.atom) if isinstance(bound, Tracer) else bound


def _expand_key(key: Any, ndim: int) -> list[Any]:
    items = list(key) if isinstance(key, tuple) else [key]
    if any(isinstance(k, (list, np.ndarray, Tracer)) and not _is_scalar_index(k) for k in items):
        raise current().error(
            "arrays used as indices must be integer arrays, or one boolean mask alone",
            hint="convert with .astype(np.int64), or select with np.where(mask, x, fill)",
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


def _runtime_index(index: Tracer, n: DimExpr, axis: int) -> DimExpr:
    """A runtime integer index on an axis of size ``n``: checked (IndexError as NumPy),
    negatives counted from the end, and bound as a size, so ``x[i]`` is a view whose
    writes reach ``x`` like any other."""
    ctx = current()
    key = ("index", index.atom, n)
    found = ctx.remembered(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    i = lax.convert(index, np.dtype(np.int64))
    size = dim_value(n)
    bad = np.logical_or(i >= size, i < -size)
    lax.bind(raise_if_p, bad.atom, i.atom, lax.convert(size, np.dtype(np.int64)).atom,
             error="IndexError",
             message=f"index {{lhs}} is out of bounds for axis {axis} with size {{rhs}}")
    found = bind_dim(where(i < 0, i + size, i), n)
    ctx.remember(key, found)
    return found


def getitem(x: Tracer, key: Any, as_view: bool = False) -> Any:
    """``x[key]``; with ``as_view``, a view even where NumPy gives a scalar (for writes)."""
    if is_mask_key(key):
        return read_masked(x, key)
    ctx = current()
    items = _expand_key(key, x.ndim)
    starts: list[DimExpr] = []
    steps: list[Step] = []
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
        elif is_runtime_index(item):
            starts.append(_runtime_index(item, n, axis))
            steps.append(1)
            sizes.append(ONE)
        else:
            i = _static_int(item, "index")
            assert i is not None
            if abs(i) > SYMBOL_LIMIT:  # beyond every axis: NumPy's error when it is called
                message = _NOT_AN_INDEX if not -2**63 <= i < 2**63 else \
                    f"index {i} is out of bounds for axis {axis} with size {{rhs}}"
                ctx.check("<", DimExpr.const(SYMBOL_LIMIT), n, "IndexError", message)
                i = 0
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
    if result.ndim == 0 and not as_view and all(not isinstance(item, slice) and item is not None
                                for item in (key if isinstance(key, tuple) else (key,))):
        return result  # integers on every axis: a scalar, a copy in NumPy too
    return make_view(x, result, lambda w: w.sliced(tuple(starts), tuple(steps), tuple(sizes))
                     .reshaped(tuple(final)))


def is_mask_key(key: Any) -> bool:
    """A boolean array used as an index (``x[mask]``)."""
    return isinstance(key, MaskedValue) or (
        isinstance(key, Tracer) and key.dtype == np.bool_ and key.ndim > 0) or (
        isinstance(key, np.ndarray) and key.dtype == np.bool_)
