"""Window functions: ``np.hanning``, ``np.hamming``, ``np.blackman``, ``np.bartlett``,
``np.kaiser``, NumPy's formulas over ``n = arange(1 - M, M, 2)`` (an empty window for
``M < 1``, one 1.0 for ``M == 1``; Kaiser's over ``arange(M)``). ``M`` may be a value
known only at run time (``len(x)``); NumPy calls these with a size, not an array, so
they are stand-ins for any call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..shapes import relu
from ..tracing.bind import size_value
from ..tracing.tracer import Tracer, as_tracer
from .creation import iota
from .functions_base import where
from .special import i0
from .ufuncs import apply_ufunc

F64 = np.dtype(np.float64)


def _window(formula: Callable[[Tracer, Tracer], Tracer]) -> Callable[[Any], Tracer]:
    def window(M: Any) -> Tracer:
        count = relu(size_value(M, "M"))  # M < 1: empty
        m = lax.dim_value(count)
        n = lax.convert(1 - m + 2 * iota(np.dtype(np.int64), (count,), 0), F64)
        span = lax.convert(m - 1, F64)
        return where(m == 1, 1.0, formula(n, where(m == 1, 1.0, span)))
    return window


def _cos(x: Tracer) -> Tracer:
    return apply_ufunc(np.cos, x)


def kaiser(M: Any, beta: Any) -> Tracer:
    """NumPy's: ``i0(beta * sqrt(1 - ((n - alpha) / alpha)**2)) / i0(beta)`` over
    ``n = arange(M)``, ``alpha = (M - 1) / 2``; one 1.0 for ``M == 1``."""
    count = relu(size_value(M, "M"))
    m = lax.dim_value(count)
    n = lax.convert(iota(np.dtype(np.int64), (count,), 0), F64)
    alpha = lax.convert(m - 1, F64) / 2.0
    alpha = where(m == 1, 1.0, alpha)
    ratio = (n - alpha) / alpha
    value = i0(beta * apply_ufunc(np.sqrt, 1 - ratio ** 2.0)) / i0(lax.convert(
        as_tracer(beta), F64))
    return where(m == 1, 1.0, value)


WINDOWS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.kaiser: kaiser,
    np.hanning: _window(lambda n, s: 0.5 + 0.5 * _cos(np.pi * n / s)),
    np.hamming: _window(lambda n, s: 0.54 + 0.46 * _cos(np.pi * n / s)),
    np.blackman: _window(lambda n, s: 0.42 + 0.5 * _cos(np.pi * n / s)
                         + 0.08 * _cos(2.0 * np.pi * n / s)),
    np.bartlett: _window(lambda n, s: where(n <= 0, 1 + n / s, 1 - n / s)),
}
