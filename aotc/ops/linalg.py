"""``dot_general``: contractions with batch dimensions, as in XLA and ``jax.lax``.

``dot`` / ``matmul`` / ``inner`` / ``outer`` / ``trace`` decompose into it. The output
axes are the batch axes, then the lhs free axes, then the rhs free axes; both inputs
share a dtype (tracing converts first) and so does the output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tracing.avals import AType
from .core import impl_rules, primitive, type_rules

dot_general_p = primitive("dot_general")


def _free(ndim: int, contract: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _dot_general_type(lhs: Any, rhs: Any, *, contracting: tuple[tuple[int, ...], ...],
                      batch: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:

    (lc, rc), (lb, rb) = contracting, batch
    if lhs.dtype != rhs.dtype:
        raise ValueError("dot_general: inputs must share a dtype")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError("dot_general: unpaired dimensions")
    for a, b in list(zip(lc, rc, strict=True)) + list(zip(lb, rb, strict=True)):
        da, db = lhs.shape[a], rhs.shape[b]
        if da != db and da.is_const and db.is_const:
            raise ValueError(f"dot_general: sizes {da} and {db} do not match")
    shape = (tuple(lhs.shape[i] for i in lb)
             + tuple(lhs.shape[i] for i in _free(lhs.ndim, lc, lb))
             + tuple(rhs.shape[i] for i in _free(rhs.ndim, rc, rb)))
    return (AType(lhs.dtype, shape),)


def _dot_general_impl(lhs: np.ndarray, rhs: np.ndarray, *, contracting: tuple[tuple[int, ...], ...],
                      batch: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray]:
    (lc, rc), (lb, rb) = contracting, batch
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lsub = [next(letters) for _ in range(lhs.ndim)]
    rsub = [next(letters) for _ in range(rhs.ndim)]
    for a, b in list(zip(lc, rc, strict=True)) + list(zip(lb, rb, strict=True)):
        rsub[b] = lsub[a]
    out = ([lsub[i] for i in lb] + [lsub[i] for i in _free(lhs.ndim, lc, lb)]
           + [rsub[i] for i in _free(rhs.ndim, rc, rb)])
    spec = f"{''.join(lsub)},{''.join(rsub)}->{''.join(out)}"
    if any(lhs.shape[i] == 0 for i in lc):
        # An empty sum is zero. NumPy's einsum can leave such a result unwritten (seen
        # under valgrind, and as a NaN from reused memory in a long test run).
        sizes = dict(zip(lsub, lhs.shape, strict=True)) | dict(zip(rsub, rhs.shape, strict=True))
        return (np.zeros(tuple(sizes[s] for s in out), lhs.dtype),)
    if lhs.dtype == np.bool_:
        result = np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)) != 0
    else:
        result = np.einsum(spec, lhs, rhs, dtype=lhs.dtype)
    return (np.asarray(result, dtype=lhs.dtype),)


type_rules[dot_general_p] = _dot_general_type
impl_rules[dot_general_p] = _dot_general_impl
