"""``np.where``: the select every other decomposition builds on."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..trace import Tracer, current
from .ufuncs import as_tracer, broadcast_all, promote_types


def where(condition: Any, x: Any = None, y: Any = None) -> Tracer:
    if x is None or y is None:
        raise current().error(
            "np.where with one argument (indices of nonzero elements) is not supported",
            hint="use the three-argument form np.where(cond, a, b)",
        )
    dtype = promote_types(x, y)
    cond = lax.convert(as_tracer(condition), np.dtype(bool))
    a = lax.convert(as_tracer(x, dtype, wrap=True), dtype)  # NumPy casts scalars unsafely
    b = lax.convert(as_tracer(y, dtype, wrap=True), dtype)
    cond, a, b = broadcast_all([cond, a, b])
    return lax.select(cond, a.atom, b.atom)
