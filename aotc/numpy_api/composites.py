"""Functions NumPy itself writes in a few lines of other functions, written the same way:
``kron``, ``tensordot``, ``tri``, ``fix``, ``logspace``, ``geomspace``, ``ediff1d``,
``append``, ``cov`` and ``corrcoef``. Following NumPy's own code keeps the dtypes, the
edge cases and the order of the roundings (``cov`` centers, multiplies by the
conjugate transpose and scales by ``1 / (N - ddof)``, as NumPy does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .complexes import imag, make_complex, real
from .creation import iota, linspace
from .diagonals import diagonal
from .functions_base import where
from .histograms import raise_if
from .joining import atleast_2d, concatenate
from .linalg import dot_general, matmul
from .reductions import mean
from .shaping import ravel, transpose
from .ufuncs import apply_ufunc, promote_types

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)


def kron(a: Any, b: Any) -> Tracer:
    """Every product ``a[i] * b[j]`` at ``i * b.shape + j``: both operands raised to the
    same rank, their axes interleaved by broadcasting, then merged pairwise."""
    x, y = as_tracer(a), as_tracer(b)
    nd = max(x.ndim, y.ndim)
    x = lax.reshape(x, (ONE,) * (nd - x.ndim) + x.aval.shape)
    y = lax.reshape(y, (ONE,) * (nd - y.ndim) + y.aval.shape)
    spread_x = lax.reshape(x, tuple(d for n in x.aval.shape for d in (n, ONE)))
    spread_y = lax.reshape(y, tuple(d for n in y.aval.shape for d in (ONE, n)))
    product = apply_ufunc(np.multiply, spread_x, spread_y)
    return lax.reshape(product, tuple(p * q for p, q in zip(x.aval.shape, y.aval.shape,
                                                               strict=True)))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Tracer:
    ctx = current()
    dtype = promote_types(a, b)
    x, y = lax.convert(as_tracer(a), dtype), lax.convert(as_tracer(b), dtype)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(x.ndim, y.ndim):
            raise ctx.error("shape-mismatch for sum")
        left, right = tuple(range(x.ndim - n, x.ndim)), tuple(range(n))
    else:
        pair = list(axes)
        if len(pair) != 2:
            raise ctx.error("axes must be an integer or a pair of sequences of axes")
        left, right = (tuple(int(k) % nd for k in (p if isinstance(p, (list, tuple)) else [p]))
                       for p, nd in zip(pair, (x.ndim, y.ndim), strict=True))
        if len(left) != len(right):
            raise ctx.error("shape-mismatch for sum")
    return dot_general(x, y, (left, right))


def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = float) -> Tracer:
    from ..lax import as_dim
    rows = as_dim(N)
    cols = rows if M is None else as_dim(M)
    i, j = iota(I64, (rows, cols), 0), iota(I64, (rows, cols), 1)
    below: Any = apply_ufunc(np.greater_equal, apply_ufunc(np.add, i, k), j)
    return lax.convert(below, np.dtype(dtype))


def fix(x: Any) -> Tracer:
    """``ceil``, then ``floor`` where ``x >= 0``: rounding toward zero (NaN stays)."""
    v = as_tracer(x)
    return where(apply_ufunc(np.greater_equal, v, 0), apply_ufunc(np.floor, v),
                 apply_ufunc(np.ceil, v))


def logspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Tracer:
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    result = apply_ufunc(np.power, base, y)
    return result if dtype is None else lax.convert(result, np.dtype(dtype))


def geomspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Tracer:
    """NumPy's: the logspace of |start|..|stop|, its ends set to them exactly, the sign of
    ``start`` put back; a zero end is NumPy's ValueError. Real values only."""
    ctx = current()
    first, last = as_tracer(start), as_tracer(stop)
    if first.ndim or last.ndim or "c" in (first.dtype.kind, last.dtype.kind):
        raise ctx.error("np.geomspace: real scalar start and stop only")
    raise_if(np.logical_or(first == 0, last == 0), "Geometric sequence cannot include zero")
    sign = where(first < 0, -1.0, 1.0)
    lo, hi = apply_ufunc(np.multiply, first, sign), apply_ufunc(np.multiply, last, sign)
    result = logspace(apply_ufunc(np.log10, lo), apply_ufunc(np.log10, hi), num=num,
                      endpoint=endpoint, base=10.0)
    count = result.aval.shape[0]
    index = iota(I64, (count,), 0)
    result = where(index == 0, lo, result)
    if endpoint:  # (one point is the start)
        result = where(apply_ufunc(np.equal, index, lax.dim_value(count) - 1)
                       & (index > 0), hi, result)
    result = apply_ufunc(np.multiply, result, sign)
    wanted = np.dtype(dtype) if dtype is not None else result.dtype
    return lax.convert(result, wanted)


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tracer:
    x = ravel(ary)
    diff = apply_ufunc(np.subtract, x[1:], x[:-1])
    parts = [lax.convert(ravel(as_tracer(p, x.dtype if not isinstance(p, Tracer) else None)),
                         x.dtype) if p is not None else None for p in (to_begin, to_end)]
    pieces = [p for p in (parts[0], diff, parts[1]) if p is not None]
    return pieces[0] if len(pieces) == 1 else concatenate(pieces)


def append(arr: Any, values: Any, axis: Any = None) -> Tracer:
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Tracer:
    ctx = current()
    if fweights is not None or aweights is not None:
        raise ctx.error("np.cov: fweights and aweights are not supported yet")
    x = as_tracer(m)
    if x.ndim > 2:
        raise ctx.error("m has more than 2 dimensions")
    given = [x.dtype] + ([as_tracer(y).dtype] if y is not None else [])
    work = np.dtype(dtype) if dtype is not None else np.result_type(*given, np.float64)
    rows = _variables(lax.convert(x, work), rowvar)
    if y is not None:
        rows = concatenate([rows, _variables(lax.convert(as_tracer(y), work), rowvar)], axis=0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = apply_ufunc(np.subtract, rows, mean(rows, axis=1, keepdims=True))
    count = lax.dim_value(rows.aval.shape[1])
    fact = apply_ufunc(np.maximum, apply_ufunc(np.subtract, count, ddof), 0)
    conj = apply_ufunc(np.conjugate, centered) if work.kind == "c" else centered
    c = matmul(centered, transpose(conj))
    c = apply_ufunc(np.multiply, c, apply_ufunc(np.true_divide, 1, lax.convert(fact, work)))
    variables = rows.aval.shape[0]
    if variables == ONE:
        return lax.reshape(c, ())
    _refuse_one(variables, "np.cov of one variable is a scalar in NumPy; this kernel was "
                           "compiled for several (the signature leaves their count open): "
                           "declare it, or take [0, 0]")
    return c


def _variables(v: Tracer, rowvar: bool) -> Tracer:
    """One variable per row, as NumPy reads ``m`` (``rowvar=False``: one per column,
    unless there is only one row)."""
    rows = atleast_2d(v)
    if rowvar or rows.aval.shape[0] == ONE:
        return rows
    _refuse_one(rows.aval.shape[0], "np.cov(rowvar=False) of one row takes it as one variable "
                                    "in NumPy; this kernel was compiled for several rows (its "
                                    "signature leaves their count open): declare it")
    return transpose(rows)


def _refuse_one(size: DimExpr, message: str) -> None:
    """ValueError with ``message`` when ``size`` is 1 at run time."""
    raise_if(np.equal(lax.dim_value(size), 1), message)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tracer:
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return apply_ufunc(np.true_divide, c, c)
    d = diagonal(c)
    stddev = apply_ufunc(np.sqrt, real(d) if d.dtype.kind == "c" else d)
    c = apply_ufunc(np.true_divide, c, stddev[:, None])
    c = apply_ufunc(np.true_divide, c, stddev[None, :])
    if c.dtype.kind == "c":
        return make_complex(_unit(real(c)), _unit(imag(c)), c.dtype)
    return _unit(c)


def _unit(v: Tracer) -> Tracer:
    """``np.clip(v, -1, 1)`` (NaN stays NaN)."""
    return apply_ufunc(np.minimum, apply_ufunc(np.maximum, v, -1), 1)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.kron: kron, np.tensordot: tensordot, np.fix: fix, np.ediff1d: ediff1d,
    np.append: append, np.cov: cov, np.corrcoef: corrcoef,
}
CREATION: dict[Callable[..., Any], Callable[..., Any]] = {
    np.tri: tri, np.logspace: logspace, np.geomspace: geomspace,
}
