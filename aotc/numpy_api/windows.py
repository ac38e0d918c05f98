"""Window functions: ``np.hanning``, ``np.hamming``, ``np.blackman``, ``np.bartlett``,
NumPy's formulas over ``n = arange(1 - M, M, 2)`` (an empty window for ``M < 1``, one 1.0
for ``M == 1``). ``M`` may be a value known only at run time (``len(x)``); NumPy calls
these with a size, not an array, so they are stand-ins for any call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..bind import size_value
from ..shapes import relu
from ..tracer import Tracer
from .creation import iota
from .functions_base import where
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


WINDOWS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.hanning: _window(lambda n, s: 0.5 + 0.5 * _cos(np.pi * n / s)),
    np.hamming: _window(lambda n, s: 0.54 + 0.46 * _cos(np.pi * n / s)),
    np.blackman: _window(lambda n, s: 0.42 + 0.5 * _cos(np.pi * n / s)
                         + 0.08 * _cos(2.0 * np.pi * n / s)),
    np.bartlett: _window(lambda n, s: where(n <= 0, 1 + n / s, 1 - n / s)),
}
