"""``np.convolve`` of 1-D arrays in the three modes, as a masked gather and a sum.

NumPy convolves the longer array with the shorter one, reversed
(``correlate(long, short[::-1], mode)``); each output is a sum of at most
``min(n, m)`` products. Here the output ``k`` is ``sum_i short[i] * long[k - i]``
over the ``i`` for which ``k - i`` is in range: the products form a
``(min(n, m), output length)`` matrix (``take`` of the longer array at the shifted
indices, out-of-range products masked to zero, never computed from padding, so an
infinity never meets a zero that is not in the data) summed over its first axis, so the
work is **O(min(n, m) * (n + m))**. When the lengths are known only at run time which
array is longer is decided at run time too (both are gathered from their
concatenation). The output length is ``n + m - 1`` (full), ``max(n, m)`` (same) or
``|n - m| + 1`` (valid), with NumPy's centering for 'same'.

The dtype is NumPy's (the two arrays' result type; bool is any-of-and); integers wrap
around as in NumPy. Float sums are in a different order from NumPy's (which uses BLAS
``dot`` for the ends and a sequential loop for short kernels), so they can differ in
the last bits when terms cancel; a float result is never -0.0, as NumPy's sums start
from +0.0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..shapes import DimExpr, if_neg, maximum, minimum
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import iota
from .functions_base import where
from .joining import concatenate
from .reductions import any_, sum_
from .searching import take
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)
#: Shorter arrays of build-time length up to this are summed term by term, in NumPy's order.
UNROLL = 16
_MODES = {"valid": "valid", "same": "same", "full": "full", 0: "valid", 1: "same", 2: "full"}


def _vector(value: Any) -> Tracer:
    x = as_tracer(value)
    if x.ndim == 0:  # NumPy's ndmin=1
        return lax.reshape(x, (ONE,))
    if x.ndim > 1:
        raise current().error("object too deep for desired array",
                              hint="np.convolve takes 1-D arrays")
    return x


def _mode(mode: Any) -> str:
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        pass
    if isinstance(mode, str):
        raise current().error("Use one of 'valid', 'same', or 'full' for convolve/correlate "
                              "mode")
    raise current().error(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def _ufunc(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def convolve(a: Any, v: Any, mode: Any = "full") -> Tracer:
    ctx = current()
    x, y = _vector(a), _vector(v)
    kind = _mode(mode)
    n, m = x.aval.shape[0], y.aval.shape[0]
    ctx.check(">=", n, ONE, "ValueError", "a cannot be empty")
    ctx.check(">=", m, ONE, "ValueError", "v cannot be empty")
    dtype = np.result_type(x.dtype, y.dtype)
    x, y = lax.convert(x, dtype), lax.convert(y, dtype)
    short_n, long_n = minimum(n, m), maximum(n, m)
    if kind == "full":
        offset, length = DimExpr.const(0), n + m - 1
    elif kind == "same":
        offset, length = (short_n - 1) // 2, long_n
    else:
        offset, length = short_n - 1, long_n - short_n + 1
    order = m - n
    if order.is_const:  # which one is longer is known at build time
        long, short = (y, x) if order.value > 0 else (x, y)
        pair = _Pair(long, short, None, None, short_n, long_n)
    else:  # decided at run time: both are gathered from one array
        swap = _ufunc(np.greater, lax.dim_value(m), lax.dim_value(n))
        both = concatenate([x, y])
        pair = _Pair(both, both, where(swap, lax.dim_value(n), 0),
                     where(swap, 0, lax.dim_value(n)), short_n, long_n)
    k = _ufunc(np.add, iota(I64, (length,), 0), lax.dim_value(offset))  # output index
    bound = [d.value for d in (n, m, short_n) if d.is_const]
    if bound and min(bound) <= UNROLL and dtype != np.bool_:
        return _sequential(pair, k, min(bound))
    return _matrix(pair, k, dtype)


class _Pair:
    """The longer and the shorter array, each possibly at a runtime offset in a shared
    array (when which one is longer is known only at run time)."""

    def __init__(self, long: Tracer, short: Tracer, long_at: Tracer | None,
                 short_at: Tracer | None, short_n: DimExpr, long_n: DimExpr) -> None:
        self.long, self.short, self.long_at, self.short_at = long, short, long_at, short_at
        self.short_n, self.long_n = short_n, long_n

    def terms(self, i: Tracer, k: Tracer) -> tuple[Tracer, Tracer, Tracer]:
        """``short[i]``, ``long[k - i]`` (gathered in range) and whether both exist."""
        j = _ufunc(np.subtract, k, i)
        last = lax.dim_value(self.long_n - 1)
        valid = _ufunc(np.logical_and, _ufunc(np.greater_equal, j, 0),
                       _ufunc(np.less_equal, j, last))
        valid = _ufunc(np.logical_and, valid, _ufunc(np.less, i, lax.dim_value(self.short_n)))
        j = _ufunc(np.minimum, _ufunc(np.maximum, j, 0), last)
        i = _ufunc(np.minimum, i, lax.dim_value(self.short_n - 1))
        if self.long_at is not None and self.short_at is not None:
            j, i = _ufunc(np.add, j, self.long_at), _ufunc(np.add, i, self.short_at)
        return take(self.short, i), take(self.long, j), valid


def _sequential(pair: _Pair, k: Tracer, bound: int) -> Tracer:
    """The sum when the shorter array has at most ``bound`` (a build-time number of)
    elements: one term per element, in the order of NumPy's loop for short kernels
    (``s = 0; s += long[k - i] * short[i]`` for ``i`` from the last element down), so
    bitwise NumPy's wherever NumPy uses that loop (the outputs that see the whole short
    array, for up to 11 elements; the ends use BLAS's dot)."""
    zero = np.zeros((), pair.long.dtype)[()]
    total = lax.broadcast_in_dim(as_tracer(zero), k.aval.shape, ())
    for i in reversed(range(bound)):
        short, long, valid = pair.terms(as_tracer(np.int64(i)), k)
        total = _ufunc(np.add, total, where(valid, _ufunc(np.multiply, long, short), zero))
    return total


def _matrix(pair: _Pair, k: Tracer, dtype: np.dtype) -> Tracer:
    """The sum over a (shorter length, output length) matrix of masked products."""
    i = iota(I64, (pair.short_n, ONE), 0)
    short, long, valid = pair.terms(i, lax.reshape(k, (ONE,) + k.aval.shape))
    if dtype == np.bool_:
        return any_(_ufunc(np.logical_and, valid, _ufunc(np.logical_and, short, long)), axis=0)
    zero = np.zeros((), dtype)[()]
    total = sum_(where(valid, _ufunc(np.multiply, long, short), zero), axis=0, dtype=dtype)
    if dtype.kind in "fc":
        total = _ufunc(np.add, total, zero)  # NumPy's sums start at +0.0: never -0.0
    return total


def correlate(a: Any, v: Any, mode: Any = "valid") -> Tracer:
    """``np.correlate``: the convolution with ``v`` reversed and conjugated, except that
    'same' centers the other way when ``a`` is the shorter array (NumPy correlates with
    the arrays swapped, then reverses): the window of the full result starts at
    ``ceil((n - 1) / 2)`` instead of ``floor``."""
    x, y = _vector(a), _vector(v)
    if y.dtype.kind == "c":
        y = apply_ufunc(np.conjugate, y)
    flipped = lax.slice_(y, (y.aval.shape[0] - 1,), (-1,), y.aval.shape)
    if _mode(mode) != "same":
        return convolve(x, flipped, mode)
    n, m = x.aval.shape[0], y.aval.shape[0]
    short = minimum(n, m)
    lower = (short - 1) // 2
    start = if_neg(n - m, short - 1 - lower, lower)
    full = convolve(x, flipped, "full")
    return lax.slice_(full, (start,), (1,), (maximum(n, m),))


FUNCTIONS: dict[Any, Any] = {np.convolve: convolve, np.correlate: correlate}
