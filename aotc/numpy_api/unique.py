"""``np.unique``: sorted distinct values, with ``return_index``, ``return_inverse``,
``return_counts``, as NumPy's ``_unique1d`` computes them.

The flattened input is sorted (with its stable sorting permutation when indices are
asked for); an element starts a new value where it differs from the one before it, and
with ``equal_nan`` (the default) all NaNs, which sort last, are one value. How many
values there are depends on the data: the count of starts is bound as a size (at most
the input's, see :func:`aotc.tracing.tracer.bind_dim`) and one ``compress`` pass lays the values
out, as ``x[mask]`` does (:mod:`.masks`).

- ``return_index``: the first occurrence of each value, the stable permutation at each
  start (NumPy sorts stably for this too);
- ``return_inverse``: the value's position for every input element, in the input's
  shape (NumPy 2.4): the running count of starts, in input order (put back through the
  inverse permutation, itself an ``argsort`` of the permutation);
- ``return_counts``: the distances between consecutive starts.

Which of ``-0.0`` and ``0.0`` (and which NaN) represents its value is the first one in
sorted order: the input's first, as the sort is stable. NumPy's own unstable sort may
pick the other; their values are equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..ops.index import take_p
from ..ops.sorting import argsort_p, sort_p
from ..shapes import relu
from ..tracing.tracer import Tracer, current
from .creation import full_from_dims, iota
from .joining import concatenate, cumsum
from .masks import compress, kept_count
from .shaping import ravel
from .sorting import sortable
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)


def _starts(ordered: Tracer, equal_nan: bool) -> Tracer:
    """True where a sorted 1-D array's element differs from the one before it (and at
    the first element)."""
    n = ordered.aval.shape[0]
    later, earlier = ordered[1:], ordered[:-1]
    differ = apply_ufunc(np.not_equal, later, earlier)
    if equal_nan and ordered.dtype.kind == "f":  # NaN != NaN, but they are one value
        both = apply_ufunc(np.logical_and, apply_ufunc(np.isnan, later),
                           apply_ufunc(np.isnan, earlier))
        differ = apply_ufunc(np.logical_and, differ, apply_ufunc(np.logical_not, both))
    first = full_from_dims((n - relu(n - 1),), True, np.dtype(bool))  # one, unless empty
    return lax.refine_shape(concatenate([first, differ]), (n,))


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           sorted: bool = True) -> Any:
    """``np.unique`` (``sorted=False`` gives them sorted too: NumPy leaves that order
    unspecified)."""
    ctx = current()
    if axis is not None:
        raise ctx.error("np.unique with axis= is not supported",
                        hint="compare rows yourself, e.g. sort them with np.argsort on a key "
                             "and keep those that differ from the previous one")
    original = sortable(ar, "np.unique")
    flat = ravel(original)
    n = flat.aval.shape[0]
    perm: Tracer | None = None
    if return_index or return_inverse:
        perm = lax.bind1(argsort_p, flat.atom, axis=0)
        ordered = lax.bind1(take_p, flat.atom, perm.atom, axis=0)
    else:
        ordered = lax.bind1(sort_p, flat.atom, axis=0)
    starts = _starts(ordered, bool(equal_nan))
    kept = kept_count(starts)
    results: list[Tracer] = [compress(ordered, starts, kept)]
    if return_index:
        assert perm is not None
        results.append(compress(perm, starts, kept))
    if return_inverse:
        assert perm is not None
        position = apply_ufunc(np.subtract, cumsum(starts, dtype=I64), 1)
        back = lax.bind1(argsort_p, perm.atom, axis=0)  # the inverse permutation
        inverse = lax.bind1(take_p, position.atom, back.atom, axis=0)
        results.append(lax.reshape(inverse, original.aval.shape))
    if return_counts:
        first = compress(iota(I64, (n,), 0), starts, kept)
        bounds = concatenate([first, lax.dim_value(n)[None]])
        results.append(apply_ufunc(np.subtract, bounds[1:], bounds[:-1]))
    return results[0] if len(results) == 1 else tuple(results)

