"""``np.polyval``: Horner's scheme, exactly as NumPy writes it.

``y = zeros_like(x)``, then ``y = y * x + pv`` for each coefficient, highest power
first, so the dtype is NumPy's (x's dtype promoted with p's), ``0 * inf`` makes the
first step NaN for an infinite x as in NumPy, and integers wrap around. Up to
:data:`UNROLL` coefficients of build-time count are unrolled; more, or a count known only
at run time, become a ``fori_loop`` over the coefficients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..shapes import DimExpr
from ..tracer import Tracer, as_tracer, current
from .creation import full_from_dims
from .functions_base import where
from .joining import asarray, concatenate
from .ufuncs import apply_ufunc

#: Coefficient counts known at build time up to this are unrolled.
UNROLL = 32


def polyval(p: Any, x: Any) -> Tracer:
    coeffs = asarray(p)
    if coeffs.ndim == 0:
        raise current().error("iteration over a 0-d array",
                              hint="np.polyval takes a sequence of coefficients")
    xv = as_tracer(x)
    if xv.weak:  # NumPy sees a Python number as a (strong) 0-d array here
        xv = Tracer(xv.atom)
    y = full_from_dims(xv.aval.shape, 0, xv.dtype)

    def horner(y: Tracer, pv: Tracer) -> Tracer:
        return apply_ufunc(np.add, apply_ufunc(np.multiply, y, xv), pv)

    n = coeffs.aval.shape[0]
    if n.is_const and n.value <= UNROLL:
        for i in range(n.value):
            y = horner(y, coeffs[i])
        return y
    if n.is_const:
        y = horner(y, coeffs[0])
    else:  # the first step fixes the dtype; with no coefficients it keeps zeros
        tail = full_from_dims((DimExpr.const(1),) + coeffs.aval.shape[1:], 0, coeffs.dtype)
        first = horner(y, concatenate([coeffs, tail])[0])
        y = where(apply_ufunc(np.greater, lax.dim_value(n), 0), first,
                  lax.convert(y, first.dtype))
    return lax.fori_loop(1, coeffs.shape[0], lambda i, y: horner(y, coeffs[i]), y)
