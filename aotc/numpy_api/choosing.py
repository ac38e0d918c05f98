"""``np.select``, ``np.digitize``, ``np.ix_`` and ``np.linalg.matrix_power``, as
decompositions into ``where``, ``searchsorted``, reshapes and matrix products.

- ``select``: the choices folded with ``where`` from the last condition to the first
  (so the first true condition wins), in the dtype NumPy's ``result_type`` gives.
- ``digitize``: NumPy's ``searchsorted`` on the bins (reversed when they decrease),
  with ``ValueError`` when the bins are neither increasing nor decreasing: a check on
  the values when the kernel runs.
- ``ix_``: each 1-D index (a boolean mask becomes its nonzero indices) reshaped to lie
  along its own axis, for the broadcasting of integer-array indexing.
- ``matrix_power``: repeated squaring; a negative power inverts first. A power known
  only at run time loops over its bits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import eye
from .functions_base import where
from .histograms import raise_if
from .linalg import matmul
from .linalg_solve import inv, square
from .reductions import all_
from .searching import searchsorted
from .selection import nonzero
from .ufuncs import broadcast_all

ONE = DimExpr.const(1)


def _sample(value: Any) -> Any:
    """What NumPy's ``result_type`` sees of a choice: a Python number as itself (weak),
    anything else through ``np.asarray``."""
    if isinstance(value, Tracer):
        if value.weak and value.ndim == 0:
            return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[value.dtype.kind]
        return np.empty((1,) * value.ndim, value.dtype)
    return value if type(value) in (int, float, complex) else np.asarray(value)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Tracer:
    ctx = current()
    conds, choices = list(condlist), list(choicelist)
    if len(conds) != len(choices):
        raise ctx.error("list of cases must be same length as list of conditions")
    if not conds:
        raise ctx.error("select with an empty condition list is not possible")
    dtype = np.result_type(*(_sample(c) for c in (*choices, default)))
    tests = [as_tracer(c) for c in conds]
    for i, test in enumerate(tests):
        if test.dtype != np.bool_:
            raise ctx.error(f"invalid entry {i} in condlist: should be boolean ndarray")
    values = [lax.convert(as_tracer(v, None if isinstance(v, Tracer) else dtype), dtype)
              for v in (*choices, default)]
    *items, result = broadcast_all([*tests, *values])
    tests, values = items[:len(tests)], items[len(tests):]
    for test, value in zip(reversed(tests), reversed(values), strict=True):
        result = where(test, value, result)
    return result


def digitize(x: Any, bins: Any, right: bool = False) -> Tracer:
    ctx = current()
    v, edges = as_tracer(x), as_tracer(bins)
    if v.dtype.kind == "c":
        raise ctx.error("x may not be complex")
    if edges.ndim != 1:
        raise ctx.error("object too deep for desired array" if edges.ndim > 1 else
                        "object of too small depth for desired array")
    side = "left" if right else "right"
    rising = all_(edges[1:] >= edges[:-1])
    falling = all_(edges[1:] <= edges[:-1])
    raise_if(np.logical_not(np.logical_or(rising, falling)),
             "bins must be monotonically increasing or decreasing")
    n = lax.dim_value(edges.aval.shape[0])
    up = searchsorted(edges, v, side=side)
    down = n - searchsorted(edges[::-1], v, side=side)
    return where(rising, up, down)


def ix_(*args: Any) -> tuple[Tracer, ...]:
    ctx = current()
    out = []
    for k, arg in enumerate(args):
        index = as_tracer(arg)
        if index.ndim != 1:
            raise ctx.error("Cross index must be 1 dimensional")
        if index.dtype == np.bool_:
            (index,) = nonzero(index)
        elif index.dtype.kind not in "iu":
            raise ctx.error("arrays used as indices must be of integer (or boolean) type")
        shape = (ONE,) * k + index.aval.shape + (ONE,) * (len(args) - k - 1)
        out.append(lax.reshape(index, shape))
    return tuple(out)


def matrix_power(a: Any, n: Any) -> Tracer:
    ctx = current()
    m = square(as_tracer(a))
    if isinstance(n, Tracer):
        if n.ndim or n.dtype.kind not in "iu":
            raise ctx.error("exponent must be an integer")
        return _runtime_power(m, n)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ctx.error("exponent must be an integer")
    return _static_power(m, int(n))


def _identity_like(m: Tracer) -> Tracer:
    """Identity matrices of ``m``'s shape (a stack of them) and dtype."""
    return lax.broadcast_to(eye(lax.dim_value(m.aval.shape[-1]), dtype=m.dtype), m.aval.shape)


def _static_power(m: Tracer, n: int) -> Tracer:
    if n == 0:
        return _identity_like(m)
    base = inv(m) if n < 0 else m
    result: Tracer | None = None
    k = abs(n)
    while k:
        if k & 1:
            result = base if result is None else matmul(result, base)
        k >>= 1
        if k:
            base = matmul(base, base)
    assert result is not None
    return lax.fresh(result) if result is m else result


def _runtime_power(m: Tracer, n: Tracer) -> Tracer:
    """Powers of a float matrix (the inverse's, for a negative power), by the bits of the
    power. An integer matrix's negative powers are floats in NumPy: the result's dtype
    would depend on the sign, so they are a ValueError here."""
    k = lax.convert(n, np.dtype(np.int64))
    if m.dtype.kind in "fc":
        base = lax.cond(k < 0, inv, lax.fresh, m)
    else:
        negative: Any = k < 0
        lax.bind(raise_if_p, negative.atom, k.atom, k.atom, error="ValueError",
                 message="a negative power {lhs} of an integer "
                         "matrix is a float matrix; pass the power at build time, or a "
                         "float matrix")
        base = m
    # |k| as unsigned: |-2**63| is 2**63, which int64 cannot hold (NumPy's own loop
    # returns None there; its value is the inverse to the power 2**63).
    magnitude = lax.convert(cast(Tracer, np.abs(k)), np.dtype(np.uint64))

    def more(state: Any) -> Any:
        return state[0] > 0

    def step(state: Any) -> Any:
        left, result, power = state
        odd = (left & 1) == 1
        result = where(odd, matmul(result, power), result)
        return left >> 1, result, matmul(power, power)

    _, result, _ = lax.while_loop(more, step, (magnitude, _identity_like(m), base))
    return cast(Tracer, result)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.select: select, np.digitize: digitize, np.linalg.matrix_power: matrix_power,
    np.ix_: ix_,
}
