"""``np.isclose`` and ``np.allclose``, following NumPy 2's ``isclose`` line by line.

``b`` is made inexact first (``result_type(b, 1.0)``: integer arrays compare in
float64, a Python int becomes a float), then ``|a - b| <= atol + rtol * |b|`` where
``b`` is finite, or ``a == b`` (equal infinities), or with ``equal_nan`` both NaN.
Python scalars stay weak throughout, as in NumPy (``isclose(x32, 0.1)`` compares in
float32). ``allclose`` is ``all(isclose(...))``, a bool scalar.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import WEAK_TYPES, Tracer, as_tracer, current
from .reductions import all_
from .ufuncs import apply_ufunc

F64 = np.dtype(np.float64)


def _python_scalar(value: Any) -> bool:
    """A Python number, or a traced value standing for one (a weak tracer)."""
    if isinstance(value, Tracer):
        return value.weak
    return isinstance(value, WEAK_TYPES) and not isinstance(value, np.generic)


def _inexact(y: Any) -> Any:
    if not _python_scalar(y):
        t = as_tracer(y)
        return lax.convert(t, np.result_type(t.dtype, 1.0))
    if isinstance(y, Tracer):
        if y.dtype.kind in "biu":  # a Python int (or bool) becomes a Python float
            out = lax.convert(y, F64)
            out.weak = True
            return out
        return y
    return float(y) if isinstance(y, int) else y


def isclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8, equal_nan: Any = False
            ) -> Tracer:
    if isinstance(equal_nan, Tracer):
        raise current().error("np.isclose: equal_nan must be a build-time bool")
    x = a if _python_scalar(a) else as_tracer(a)
    y = _inexact(b)
    rtol = rtol if _python_scalar(rtol) else as_tracer(rtol)
    atol = atol if _python_scalar(atol) else as_tracer(atol)
    diff = apply_ufunc(np.absolute, apply_ufunc(np.subtract, x, y))
    bound = apply_ufunc(np.add, atol, apply_ufunc(np.multiply, rtol, apply_ufunc(np.absolute, y)))
    close = apply_ufunc(np.logical_and, apply_ufunc(np.less_equal, diff, bound),
                        apply_ufunc(np.isfinite, y))
    result = apply_ufunc(np.logical_or, close, apply_ufunc(np.equal, x, y))
    if equal_nan:
        both = apply_ufunc(np.logical_and, apply_ufunc(np.isnan, x), apply_ufunc(np.isnan, y))
        result = apply_ufunc(np.logical_or, result, both)
    return result


def allclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8, equal_nan: Any = False
             ) -> Tracer:
    return all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
