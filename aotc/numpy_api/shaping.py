"""Shape manipulation: reshape, transpose, ravel, squeeze, expand_dims, astype.

Sizes given by the user may be integers or size values taken from ``x.shape`` and
integer arguments; both become symbolic dimensions.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .. import lax
from ..lax import as_dim, size_value
from ..shapes import DimExpr, bound_symbols, exact_div, relu, size
from ..tracing.tracer import Tracer, as_tracer, bind_dim, current
from .functions_base import check_cast, warn_complex_cast
from .views import make_view


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if isinstance(a, Tracer) or not isinstance(a, (int, np.integer)):
            raise current().error(f"axis {a!r} must be a build-time integer")
        if not -ndim <= a < ndim:
            raise current().error(f"axis {a} is out of bounds for an array of rank {ndim}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise current().error(f"repeated axis in {axis!r}")
    return tuple(sorted(out))


def as_count(value: Any, extent: DimExpr, what: str) -> DimExpr:
    """A repetition count, as NumPy reads it: a negative count is an error only when there
    is something to repeat (``np.repeat(empty, -1)`` is empty), so the check is on the
    product; the count itself is then ``relu(count)``."""
    count = size_value(value, what)
    current().check(">=", extent * count, DimExpr.const(0), "ValueError",
                    "negative dimensions are not allowed")
    return relu(count)


def _shape_arg(args: tuple[Any, ...]) -> list[Any]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def reshape(a: Any, *shape: Any, order: str = "C", newshape: Any = None) -> Tracer:
    ctx = current()
    x = as_tracer(a)
    if order == "F":  # the last axis varies slowest: C order of the axes reversed
        sizes = _shape_arg(shape if newshape is None else (newshape,))
        return transpose(reshape(transpose(x), tuple(reversed(sizes))))
    if order != "C":
        raise ctx.error(f"reshape: order={order!r} follows the memory layout, which only "
                        "the call knows for an argument", hint="give order='C' or 'F'")
    sizes = _shape_arg(shape if newshape is None else (newshape,))
    unknown = [i for i, s in enumerate(sizes) if isinstance(s, (int, np.integer)) and s == -1]
    if len(unknown) > 1:
        raise ctx.error("reshape: can only specify one unknown dimension")
    dims = [None if i in unknown else as_dim(s) for i, s in enumerate(sizes)]
    total = size(x.aval.shape)
    if unknown:
        known = size(tuple(d for d in dims if d is not None))
        inferred = exact_div(total, known)
        if inferred is None:
            if known.is_const and known.value == 0:
                raise ctx.error("reshape: cannot infer the -1 size when another size is 0")
            inferred = total // known.value if known.is_const else _runtime_quotient(
                total, known)
        dims[unknown[0]] = inferred
    new = tuple(d for d in dims if d is not None)
    if size(new) == total:
        return _reshape_view(x, new)
    if (size(new) - total).is_const:
        raise ctx.error(f"cannot reshape an array of size {total} into shape "
                        f"({', '.join(map(str, new))})",
                        hint="write the new sizes in terms of x.shape")
    # Equal only at run time (x.reshape(n, m) with integer arguments): checked there.
    shown = ", ".join("-1" if bound_symbols(d) else str(d) for d in new)
    ctx.check("==", total, size(new), "ValueError",
              f"cannot reshape array of size {{lhs}} into shape ({shown}) (of size {{rhs}})")
    flat = lax.refine_shape(lax.reshape(x, (total,)), (size(new),))
    return _whole(x, make_view(x, lax.reshape(flat, new), lambda w: None))


def _whole(x: Tracer, view: Tracer) -> Tracer:
    """Mark a reshape of all of an array (not itself a view) that writes and reads
    through: one the kernel made is C-contiguous, so NumPy's reshape of it is a view
    (views.whole_reshape); of an argument, where the argument is C-contiguous, which the
    call says (``c_contiguous``)."""
    if view.window is not None or x.base is not None:
        return view
    view.whole_reshape = True
    top = current()
    while top.parent is not None:
        top = top.parent
    view.contiguous_arg = top.argument_index.get(id(x))
    return view


def _runtime_quotient(total: DimExpr, known: DimExpr) -> DimExpr:
    """The -1 size of a reshape when the other sizes are only known at run time: their
    quotient, bound as a size (a remainder fails the reshape's size check)."""
    count = lax.dim_value(total)
    others = lax.dim_value(known)
    safe: Any = np.maximum(others, 1)
    return bind_dim(np.floor_divide(count, safe), total)


def flat(x: Tracer) -> Tracer:
    """``x.flat``: its elements in C order. A write through it always reaches ``x``, an
    array the kernel made or an argument, whatever its memory layout: NumPy's flatiter
    writes into the array, where a ravel may be a copy (a write through ``.flat`` of a
    view of another array stays the located error of a write through any ravel)."""
    view = ravel(x)
    if view is not x and x.base is None:
        view.whole_reshape = True
        view.contiguous_arg = None  # (whatever the layout)
    return view


def _reshape_view(x: Tracer, new: tuple[DimExpr, ...]) -> Tracer:
    result = lax.reshape(x, new)
    return result if result is x else _whole(x, make_view(x, result,
                                                          lambda w: w.reshaped(new)))


def transpose(a: Any, axes: Any = None) -> Tracer:
    x = as_tracer(a)
    if axes is None:
        perm = tuple(reversed(range(x.ndim)))
    else:
        perm = tuple(int(p) % x.ndim if x.ndim else 0 for p in
                     (axes if isinstance(axes, (tuple, list)) else (axes,)))
        if sorted(perm) != list(range(x.ndim)):
            raise current().error(f"transpose: axes {axes!r} are not a permutation")
    result = lax.transpose(x, perm)
    return result if result is x else make_view(x, result, lambda w: w.transposed(perm))


def ravel(a: Any, order: str = "C") -> Tracer:
    """``np.ravel``: a view where the array is C-contiguous, else a copy (NumPy's
    ``reshape(-1)`` is a view in more cases)."""
    x = as_tracer(a)
    flat = reshape(x, -1, order=order)
    if flat is not x and flat.contiguous_arg is not None:
        flat.copies_otherwise = True
    return flat


def flatten(a: Any, order: str = "C") -> Tracer:
    """``ndarray.flatten``: always a copy (``ravel`` is a view where it can be)."""
    return lax.fresh(ravel(a, order))


def squeeze(a: Any, axis: Any = None) -> Tracer:
    """Drop size-1 axes. Without ``axis`` the rank would depend on runtime sizes, so
    every axis must then be of build-time size."""
    ctx = current()
    x = as_tracer(a)
    shape = x.aval.shape
    if axis is None:
        if not all(d.is_const for d in shape):
            raise ctx.error("np.squeeze without axis= on an array whose sizes are known only "
                            "at run time: the result's rank would depend on them",
                            hint="name the axes to drop: np.squeeze(x, axis=0)")
        drop = {i for i, d in enumerate(shape) if d.value == 1}
    else:
        drop = set(normalize_axes(axis, x.ndim))
        for i in sorted(drop):
            ctx.check("==", shape[i], DimExpr.const(1), "ValueError",
                      "cannot select an axis to squeeze out which has size {lhs}, not 1")
        shape = tuple(DimExpr.const(1) if i in drop else d for i, d in enumerate(shape))
        refined = lax.refine_shape(x, shape)
        if refined is not x:
            x = make_view(x, refined, lambda w: replace(w, view_shape=shape) if w else None)
    return _reshape_view(x, tuple(d for i, d in enumerate(shape) if i not in drop))


def expand_dims(a: Any, axis: Any) -> Tracer:
    x = as_tracer(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    where = {int(i) % ndim for i in axes}
    it = iter(x.aval.shape)
    return _reshape_view(x, tuple(DimExpr.const(1) if i in where else next(it)
                                  for i in range(ndim)))


def astype(a: Any, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
           copy: bool = True) -> Tracer:
    """``x.astype(t)``; ``order`` is only a layout (the values are the same), ``casting``
    is checked as NumPy checks it."""
    x = as_tracer(a)
    target = np.dtype(dtype)
    check_cast(x.dtype, target, casting, "astype")
    warn_complex_cast(x.dtype, target)
    if x.dtype == target:  # a copy, and a typed one: astype makes a weak scalar strong
        return Tracer(x.atom, x.dim, weak=False)
    return lax.convert(x, target)
