"""``np.cross``: cross products of 2- and 3-vectors along an axis, as NumPy computes them.

The vector axes are moved last, both operands promoted to one dtype and the components
computed with NumPy's own expressions (``a1 * b2 - a2 * b1``...; a 2-vector has a zero
third component, and two 2-vectors give the scalar z component). Integers wrap around
in their dtype as in NumPy. The vector length decides the shape of the result, so it
is read from the signature (``f8[:, 2]``); a length the signature leaves open is taken as
3, the common case, and checked when the kernel runs (a ValueError that says to declare
2-vectors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .joining import moveaxis, stack
from .ufuncs import apply_ufunc


def _axis(axis: Any, ndim: int, prefix: str) -> int:
    if isinstance(axis, Tracer) or not isinstance(axis, (int, np.integer)):
        raise current().error(f"np.cross: {prefix} must be a build-time integer")
    if not -ndim <= axis < ndim:
        raise current().error(f"{prefix}: axis {axis} is out of bounds for array of "
                              f"dimension {ndim}")
    return int(axis) % ndim


def _length(x: Tracer) -> int:
    n = x.aval.shape[-1]
    if not n.is_const:
        current().check("==", n, DimExpr.const(3), "ValueError",
                        "np.cross: this kernel was compiled for vectors of length 3 (its "
                        "signature leaves the length open), not {lhs}; declare the length "
                        "in the signature (f8[:, 2]) for 2-vectors")
        return 3
    if n.value not in (2, 3):
        raise current().error("incompatible dimensions for cross product\n"
                              "(dimension must be 2 or 3)")
    return n.value


def cross(a: Any, b: Any, axisa: Any = -1, axisb: Any = -1, axisc: Any = -1,
          axis: Any = None) -> Tracer:
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = as_tracer(a), as_tracer(b)
    if x.ndim < 1 or y.ndim < 1:
        raise current().error("At least one array has zero dimension")
    x = moveaxis(x, _axis(axisa, x.ndim, "axisa"), -1)
    y = moveaxis(y, _axis(axisb, y.ndim, "axisb"), -1)
    na, nb = _length(x), _length(y)
    dtype = np.promote_types(x.dtype, y.dtype)
    if dtype == np.bool_:
        raise current().error("numpy boolean subtract, the `-` operator, is not supported, "
                              "use the bitwise_xor, the `^` operator, or the logical_xor "
                              "function instead.")
    x, y = lax.convert(x, dtype), lax.convert(y, dtype)

    def mul(p: Tracer, q: Tracer) -> Tracer:
        return apply_ufunc(np.multiply, p, q)

    def sub(p: Tracer, q: Tracer) -> Tracer:
        return apply_ufunc(np.subtract, p, q)

    a0, a1, b0, b1 = x[..., 0], x[..., 1], y[..., 0], y[..., 1]
    z = sub(mul(a0, b1), mul(a1, b0))
    if na == 2 and nb == 2:
        return z
    if na == 2:
        b2 = y[..., 2]
        parts = [mul(a1, b2), apply_ufunc(np.negative, mul(a0, b2)), z]
    elif nb == 2:
        a2 = x[..., 2]
        parts = [apply_ufunc(np.negative, mul(a2, b1)), mul(a2, b0), z]
    else:
        a2, b2 = x[..., 2], y[..., 2]
        parts = [sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)), z]
    cp = stack(parts, axis=-1)
    return moveaxis(cp, -1, _axis(axisc, cp.ndim, "axisc"))
