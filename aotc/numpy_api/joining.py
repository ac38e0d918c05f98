"""Joining, repeating and reordering arrays, as decompositions.

``concatenate`` is the one joining primitive (``stack``, ``hstack``, ``vstack`` add
axes first); ``tile`` is a broadcast and a reshape; ``roll`` is a
``take`` with indices computed modulo the axis length, so it works for runtime sizes;
``flip`` and ``diff`` are slices; ``cumsum``/``cumprod`` are scans.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..lax import as_dim
from ..ops.index import take_p
from ..ops.reduce import CUMULATIVE
from ..ops.shape import concatenate_p
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, bind_dim, current
from .creation import LAYOUT, full_from_dims
from .functions_base import check_cast, reject_unsupported
from .reductions import sum_dtype
from .shaping import as_count, expand_dims, normalize_axes, ravel, transpose
from .ufuncs import apply_ufunc, broadcast_into, promote_types
from .views import layout_view

ONE = DimExpr.const(1)


def _axis(axis: Any, ndim: int) -> int:
    return normalize_axes(axis, ndim)[0]


def _cast(x: Tracer, dtype: Any, casting: str, name: str) -> Tracer:
    """``x`` in ``dtype`` if one is given, by NumPy's ``casting`` rule."""
    if dtype is None:
        return x
    check_cast(x.dtype, np.dtype(dtype), casting, name)
    return lax.convert(x, np.dtype(dtype))


def _rows_joined(rows: Tracer, axis: Any, dtype: Any, casting: str) -> Tracer:
    """``np.concatenate(a, axis)`` of one array ``a`` (a list of arrays the kernel grew,
    laid out): NumPy joins its items ``a[0], a[1]...``, so item axis ``axis`` becomes
    ``len(a)`` times longer. An empty ``a`` is NumPy's ValueError."""
    ctx = current()
    if rows.ndim < 2:
        raise ctx.error("zero-dimensional arrays cannot be concatenated")
    ctx.check(">=", rows.aval.shape[0], DimExpr.const(1), "ValueError",
              "need at least one array to concatenate")
    rows = _cast(rows, dtype, casting, "np.concatenate")
    if axis is None:
        return ravel(rows)
    k = _axis(axis, rows.ndim - 1)
    moved = moveaxis(rows, 0, k)
    shape = moved.aval.shape
    return lax.reshape(moved, shape[:k] + (shape[k] * shape[k + 1],) + shape[k + 2:])


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None,
                casting: str = "same_kind") -> Tracer:
    ctx = current()
    if out is not None:
        raise ctx.error("np.concatenate: out= is not supported")
    if isinstance(arrays, Tracer):
        return _rows_joined(arrays, axis, dtype, casting)
    items = [as_tracer(a) for a in arrays]
    if not items:
        raise ctx.error("need at least one array to concatenate")
    if axis is None:
        items, axis = [ravel(a) for a in items], 0
    target = np.dtype(dtype) if dtype is not None else promote_types(*items)
    for a in items:
        check_cast(a.dtype, target, casting, "np.concatenate")
    items = [lax.convert(a, target) for a in items]
    if len({a.ndim for a in items}) != 1:
        raise ctx.error("all the input arrays must have the same number of dimensions")
    ax = _axis(axis, items[0].ndim)
    first = items[0].aval.shape
    fixed = []
    for a in items:
        shape = list(a.aval.shape)
        for i, d in enumerate(shape):
            if i != ax and d != first[i]:
                ctx.check("==", d, first[i], "ValueError",
                          f"all the input array dimensions except for the concatenation "
                          f"axis must match exactly, but along dimension {i} the sizes "
                          "are {lhs} and {rhs}")
                shape[i] = first[i]
        fixed.append(lax.refine_shape(a, tuple(shape)))
    if len(fixed) == 1:
        return fixed[0]
    return lax.bind1(concatenate_p, *(a.atom for a in fixed), axis=ax)


def stack(arrays: Any, axis: int = 0, out: Any = None, dtype: Any = None,
          casting: str = "same_kind") -> Tracer:
    if isinstance(arrays, Tracer):  # its items along a new axis: that axis moved there
        current().check(">=", arrays.aval.shape[0] if arrays.ndim else ONE,
                        DimExpr.const(1), "ValueError", "need at least one array to stack")
        arrays = _cast(arrays, dtype, casting, "np.stack")
        return copy(moveaxis(arrays, 0, _axis(axis, arrays.ndim)))
    items = [as_tracer(a) for a in arrays]
    ndim = items[0].ndim + 1 if items else 1
    ax = _axis(axis, ndim)
    return concatenate([expand_dims(a, ax) for a in items], axis=ax, out=out, dtype=dtype,
                       casting=casting)


def hstack(tup: Any, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    if isinstance(tup, Tracer):  # its items, joined (those of a 1-d array are numbers)
        rows = tup if tup.ndim > 1 else lax.reshape(tup, tup.aval.shape + (ONE,))
        return _rows_joined(rows, 0 if rows.ndim == 2 else 1, dtype, casting)
    items = [atleast_1d(a) for a in tup]
    return concatenate(items, axis=0 if items[0].ndim == 1 else 1, dtype=dtype,
                       casting=casting)


def vstack(tup: Any, dtype: Any = None, casting: str = "same_kind") -> Tracer:
    if isinstance(tup, Tracer):  # its items, each at least 2-d (a number is 1 x 1)
        shape = tup.aval.shape
        item = shape[1:] if tup.ndim > 2 else (ONE,) * (3 - tup.ndim) + shape[1:]
        return _rows_joined(lax.reshape(tup, shape[:1] + item), 0, dtype, casting)
    return concatenate([atleast_2d(a) for a in tup], axis=0, dtype=dtype, casting=casting)


def column_stack(tup: Any) -> Tracer:
    """1-D arrays become the columns of a 2-D array (as ``ndmin=2`` and ``.T``)."""
    items = [as_tracer(a) for a in tup]
    return concatenate([transpose(atleast_2d(a)) if a.ndim < 2 else a for a in items], axis=1)


def dstack(tup: Any) -> Tracer:
    return concatenate([atleast_3d(a) for a in tup], axis=2)


# (each a view of its argument, as NumPy's: a write into it reaches the argument)

def atleast_1d(a: Any) -> Tracer:
    x = as_tracer(a)
    return expand_dims(x, 0) if x.ndim == 0 else x


def atleast_2d(a: Any) -> Tracer:
    x = as_tracer(a)
    return expand_dims(x, tuple(range(2 - x.ndim))) if x.ndim < 2 else x


def atleast_3d(a: Any) -> Tracer:
    """NumPy's rule: ``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` becomes ``(M, N, 1)``."""
    x = as_tracer(a)
    added = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(x.ndim, ())
    return expand_dims(x, added) if added else x


def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Tracer:
    x = as_tracer(array)
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    dims = tuple(as_dim(s) for s in items)
    if len(dims) < x.ndim:
        raise current().error("np.broadcast_to: the new shape has fewer dimensions")
    message = "operands could not be broadcast to the requested shape: size {lhs} against {rhs}"
    return layout_view(x, broadcast_into(x, dims, message))


def tile(A: Any, reps: Any) -> Tracer:
    x = as_tracer(A)
    given = list(reps) if isinstance(reps, (tuple, list)) else [reps]
    ndim = max(x.ndim, len(given))
    given = [1] * (ndim - len(given)) + given
    x = lax.reshape(x, (ONE,) * (ndim - x.ndim) + x.aval.shape)
    counts = [as_count(r, n, "repetition count") for r, n in zip(given, x.aval.shape,
                                                                   strict=True)]
    # (r0, n0, r1, n1, ...) then merge pairs: each row of copies is the whole input.
    spread = []
    for r, n in zip(counts, x.aval.shape, strict=True):
        spread += [r, n]
    b = lax.broadcast_in_dim(x, tuple(spread), tuple(range(1, 2 * ndim, 2)))
    return lax.reshape(b, tuple(r * n for r, n in zip(counts, x.aval.shape, strict=True)))


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Tracer:
    if out is not None or mode != "raise":
        raise current().error("np.take: only mode='raise' without out= is supported")
    x = as_tracer(a)
    if axis is None:
        x, axis = ravel(x), 0
    idx = as_tracer(indices)
    if idx.dtype.kind not in "iu":
        raise current().error("np.take: indices must be integers")
    return lax.bind1(take_p, x.atom, idx.atom, axis=_axis(axis, x.ndim))


def roll(a: Any, shift: Any, axis: Any = None) -> Tracer:
    x = as_tracer(a)
    if axis is None:
        return lax.reshape(roll(ravel(x), shift, 0), x.aval.shape)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    # NumPy broadcasts one against the other: roll(x, 1, axis=(0, 1)) rolls both axes.
    if len(shifts) == 1:
        shifts *= len(axes)
    elif len(axes) == 1:
        axes *= len(shifts)
    if len(shifts) != len(axes):
        raise current().error(f"np.roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, ax in zip(shifts, axes, strict=True):
        ax = _axis(ax, x.ndim)
        # The last s mod n elements, then the rest: two contiguous runs, not a gather
        # through a remainder per element. (np.remainder is Python's modulo: never
        # negative; n = 0 leaves nothing to roll.) The split k is a size in [0, n], so
        # the two runs are (n - k) + k = n long.
        n = x.aval.shape[ax]
        length = lax.dim_value(n)
        rest = apply_ufunc(np.remainder, s, apply_ufunc(np.maximum, length, 1))
        k = bind_dim(apply_ufunc(np.subtract, length, rest), n)
        x = concatenate([_run(x, ax, k, n - k), _run(x, ax, DimExpr.const(0), k)], axis=ax)
    return x


def _run(x: Tracer, axis: int, start: DimExpr, size: DimExpr) -> Tracer:
    """``size`` elements of ``x`` from ``start`` along ``axis`` (sizes kept symbolic)."""
    return lax.slice_(x, tuple(start if a == axis else DimExpr.const(0) for a in range(x.ndim)),
                      (1,) * x.ndim, tuple(size if a == axis else d
                                           for a, d in enumerate(x.aval.shape)))


def flip(m: Any, axis: Any = None) -> Tracer:
    x = as_tracer(m)
    axes = normalize_axes(axis, x.ndim)
    key = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))
    return cast(Tracer, x[key])


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None,
         append: Any = None) -> Tracer:
    """NumPy's ``diff``; ``prepend``/``append`` join ``a`` along ``axis`` first (a scalar
    as one slice of ``a``'s shape), as NumPy's do."""
    x = as_tracer(a)
    ax = _axis(axis, x.ndim)
    if prepend is not None or append is not None:
        shape = x.aval.shape[:ax] + (DimExpr.const(1),) + x.aval.shape[ax + 1:]
        parts = [as_tracer(p) for p in (prepend, x, append) if p is not None]
        parts = [lax.broadcast_to(p, shape) if p.ndim == 0 else p for p in parts]
        x = concatenate(parts, axis=ax)
    op = np.not_equal if x.dtype == np.bool_ else np.subtract
    for _ in range(int(n)):
        upper = tuple(slice(1, None) if i == ax else slice(None) for i in range(x.ndim))
        lower = tuple(slice(None, -1) if i == ax else slice(None) for i in range(x.ndim))
        x = apply_ufunc(op, x[upper], x[lower])
    return x


def _cumulative(name: str) -> Callable[..., Tracer]:
    prim = CUMULATIVE[name]

    def scan(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
        if out is not None:
            raise current().error(f"np.{name}: out= is not supported")
        x = as_tracer(a)
        if axis is None:
            x, axis = ravel(x), 0
        acc = sum_dtype(x.dtype, dtype)
        return lax.bind1(prim, lax.convert(x, acc).atom, axis=_axis(axis, x.ndim))

    scan.__name__ = name
    return scan


cumsum, cumprod = _cumulative("cumsum"), _cumulative("cumprod")


def moveaxis(a: Any, source: Any, destination: Any) -> Tracer:
    x = as_tracer(a)
    src = [int(s) % x.ndim for s in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [int(d) % x.ndim for d in (destination if isinstance(destination, (tuple, list))
                                      else (destination,))]
    if len(src) != len(dst):
        raise current().error("np.moveaxis: `source` and `destination` arguments must have "
                              "the same number of elements")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, tuple(order))


def swapaxes(a: Any, axis1: int, axis2: int) -> Tracer:
    x = as_tracer(a)
    perm = list(range(x.ndim))
    i, j = int(axis1) % x.ndim, int(axis2) % x.ndim
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, tuple(perm))


def copy(a: Any, order: str = "K", subok: bool = False) -> Tracer:
    return lax.fresh(as_tracer(a))


# -- np.array of lists, scalars and small constants ---------------------------------------

def array(obj: Any, dtype: Any = None, *, copy: Any = True, **kwargs: Any) -> Tracer:
    """``np.array``/``np.asarray`` of tracers, scalars and (nested) lists of them."""
    ndmin = kwargs.pop("ndmin", 0)
    reject_unsupported("array", kwargs, LAYOUT)
    if ndmin:
        value = array(obj, dtype, copy=copy)
        return lax.reshape(value, (DimExpr.const(1),) * (int(ndmin) - value.ndim)
                           + value.aval.shape) if value.ndim < ndmin else value
    if isinstance(obj, (list, tuple)):
        if not obj:
            raise current().error("np.array of an empty list: give the size with np.zeros")
        items = [array(o, None, copy=copy) for o in obj]
        value = stack(items)
    else:
        value = constant_array(obj) if isinstance(obj, np.ndarray) else as_tracer(obj)
    if dtype is not None and value.dtype != np.dtype(dtype):
        return lax.convert(value, np.dtype(dtype))
    if value is obj and (copy or value.list_like):  # an array, no longer a Python list
        return lax.fresh(value)
    return value


def asarray(obj: Any, dtype: Any = None, **kwargs: Any) -> Tracer:
    return array(obj, dtype, copy=False, **kwargs)


#: Largest array constant embedded in a kernel (element by element).
MAX_CONSTANT = 256


def constant_array(value: np.ndarray) -> Tracer:
    """A small NumPy array used in a kernel, embedded as data."""
    if value.size > MAX_CONSTANT:
        raise current().error(
            f"an array constant of shape {value.shape} is used in the kernel",
            hint=f"pass the array as a parameter; constants up to {MAX_CONSTANT} elements "
                 "are embedded")
    if value.ndim == 0:
        return as_tracer(value[()])
    return array([constant_array(v) for v in value], copy=False) if value.shape[0] else \
        full_from_dims(tuple(DimExpr.const(d) for d in value.shape), 0, value.dtype)
