"""Writes by position or mask (``np.put``, ``np.putmask``, ``np.place``), ``np.choose``,
``np.piecewise`` and ``np.lexsort``, each the way NumPy defines it.

- ``put(a, ind, v)`` writes ``v`` (repeated as needed) at the flat positions ``ind`` of
  ``a``: the positions unraveled, then a fancy-index write (a later duplicate wins, an
  out-of-range position is NumPy's IndexError; ``mode='wrap'``/``'clip'`` as NumPy).
- ``putmask(a, mask, values)`` gives position ``i`` of ``a`` (flat, C order) the value
  ``values.flat[i % len(values)]`` where ``mask`` holds; ``place(arr, mask, vals)``
  gives the ``k``-th selected position ``vals[k % len(vals)]`` (a count, not a position).
- ``choose(a, choices)`` picks ``choices[a[i]][i]`` after broadcasting all of them.
- ``piecewise(x, condlist, funclist)`` evaluates each function on the whole of ``x`` and
  keeps its values where its condition holds, later conditions winning, in ``x``'s dtype.
  NumPy passes ``x[cond]``: the same for the elementwise functions piecewise is for.
- ``lexsort(keys)`` sorts by the last key, then the one before...: a stable argsort by
  each key, first to last, each applied to the order so far.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..shapes import size
from ..tracing.tracer import DISPATCH, Tracer, as_tracer, current
from .creation import iota
from .fancy import setitem_any
from .functions_base import where
from .histograms import raise_if
from .indices import raise_first, unravel_index
from .joining import broadcast_to, concatenate, cumsum, take
from .reductions import any_
from .shaping import ravel
from .sorting import argsort
from .statistics import clip
from .ufuncs import apply_ufunc, broadcast_all
from .writes import write

I64 = np.dtype(np.int64)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _array_argument(a: Any, name: str) -> Tracer:
    if not isinstance(a, Tracer):
        raise current().error(f"{name}: the array written into must be an array of the "
                              "kernel (an argument or a new array)")
    return a


def _cycled(values: Any, count: Any, dtype: np.dtype, what: str) -> Tracer:
    """``values.flat[k % len(values)]`` for the int64 positions ``count``."""
    flat = ravel(lax.convert(as_tracer(values), dtype))
    n = lax.dim_value(flat.aval.shape[0])
    raise_if(_u(np.logical_and, n == 0, any_(count >= 0)),
             f"Cannot {what} from an empty array!")
    # A zero after the values: empty values are fine where nothing is selected (-1).
    padded = concatenate([flat, lax.convert(as_tracer(0), dtype)[None]])
    return take(padded, where(count >= 0, _u(np.remainder, count, _u(np.maximum, n, 1)), n))


def _in_mode(index: Tracer, count: Any, mode: Any) -> Tracer:
    """NumPy's ``mode`` for indices into ``count`` items: ``'wrap'`` takes them modulo
    ``count``, ``'clip'`` clamps them; ``'raise'`` leaves them to the caller's check."""
    if mode == "wrap":
        return _u(np.remainder, index, _u(np.maximum, count, 1))
    if mode == "clip":
        return clip(index, 0, count - 1)
    if mode != "raise":
        raise current().error(f"clipmode must be one of 'clip', 'raise', or 'wrap' "
                              f"(got {mode!r})")
    return index


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    target = _array_argument(a, "np.put")
    positions = ravel(lax.convert(as_tracer(ind), I64))
    total = lax.dim_value(size(target.aval.shape))
    positions = _in_mode(positions, total, mode)
    raise_first(_u(np.logical_or, positions >= total, positions < -total), positions,
                size(target.aval.shape), "index {lhs} is out of bounds for axis 0 with size "
                "{rhs}", "IndexError")
    positions = where(positions < 0, positions + total, positions)
    values = _cycled(v, iota(I64, positions.aval.shape, 0), target.dtype, "put")
    key = unravel_index(positions, target.shape) if target.ndim > 1 else positions
    setitem_any(target, key, values)


def putmask(a: Any, mask: Any, values: Any) -> None:
    target = _array_argument(a, "np.putmask")
    where_ = broadcast_to(as_tracer(mask), target.shape)
    position = lax.reshape(iota(I64, (size(target.aval.shape),), 0), target.aval.shape)
    fill = _cycled(values, where(where_, position, -1), target.dtype, "putmask")
    write(target, Ellipsis, where(where_, fill, target))


def place(arr: Any, mask: Any, vals: Any) -> None:
    target = _array_argument(arr, "np.place")
    chosen = lax.convert(ravel(broadcast_to(as_tracer(mask), target.shape)), I64)
    rank = cumsum(chosen) - 1
    fill = _cycled(vals, where(chosen == 1, rank, -1), target.dtype, "insert")
    flat = where(chosen == 1, fill, ravel(target))
    write(target, Ellipsis, lax.reshape(flat, target.aval.shape))


def _sequence(values: Any, what: str) -> list[Tracer]:
    """A list of arrays, or the rows of an array whose first size is known at build time."""
    if isinstance(values, Tracer):
        first = values.aval.shape[0] if values.ndim else None
        if first is None or not first.is_const:
            raise current().error(f"{what} must be a sequence of arrays of a length known "
                                  "when the kernel is built")
        return [values[k] for k in range(first.value)]
    items = [as_tracer(v) for v in values]
    if not items:
        raise current().error(f"{what} must not be empty")
    return items


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Tracer:
    ctx = current()
    if out is not None:
        raise ctx.error("np.choose: out= is not supported")
    options = _sequence(choices, "np.choose: choices")
    index = lax.convert(as_tracer(a), I64)
    n = len(options)
    index = _in_mode(index, n, mode)
    if mode == "raise":
        raise_if(_u(np.logical_or, index < 0, index >= n), "invalid entry in choice array")
    index, *arrays = broadcast_all([index, *(as_tracer(c) for c in options)], scalars=True)
    dtype = np.result_type(*(c.dtype for c in arrays))
    result = lax.convert(arrays[-1], dtype)
    for k in range(n - 2, -1, -1):
        result = where(index == k, lax.convert(arrays[k], dtype), result)
    return result


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Tracer:
    call = DISPATCH.get("call_user")
    v = as_tracer(x)
    conditions = [condlist] if _one_condition(condlist, v) else list(condlist)
    functions = list(funclist)
    ctx = current()
    if len(functions) == len(conditions) + 1:
        others = _u(np.logical_not, _any_of(conditions))
        conditions.append(others)
    elif len(functions) != len(conditions):
        raise ctx.error(f"with {len(conditions)} condition(s), either {len(conditions)} or "
                        f"{len(conditions) + 1} functions are expected")
    result = lax.broadcast_to(lax.convert(as_tracer(0), v.dtype), v.aval.shape)
    for cond, fn in zip(conditions, functions, strict=True):
        value = call(fn, v, *args, **kw) if callable(fn) else fn
        result = where(broadcast_to(as_tracer(cond), v.shape),
                       lax.convert(as_tracer(value), v.dtype), result)
    return result


def _one_condition(condlist: Any, x: Tracer) -> bool:
    """NumPy's test: a bool scalar, or an array of x's rank, is one condition."""
    if isinstance(condlist, (bool, np.bool_)):
        return True
    if isinstance(condlist, (Tracer, np.ndarray)):
        return condlist.ndim == 0 or (x.ndim > 0 and condlist.ndim == x.ndim)
    return False


def _any_of(conditions: list[Any]) -> Tracer:
    result = as_tracer(conditions[0])
    for cond in conditions[1:]:
        result = _u(np.logical_or, result, cond)
    return result


def lexsort(keys: Any, axis: Any = -1) -> Tracer:
    ctx = current()
    columns = _sequence(keys, "np.lexsort: keys")
    if any(c.ndim != 1 for c in columns) or axis not in (-1, 0):
        raise ctx.error("np.lexsort: only 1-D keys are supported")
    columns = broadcast_all(columns)
    order = argsort(columns[0], kind="stable")
    for key in columns[1:]:
        order = take(order, argsort(take(key, order), kind="stable"))
    return order


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.put: put, np.putmask: putmask, np.place: place, np.choose: choose,
    np.piecewise: piecewise,
}
#: Stand-ins for any call: NumPy dispatches ``lexsort([a, b])`` on the list, not its items.
CREATION: dict[Callable[..., Any], Callable[..., Any]] = {np.lexsort: lexsort}
