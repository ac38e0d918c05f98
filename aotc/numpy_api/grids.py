"""``np.meshgrid``: coordinate arrays from coordinate vectors, as NumPy builds them.

Each input is raveled and reshaped to lie along its own axis (the first two swapped for
``indexing='xy'``), then, unless ``sparse``, broadcast to the common shape; with
``copy=True`` (the default) each result is a new array. With ``copy=False`` the results
are views: reading them is free, writing through them is refused as for
``np.broadcast_to`` views (NumPy's are read-only or alias the inputs).
"""

from __future__ import annotations

from typing import Any

from .. import lax
from ..tracing.tracer import Tracer, as_tracer, current
from .joining import broadcast_to
from .shaping import ravel, reshape


def meshgrid(*xi: Any, copy: Any = True, sparse: Any = False, indexing: Any = "xy"
             ) -> tuple[Tracer, ...]:
    if indexing not in ("xy", "ij"):
        raise current().error("Valid values for `indexing` are 'xy' and 'ij'.")
    vectors = [ravel(as_tracer(x)) for x in xi]
    ndim = len(vectors)
    axes = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        axes[0], axes[1] = 1, 0
    output = [reshape(v, tuple(v.shape[0] if i == axis else 1 for i in range(ndim)))
              for v, axis in zip(vectors, axes, strict=True)]
    if not sparse:
        full = tuple(vectors[axes.index(i)].shape[0] for i in range(ndim))
        output = [broadcast_to(o, full) for o in output]
    if copy:
        return tuple(lax.fresh(o) for o in output)
    return tuple(output)
