"""Python's builtins on traced values: what ``min``, ``max``, ``sum``, ``int``... mean
there. Each falls back to the builtin itself on build-time values.

Reductions over an array or a runtime sequence reduce along its first axis, as Python's
loop over its rows would (``sum`` keeps the dtype of the items, as repeated ``+`` does;
the order of float additions is NumPy's pairwise one).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..trace import Tracer, current
from .sequences import RuntimeSeq, sequence


def _traced(*values: Any) -> bool:
    return any(isinstance(v, (Tracer, RuntimeSeq)) for v in values)


def _items(value: Any) -> Any:
    """An iterable of traced items as one array, its items along axis 0."""
    seq = sequence(value)
    if isinstance(seq, RuntimeSeq):
        items = seq.unrolled()
        return np.stack(items) if items is not None else seq.stacked(lambda v: v)
    return value


def _extreme(pick: Callable[[Any, Any], Any], builtin: Callable[..., Any],
             reduce: Callable[..., Any]) -> Callable[..., Any]:
    """``min``/``max``: of several values (Python's rule: keep the first unless a later one
    is better), or of one iterable's items."""
    def extreme(*args: Any, **kwargs: Any) -> Any:
        if kwargs or not _traced(*args):
            return builtin(*args, **kwargs)
        if len(args) == 1:
            return reduce(_items(args[0]), axis=0)
        best = args[0]
        for a in args[1:]:
            best = np.where(pick(a, best), a, best)
        return best
    return extreme


def _sum(iterable: Any, start: Any = 0) -> Any:
    if not _traced(iterable):
        return builtins.sum(iterable, start)
    items = _items(iterable)
    dtype = np.dtype(np.int64) if items.dtype == np.bool_ else items.dtype
    return np.add(start, np.add.reduce(items.astype(dtype), axis=0, dtype=dtype))


def _truth(reduce: Callable[..., Any], builtin: Callable[..., Any]) -> Callable[..., Any]:
    def truth(iterable: Any) -> Any:
        if not _traced(iterable):
            return builtin(iterable)
        return reduce(_items(iterable), axis=0)
    return truth


def _scalar_conversion(python: type, dtype: Any) -> Callable[..., Any]:
    def convert(*args: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], Tracer):
            x = args[0]
            if x.ndim != 0:
                raise current().error(f"{python.__name__}() of an array with more than "
                                      "one element")
            if python is bool:
                return np.not_equal(x, 0)
            if python is int and x.dtype.kind == "f":
                x = np.trunc(x)  # type: ignore[assignment]  # a Tracer, by __array_ufunc__
            out = lax.convert(x, np.dtype(dtype))
            out.weak = True  # a Python number, as the builtin returns
            return out
        return python(*args)
    return convert


def _round(number: Any, ndigits: Any = None) -> Any:
    if not isinstance(number, Tracer):
        return builtins.round(number, ndigits) if ndigits is not None else builtins.round(number)
    if ndigits is None:
        return _scalar_conversion(int, np.int64)(np.rint(number))
    return np.round(number, ndigits)


#: Builtins replaced inside converted kernels; each falls back to Python's own.
BUILTINS: dict[Callable[..., Any], Callable[..., Any]] = {
    builtins.min: _extreme(np.less, builtins.min, np.min),
    builtins.max: _extreme(np.greater, builtins.max, np.max),
    builtins.sum: _sum,
    builtins.any: _truth(np.any, builtins.any), builtins.all: _truth(np.all, builtins.all),
    builtins.float: _scalar_conversion(float, np.float64),
    builtins.int: _scalar_conversion(int, np.int64),
    builtins.bool: _scalar_conversion(bool, np.bool_), builtins.round: _round,
}
