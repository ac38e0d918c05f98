"""``np.ptp``: the peak-to-peak range, ``max - min`` in the array's own dtype.

As NumPy's ``_methods._ptp``: ``subtract(maximum.reduce(a), minimum.reduce(a))``, so
integers wrap around (``ptp`` of int8 ``[-128, 127]`` is -1), bool is NumPy's
``TypeError`` for boolean subtract, and an empty reduction is the ``ValueError`` of
``max``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tracing.tracer import Tracer, current
from .functions_base import reject_unsupported
from .reductions import max_, min_
from .ufuncs import apply_ufunc


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False) -> Tracer:
    reject_unsupported("ptp", {"out": out})
    keep = False if keepdims is np._NoValue else bool(keepdims)
    high = max_(a, axis=axis, keepdims=keep)
    low = min_(a, axis=axis, keepdims=keep)
    if high.dtype == np.bool_:
        raise current().error("numpy boolean subtract, the `-` operator, is not supported, "
                              "use the bitwise_xor, the `^` operator, or the logical_xor "
                              "function instead.")
    return apply_ufunc(np.subtract, high, low)
