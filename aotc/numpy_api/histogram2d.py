"""``np.histogram2d``, as NumPy's ``histogramdd`` computes it.

Each axis gets ``bins + 1`` edges (given, or a linspace between the data's minimum and
maximum or ``range``); a sample's bin on an axis is ``searchsorted(edges, x, 'right')``,
one less on the last edge (the last bin is closed), 0 or ``bins + 1`` outside. The
counts (or summed weights) are one ``bincount`` of the flattened bin pairs with the
outside bins included, which are then cut off; ``density`` divides by each axis's bin
widths and the total, in NumPy's order.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer, current
from .functions_base import where
from .histograms import bin_edges, counted_into, raise_if
from .joining import diff
from .reductions import sum_
from .searching import one_dimensional, searchsorted
from .ufuncs import apply_ufunc

F64 = np.dtype(np.float64)


def _axis_edges(data: Tracer, bins: Any, range_: Any) -> Tracer:
    ctx = current()
    if isinstance(bins, Tracer) or np.ndim(bins) == 1:
        edges = one_dimensional(bins, "bins")
        raise_if(apply_ufunc(np.less, edges[1:], edges[:-1]),
                 "`bins[0]` must be monotonically increasing, when an array")
        return edges
    try:
        count = operator.index(bins)
    except TypeError:
        raise ctx.error("np.histogram2d: bins must be integers or arrays of edges") from None
    if count < 1:
        raise ctx.error("`bins[0]` must be a positive integer, when a scalar")
    return bin_edges(data, count, range_)


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple[Tracer, Tracer, Tracer]:
    ctx = current()
    xs, ys = one_dimensional(x, "x"), one_dimensional(y, "y")
    n = xs.aval.shape[0]
    if ys.aval.shape[0] != n:
        ctx.check("==", ys.aval.shape[0], n, "ValueError",
                  "x and y must have the same length ({lhs} and {rhs})")
        ys = lax.refine_shape(ys, (n,))
    per_axis = list(bins) if isinstance(bins, (list, tuple)) and len(bins) == 2 \
        else [bins, bins]
    ranges = list(range) if range is not None else [None, None]
    edges = [_axis_edges(d, b, r) for d, b, r in zip((xs, ys), per_axis, ranges, strict=True)]
    index = []
    for data, e in zip((xs, ys), edges, strict=True):
        i = searchsorted(e, data, side="right")
        index.append(where(data == e[-1], i - 1, i))  # the last bin is closed
    sizes = [e.aval.shape[0] + 1 for e in edges]  # the bins and the two outside
    flat = index[0] * lax.dim_value(sizes[1]) + index[1]
    total = sizes[0] * sizes[1]
    counts = counted_into(flat, weights, total)
    counts = lax.convert(lax.reshape(counts, (sizes[0], sizes[1])), F64)
    hist = counts[1:-1, 1:-1]
    if density:
        s = sum_(hist)
        hist = hist / lax.convert(diff(edges[0]), F64)[:, None]
        hist = hist / lax.convert(diff(edges[1]), F64)[None, :]
        hist = hist / s
    return hist, edges[0], edges[1]


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {np.histogram2d: histogram2d}
