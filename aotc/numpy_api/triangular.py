"""``np.triu`` / ``np.tril``: zero the elements below / above the ``k``-th diagonal.

As NumPy: a mask ``j - i <= k`` over the last two axes (``tri``) selects between the
array and a zero of its dtype, so stacks of matrices broadcast against the mask and a
1-D array of length n becomes an (n, n) matrix. ``k`` may be a runtime integer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tracing.tracer import Tracer, as_tracer, current
from .creation import iota
from .functions_base import where
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)


def _below(m: Tracer, k: Any, name: str) -> Tracer:
    """NumPy's ``tri(*m.shape[-2:], k=k, dtype=bool)``: true where ``j - i <= k``."""
    if m.ndim == 0:
        raise current().error("tri() missing 1 required positional argument: 'N'",
                              hint=f"np.{name} needs an array of at least one dimension")
    if isinstance(k, Tracer) and (k.ndim or k.dtype.kind not in "iu"):
        raise current().error(f"np.{name}: k must be an integer")
    rows_cols = m.aval.shape[-2:] if m.ndim >= 2 else m.aval.shape * 2
    rows, cols = iota(I64, rows_cols, 0), iota(I64, rows_cols, 1)
    return apply_ufunc(np.less_equal, apply_ufunc(np.subtract, cols, rows), k)


def tril(m: Any, k: Any = 0) -> Tracer:
    x = as_tracer(m)
    return where(_below(x, k, "tril"), x, np.zeros((), x.dtype)[()])


def triu(m: Any, k: Any = 0) -> Tracer:
    x = as_tracer(m)
    below = _below(x, apply_ufunc(np.subtract, k, 1) if isinstance(k, Tracer) else int(k) - 1,
                   "triu")
    return where(below, np.zeros((), x.dtype)[()], x)
