"""Functions whose result's size is a count of the data: ``np.nonzero``,
``np.flatnonzero``, ``np.argwhere``, one-argument ``np.where``, ``np.compress``,
``np.extract``, ``np.trim_zeros``.

Each lays out a selection (see :mod:`.masks`): the indices of the true elements are
``iota`` arrays compressed under the mask, so the count is bound once and every index
array is one ``compress`` pass.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import relu
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import full_from_dims, iota
from .functions_base import where as choose
from .joining import concatenate, moveaxis, stack
from .masks import compress as compress_items
from .masks import kept_count
from .shaping import ravel

I64 = np.dtype(np.int64)


def _truth(a: Any) -> Tracer:
    x = as_tracer(a)
    return x if x.dtype == np.bool_ else lax.convert(x, np.dtype(bool))


def nonzero(a: Any) -> tuple[Tracer, ...]:
    mask = _truth(a)
    if mask.ndim == 0:
        raise current().error("Calling nonzero on 0d arrays is not allowed. Use "
                              "np.atleast_1d(scalar).nonzero() instead.")
    kept = kept_count(mask)  # one count: every axis's indices have the same length
    return tuple(compress_items(iota(I64, mask.aval.shape, axis), mask, kept)
                 for axis in range(mask.ndim))


def flatnonzero(a: Any) -> Tracer:
    (indices,) = nonzero(ravel(_truth(a)))
    return indices


def argwhere(a: Any) -> Tracer:
    mask = _truth(a)
    if mask.ndim == 0:
        raise current().error("np.argwhere of a 0-d array is not supported",
                              hint="use np.argwhere(np.atleast_1d(x))")
    return stack(nonzero(mask), axis=1)


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``np.where(cond, x, y)``, and ``np.where(cond)``: NumPy's ``np.nonzero(cond)``."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise current().error("either both or neither of x and y should be given")
    return choose(condition, x, y)


def compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> Tracer:
    if out is not None:
        raise current().error("np.compress: out= is not supported")
    x = as_tracer(a)
    cond = _truth(condition)
    if cond.ndim != 1:
        raise current().error("condition must be a 1-d array")
    if axis is None:
        x, axis = ravel(x), 0
    axis = int(axis) % x.ndim
    n, given = x.aval.shape[axis], cond.aval.shape[0]
    # A shorter condition leaves the rest out, as NumPy's does; a longer one is an error.
    current().check("<=", given, n, "IndexError",
                    f"index {{lhs}} is out of bounds for axis {axis} with size {{rhs}}")
    if given != n:
        cond = lax.refine_shape(
            concatenate([cond, full_from_dims((relu(n - given),), False, np.dtype(bool))]),
            (n,))
    rows = moveaxis(x, axis, 0)
    return moveaxis(compress_items(rows, cond, kept_count(cond)), 0, axis)


def extract(condition: Any, arr: Any) -> Tracer:
    mask = ravel(_truth(condition))
    return compress_items(ravel(as_tracer(arr)), mask, kept_count(mask))


def trim_zeros(filt: Any, trim: str = "fb") -> Tracer:
    x = as_tracer(filt)
    if x.ndim != 1:
        raise current().error("np.trim_zeros: only 1-d arrays are supported")
    nonzero_at = np.not_equal(x, 0)
    n = lax.dim_value(x.aval.shape[0])
    positions = iota(I64, x.aval.shape, 0)
    # One more candidate each, so an empty (or all-zero) array reduces to an empty slice.
    first = np.min(concatenate([choose(nonzero_at, positions, n), n[None]])) \
        if "f" in trim.lower() else 0
    last = np.max(concatenate([choose(nonzero_at, positions + 1, 0), np.zeros(1, I64)])) \
        if "b" in trim.lower() else n
    return cast(Tracer, x[first:np.maximum(first, last)])
