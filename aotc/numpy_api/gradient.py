"""``np.gradient`` with uniform spacing: NumPy's formulas, slice for slice.

Inside, second-order central differences ``(f[2:] - f[:-2]) / (2. * dx)``; at the edges
first-order one-sided differences ``(f[1] - f[0]) / dx`` (``edge_order=1``) or NumPy's
second-order three-point formulas (``edge_order=2``). As in NumPy, integer data is
converted to float64 first, the result has the data's float dtype (a float32 array stays
float32 whatever the spacing's type), and the spacing is used as given (a Python float
is weak). One array per axis: a tuple of them for several axes, as NumPy's. Spacing by
coordinate arrays (non-uniform) is not supported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .joining import concatenate
from .shaping import expand_dims, normalize_axes
from .ufuncs import apply_ufunc

F64 = np.dtype(np.float64)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _spacings(varargs: tuple[Any, ...], count: int) -> list[Any]:
    if not varargs:
        return [1.0] * count
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0 and not (
            isinstance(varargs[0], Tracer) and varargs[0].ndim):
        return list(varargs) * count
    if len(varargs) != count:
        raise current().error("invalid number of arguments")
    for dx in varargs:
        if np.ndim(dx) != 0 or (isinstance(dx, Tracer) and dx.ndim):
            raise current().error("np.gradient with coordinate arrays (non-uniform spacing) "
                                  "is not supported", hint="pass one scalar spacing per axis")
    return list(varargs)


def _along(f: Tracer, axis: int, index: Any) -> Tracer:
    return cast(Tracer, f[(slice(None),) * axis + (index,)])


def _one_axis(f: Tracer, axis: int, dx: Any, edge_order: int, otype: np.dtype) -> Tracer:
    n = f.aval.shape[axis]
    least = edge_order + 1
    message = ("Shape of array too small to calculate a numerical gradient, at least "
               "(edge_order + 1) elements are required.")
    if n.is_const and n.value < least:
        raise current().error(message)
    current().check(">=", n, DimExpr.const(least), "ValueError", message)
    inner = _u(np.true_divide, _u(np.subtract, _along(f, axis, slice(2, None)),
                                  _along(f, axis, slice(None, -2))), _u(np.multiply, 2.0, dx))
    if edge_order == 1:
        first = _u(np.true_divide, _u(np.subtract, _along(f, axis, 1), _along(f, axis, 0)), dx)
        last = _u(np.true_divide, _u(np.subtract, _along(f, axis, -1), _along(f, axis, -2)),
                  dx)
    else:
        first = _three(f, axis, (0, 1, 2), (-1.5, 2.0, -0.5), dx)
        last = _three(f, axis, (-3, -2, -1), (0.5, -2.0, 1.5), dx)
    pieces = [expand_dims(lax.convert(first, otype), axis), lax.convert(inner, otype),
              expand_dims(lax.convert(last, otype), axis)]
    return concatenate(pieces, axis=axis)


def _three(f: Tracer, axis: int, at: tuple[int, int, int], weights: tuple[float, ...],
           dx: Any) -> Tracer:
    """NumPy's ``a * f[i] + b * f[j] + c * f[k]`` with ``a = weight / dx``..."""
    terms = [_u(np.multiply, _u(np.true_divide, w, dx), _along(f, axis, i))
             for i, w in zip(at, weights, strict=True)]
    return _u(np.add, _u(np.add, terms[0], terms[1]), terms[2])


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    x = as_tracer(f)
    given = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    normalize_axes(given, x.ndim)  # the checks
    axes = tuple(int(a) % x.ndim for a in given) if isinstance(given, tuple) else \
        normalize_axes(given, x.ndim)
    if edge_order not in (1, 2):
        raise current().error("'edge_order' greater than 2 not supported" if edge_order > 2
                              else "np.gradient: edge_order must be 1 or 2")
    otype = x.dtype
    if x.dtype.kind == "c":
        raise current().error("np.gradient of complex values is not supported yet")
    if x.dtype.kind in "biu":
        if x.dtype.kind != "b":
            x = lax.convert(x, F64)
        otype = F64
    spacings = _spacings(varargs, len(axes))
    results = [_one_axis(x, ax, dx, edge_order, otype)
               for ax, dx in zip(axes, spacings, strict=True)]
    return results[0] if len(results) == 1 else tuple(results)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {np.gradient: gradient}
