"""``np.pad``, as a decomposition: one axis at a time, as NumPy pads (so the corners of
a padded matrix come from the rows padded before them).

``constant`` (and ``empty``, whose padding NumPy leaves undefined: zeros here) joins
blocks of the constant on either side of the axis. The other modes read the axis
through an index per output position ``i`` (``j = i - before``, ``n`` the axis length),
one ``take`` along it, so widths and lengths may be sizes known only at run time:

- ``edge``: ``clip(j, 0, n - 1)``;
- ``wrap``: ``j mod n``;
- ``reflect``: period ``p = 2 (n - 1)``, ``t = j mod p``, then ``t`` or ``p - t``
  (the edge is not repeated; a one-element axis repeats it);
- ``symmetric``: period ``2 n``, ``t`` or ``2 n - 1 - t`` (the edge is repeated).

Long pads repeat the pattern, as NumPy's do. Extending an empty axis by any mode but
``constant`` and ``empty`` is NumPy's ValueError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p, take_p
from ..shapes import DimExpr, relu
from ..tracing.bind import size_value
from ..tracing.tracer import Tracer, as_tracer, current, dim_value
from .creation import full_from_dims, iota
from .joining import concatenate

I64 = np.dtype(np.int64)
#: Index maps of the modes that read the array: ``(j, n) -> index``, on int64 tracers.
INDEX_MODES: dict[str, Callable[[Any, Any], Any]] = {
    "edge": lambda j, n: np.clip(j, 0, n - 1),
    "wrap": lambda j, n: np.remainder(j, n),
    "reflect": lambda j, n: _fold(j, n, np.maximum(2 * (n - 1), 1), 0),
    "symmetric": lambda j, n: _fold(j, n, 2 * n, 1),
}
FILL_MODES = ("constant", "empty")


def _fold(j: Any, n: Any, period: Any, repeat: int) -> Any:
    """``j`` within one period: itself on the way out, mirrored on the way back (the
    edge ``repeat``-ed or not)."""
    t = np.remainder(j, period)
    return np.where(t < n, t, period - repeat - t)


def _pairs(value: Any, ndim: int, what: str) -> list[tuple[Any, Any]]:
    """NumPy's reading of ``pad_width`` / ``constant_values``: one value, one
    ``(before, after)`` pair for every axis, or a pair (or one value) per axis."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return [(value, value)] * ndim
    items = list(value)
    if all(not isinstance(v, (list, tuple)) for v in items):
        if len(items) in (1, 2):
            return [(items[0], items[-1])] * ndim
    else:
        rows = [tuple(v) if isinstance(v, (list, tuple)) else (v,) for v in items]
        rows = rows * ndim if len(rows) == 1 else rows
        if len(rows) == ndim and all(len(r) in (1, 2) for r in rows):
            return [(r[0], r[-1]) for r in rows]
    raise current().error(f"np.pad: {what} must be one value, a (before, after) pair, or "
                          f"one of those for each of the {ndim} axes")


def _width(value: Any) -> DimExpr:
    width = size_value(value, "pad width")
    current().check(">=", width, DimExpr.const(0), "ValueError",
                    "index can't contain negative values")
    return relu(width)


def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Tracer:
    ctx = current()
    x = as_tracer(array)
    if not isinstance(mode, str) or mode not in (*INDEX_MODES, *FILL_MODES):
        modes = ", ".join(repr(m) for m in (*FILL_MODES, *INDEX_MODES))
        raise ctx.error(f"np.pad: mode {mode!r} is not supported", hint=f"use one of {modes}")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}}.get(mode, set())
    if set(kwargs) - allowed or kwargs.get("reflect_type", "even") != "even":
        raise ctx.error(f"np.pad: mode {mode!r} does not take {sorted(kwargs)} here",
                        hint="reflect_type='odd' is not supported")
    widths = [(_width(b), _width(a)) for b, a in _pairs(pad_width, x.ndim, "pad_width")]
    values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values")
    for axis, ((before, after), fills) in enumerate(zip(widths, values, strict=True)):
        x = _pad_axis(x, axis, before, after, mode, fills)
    return x


def _pad_axis(x: Tracer, axis: int, before: DimExpr, after: DimExpr, mode: str,
              fills: tuple[Any, Any]) -> Tracer:
    shape = x.aval.shape
    if mode in FILL_MODES:
        blocks = [full_from_dims(shape[:axis] + (w,) + shape[axis + 1:], fill, x.dtype)
                  for w, fill in ((before, fills[0]), (after, fills[1]))]
        return concatenate([blocks[0], x, blocks[1]], axis=axis)
    n = dim_value(shape[axis])
    empty: Any = np.logical_and(np.equal(n, 0), dim_value(before + after) > 0)
    lax.bind(raise_if_p, empty.atom, error="ValueError",
             message=f"can't extend empty axis {axis} using modes other than 'constant' "
                     "or 'empty'")
    total = before + shape[axis] + after
    j = iota(I64, (total,), 0) - dim_value(before)
    index = INDEX_MODES[mode](j, np.maximum(n, 1))
    return lax.bind1(take_p, x.atom, as_tracer(index).atom, axis=axis)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {np.pad: pad}
