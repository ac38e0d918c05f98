"""``np.round`` / ``np.around`` / ``x.round(d)`` with NumPy's own algorithm.

NumPy's ``PyArray_Round`` (NumPy 2.4): a float array with ``decimals == 0`` is
``rint(x)``, exact; otherwise ``f = 10.0**|d|`` (a Python float, computed by NumPy's
``power_of_ten``: a table to 1e8, then repeated multiplication by 10) and the result is
``rint(x * f) / f`` for ``d > 0`` and ``rint(x / f) * f`` for ``d < 0``, each ufunc
computing in x's dtype (``f`` is weak, so float32 stays float32). Integers are copied
unchanged for ``d >= 0``; for ``d < 0`` they take the float path in float64 and are
cast back (unsafely: ``np.round(np.int8(127), -1)`` wraps to -126, and int64 values
beyond 2**53 lose precision, both as in NumPy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer, as_tracer, current
from .complexes import imag, make_complex, real
from .ufuncs import apply_ufunc

F64 = np.dtype(np.float64)


def power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (``numpy/_core/src/multiarray/calculation.c``)."""
    if n < 9:
        return (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)[n]
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
        if ret == float("inf"):
            break
    return ret


def _decimals(decimals: Any) -> int:
    if isinstance(decimals, Tracer):
        raise current().error("np.round: decimals must be a build-time integer, not a "
                              "runtime value",
                              hint="pass it as a default argument (a build-time constant)")
    if isinstance(decimals, (bool, np.bool_, int, np.integer)):
        return int(decimals)
    raise current().error(f"'{type(decimals).__name__}' object cannot be interpreted as an "
                          "integer")


def _scaled_rint(x: Tracer, decimals: int) -> Tracer:
    f = power_of_ten(abs(decimals))
    scale, unscale = (np.multiply, np.true_divide) if decimals >= 0 else \
        (np.true_divide, np.multiply)
    y = apply_ufunc(scale, x, f)
    return apply_ufunc(unscale, apply_ufunc(np.rint, y), f)


def round_(a: Any, decimals: Any = 0, out: Any = None) -> Tracer:
    """``np.round(a, decimals)``: the same dtype as ``a``, NumPy's values bit for bit."""
    if out is not None:
        raise current().error("np.round: out= is not supported",
                              hint="use the returned array: buf[...] = np.round(x, d)")
    x = as_tracer(a)
    d = _decimals(decimals)
    kind = x.dtype.kind
    if kind == "b":
        if d == 0:
            raise current().error("np.round of a bool array computes in float16, which aotc "
                                  "does not support", hint="convert first: x.astype(np.float32)")
        raise current().error("Cannot cast ufunc 'multiply' output from dtype('float64') to "
                              "dtype('bool') with casting rule 'same_kind'")
    if kind == "c":  # each part rounded as a float array, as NumPy's PyArray_Round does
        return make_complex(round_(real(x), d), round_(imag(x), d), x.dtype)
    if kind in "iu":
        if d >= 0:
            return Tracer(x.atom)  # NumPy returns a copy (of an array, never a Python int)
        return lax.convert(_scaled_rint(lax.convert(x, F64), d), x.dtype)
    if d == 0:
        return apply_ufunc(np.rint, x)
    return _scaled_rint(x, d)
