"""Functions that rearrange arrays, each NumPy's own definition in the primitives that
already exist: ``flipud``, ``fliplr``, ``rot90``, ``matrix_transpose``,
``broadcast_arrays``, ``diagflat``, ``resize``, ``block``, ``take_along_axis``,
``put_along_axis``, ``sliding_window_view`` and ``np.repeat`` with a count per element.

``take_along_axis`` builds NumPy's fancy index (``arange`` of every other axis, shaped to
broadcast, and the given indices on the axis), so it reads, checks bounds and raises as
``a[index]`` does; ``put_along_axis`` writes through the same index.
``sliding_window_view`` gathers the windows (``x[i + j]`` for window ``i``, offset
``j``): NumPy's is a read-only view, so no write can tell a copy from it. ``resize`` repeats
the flattened array cyclically (``np.resize``, not ``ndarray.resize``), ``block`` joins
the innermost lists along the last axis, the next ones along the axis before it.

``np.repeat(a, counts)`` is as long as ``counts`` sums to: a size computed before the
kernel runs (:mod:`aotc.tracing.derived`), so the counts must be build-time values or come from
the arguments alone, as ``np.bincount``'s length.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.index import raise_if_p, take_p
from ..shapes import DimExpr, size
from ..tracing.derived import derived_size
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import full_from_dims, iota
from .diagonals import diag
from .fancy import setitem_any
from .functions_base import where
from .histograms import raise_if
from .joining import concatenate, flip, moveaxis, swapaxes, take
from .reductions import sum_
from .shaping import as_count, normalize_axes, ravel
from .ufuncs import apply_ufunc, broadcast_all

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)


def _at_least(x: Tracer, ndim: int, name: str) -> Tracer:
    if x.ndim < ndim:
        raise current().error(f"{name}: input must be >= {ndim}-d.")
    return x


def flipud(m: Any) -> Tracer:
    return flip(_at_least(as_tracer(m), 1, "np.flipud"), 0)


def fliplr(m: Any) -> Tracer:
    return flip(_at_least(as_tracer(m), 2, "np.fliplr"), 1)


def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Tracer:
    """NumPy's: ``k % 4`` quarter turns from the first axis towards the second."""
    x = as_tracer(m)
    first, second = normalize_axes(tuple(axes), x.ndim)
    if first == second:
        raise current().error("Axes must be different.")
    turns = int(k) % 4
    if turns == 0:
        return lax.fresh(x)
    if turns == 2:
        return flip(flip(x, first), second)
    if turns == 1:
        return swapaxes(flip(x, second), first, second)
    return flip(swapaxes(x, first, second), second)


def matrix_transpose(x: Any) -> Tracer:
    return swapaxes(_at_least(as_tracer(x), 2, "np.matrix_transpose"), -2, -1)


def broadcast_arrays(*args: Any, subok: bool = False) -> tuple[Tracer, ...]:
    return tuple(broadcast_all([as_tracer(a) for a in args]))


def diagflat(v: Any, k: Any = 0) -> Tracer:
    return diag(ravel(as_tracer(v)), k)


def resize(a: Any, new_shape: Any) -> Tracer:
    x = ravel(as_tracer(a))
    shape = tuple(new_shape) if isinstance(new_shape, (tuple, list)) else (new_shape,)
    dims = tuple(lax.as_dim(d, "new_shape") for d in shape)
    total = size(dims)
    count = lax.dim_value(x.aval.shape[0])
    position = iota(I64, (total,), 0) % apply_ufunc(np.maximum, count, 1)  # (empty: none)
    return lax.reshape(take(x, position), dims)


def block(arrays: Any) -> Tracer:
    def depth(item: Any) -> int:
        return 1 + depth(item[0]) if isinstance(item, list) and item else 0

    levels = depth(arrays)
    if levels == 0:
        return lax.fresh(as_tracer(arrays))
    parts = [as_tracer(a) for a in _leaves(arrays)]
    ndim = max(levels, *(p.ndim for p in parts))

    def join(item: Any, level: int) -> Tracer:
        if not isinstance(item, list):
            x = as_tracer(item)
            return lax.reshape(x, (ONE,) * (ndim - x.ndim) + x.aval.shape)
        return concatenate([join(i, level + 1) for i in item], axis=ndim - levels + level)

    return join(arrays, 0)


def _leaves(item: Any) -> list[Any]:
    return [leaf for i in item for leaf in _leaves(i)] if isinstance(item, list) else [item]


def _along_index(arr: Tracer, indices: Tracer, axis: int) -> tuple[Tracer, ...]:
    """NumPy's ``_make_along_axis_idx``: the fancy index of ``take_along_axis``."""
    if indices.dtype.kind not in "iu":
        raise current().error("`indices` must be an integer array")
    if indices.ndim != arr.ndim:
        raise current().error("`indices` and `arr` must have the same number of dimensions")
    key = []
    for k, d in enumerate(arr.aval.shape):
        if k == axis:
            key.append(indices)
        else:
            shape = tuple(d if j == k else ONE for j in range(arr.ndim))
            key.append(lax.reshape(iota(I64, (d,), 0), shape))
    return tuple(key)


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Tracer:
    x, idx = as_tracer(arr), as_tracer(indices)
    if axis is None:
        x, axis = ravel(x), 0
    (ax,) = normalize_axes(axis, x.ndim)
    return cast(Tracer, x[_along_index(x, idx, ax)])


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    if not isinstance(arr, Tracer):
        raise current().error("np.put_along_axis: the array written into must be an array "
                              "of the kernel")
    (ax,) = normalize_axes(axis, arr.ndim)
    setitem_any(arr, _along_index(arr, as_tracer(indices), ax), values)


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *,
                        subok: bool = False, writeable: bool = False) -> Tracer:
    """NumPy's windows: each windowed axis shrinks by its window less one, and the
    window's offsets become new last axes, in the order given."""
    if writeable:
        raise current().error("sliding_window_view: writeable=True is not supported",
                              hint="the windows are a copy here: write into x itself")
    a = as_tracer(x)
    windows = list(window_shape) if isinstance(window_shape, (tuple, list)) else [window_shape]
    if axis is None:
        axes = list(range(a.ndim))
        if len(windows) != a.ndim:
            raise current().error(f"Since axis is `None`, must provide window_shape for all "
                                  f"dimensions of `x`; got {len(windows)} window_shape "
                                  f"elements and `x.ndim` is {a.ndim}.")
    else:
        axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
        if len(axes) != len(windows):
            raise current().error(f"Must provide matching length window_shape and axis; got "
                                  f"{len(windows)} window_shape elements and {len(axes)} "
                                  "axes elements.")
        axes = [normalize_axes(ax, a.ndim)[0] for ax in axes]
    out = a
    for ax, window in zip(axes, windows, strict=True):
        w = lax.as_dim(window, "window_shape")
        current().check(">=", w, DimExpr.const(0), "ValueError",
                        "`window_shape` cannot contain negative values")
        n = out.aval.shape[ax]
        current().check("<=", w, n, "ValueError",
                        "window shape cannot be larger than input array shape")
        starts = iota(np.dtype(np.int64), (n - w + ONE, ONE), 0)
        offsets = iota(np.dtype(np.int64), (ONE, w), 1)
        out = lax.bind1(take_p, out.atom, apply_ufunc(np.add, starts, offsets).atom, axis=ax)
        out = moveaxis(out, ax + 1, -1)
    return out


def repeat(a: Any, repeats: Any, axis: Any = None) -> Tracer:
    x = as_tracer(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axes(axis, x.ndim)[0]
    if (isinstance(repeats, (list, tuple, np.ndarray)) and np.ndim(repeats)) or (
            isinstance(repeats, Tracer) and repeats.ndim):
        return repeat_each(x, repeats, ax)
    shape = x.aval.shape
    k = as_count(repeats, shape[ax], "repeat count")
    spread = shape[:ax + 1] + (k,) + shape[ax + 1:]
    b = lax.broadcast_in_dim(x, spread, tuple(i if i <= ax else i + 1 for i in range(x.ndim)))
    return lax.reshape(b, shape[:ax] + (shape[ax] * k,) + shape[ax + 1:])


def repeat_each(x: Tracer, repeats: Any, axis: int) -> Tracer:
    """``np.repeat(x, repeats, axis)`` with a count per element along ``axis``: each
    element (row) copied its count of times, in order. One count is every element's."""
    ctx = current()
    counts = as_tracer(repeats)
    if counts.dtype.kind not in "iu" or counts.ndim != 1:
        raise ctx.error(f"np.repeat: the counts must be integers, one per element (got "
                        f"{counts.dtype} of {counts.ndim} dimensions)")
    rows = moveaxis(x, axis, 0)
    n = rows.aval.shape[0]
    many, length = lax.dim_value(n), lax.dim_value(counts.aval.shape[0])
    if isinstance(repeats, (list, tuple, np.ndarray)):  # build-time counts
        static = np.maximum(np.asarray(repeats, dtype=np.int64), 0)
        total: DimExpr | None = n * int(static[0]) if static.shape == (1,) else \
            DimExpr.const(int(static.sum()))
    else:
        # Summed from the argument itself: derived sizes follow only scalars and whole
        # reductions of arguments. (Negative counts raise before anything is filled;
        # the clamp only keeps the size valid.)
        kept = apply_ufunc(np.maximum, sum_(counts, dtype=I64), 0)
        total = derived_size(where(apply_ufunc(np.equal, length, 1),
                                   apply_ufunc(np.multiply, kept, many), kept))
    if total is None:
        raise ctx.error("np.repeat with counts computed inside the kernel: the result's "
                        "length (their sum) must be known before the kernel runs",
                        hint="pass the counts as an argument, or build the result with a "
                             "loop into a preallocated array")
    counts = lax.convert(counts, I64)
    one = counts.aval.shape[0] != n
    if one:
        bad = apply_ufunc(np.logical_and, apply_ufunc(np.not_equal, length, many),
                          apply_ufunc(np.not_equal, length, 1))
        lax.bind(raise_if_p, bad.atom, many.atom, length.atom, error="ValueError",
                 message="operands could not be broadcast together with shape ({lhs},) "
                         "({rhs},)")
    raise_if(apply_ufunc(np.less, counts, 0), "repeats may not contain negative values.")
    out = full_from_dims((total, *rows.aval.shape[1:]), 0, x.dtype)

    def element(i: Any, carry: Any) -> Any:
        out, at = carry
        row = rows[i]
        count = counts[apply_ufunc(np.minimum, i, length - 1)] if one else counts[i]

        def copy(r: Any, out: Any) -> Any:
            out[at + r] = row
            return out

        return lax.fori_loop(0, count, copy, out), at + count

    out, _ = lax.fori_loop(0, many, element, (out, np.int64(0)))
    return moveaxis(out, 0, axis)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.flipud: flipud, np.fliplr: fliplr, np.rot90: rot90,
    np.matrix_transpose: matrix_transpose,
    np.broadcast_arrays: broadcast_arrays, np.diagflat: diagflat, np.resize: resize,
    np.block: block, np.take_along_axis: take_along_axis, np.put_along_axis: put_along_axis,
    np.lib.stride_tricks.sliding_window_view: sliding_window_view, np.repeat: repeat,
}
