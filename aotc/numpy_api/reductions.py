"""Reductions (``sum``, ``prod``, ``max``, ``min``, ``any``, ``all``, ``mean``).

Each converts to NumPy's accumulation dtype (``np.sum`` of int8 sums in int64),
reduces with one primitive, and reshapes for ``keepdims``. ``mean`` is ``sum / count``
cast back to the result dtype, as NumPy's ``_mean`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.reduce import REDUCTIONS
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer, as_tracer, current
from .functions_base import reject_unsupported
from .shaping import normalize_axes
from .ufuncs import apply_ufunc

BOOL = np.dtype(bool)


def _keep(x: Tracer, result: Tracer, axes: tuple[int, ...], keepdims: bool) -> Tracer:
    if not keepdims:
        return result
    shape = tuple(DimExpr.const(1) if i in axes else d for i, d in enumerate(x.aval.shape))
    return lax.reshape(result, shape)


def _make(name: str, prim_name: str, result_dtype: Callable[[np.dtype, Any], np.dtype],
          needs_nonempty: bool = False, combine: np.ufunc | None = None
          ) -> Callable[..., Tracer]:
    """A reduction; ``combine``: the ufunc that folds NumPy's ``initial=`` in (which
    also makes an empty max/min that value instead of an error)."""
    prim = REDUCTIONS[prim_name]

    def reduction(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
                  keepdims: Any = False, initial: Any = np._NoValue, **extra: Any) -> Tracer:
        given = initial is not np._NoValue and initial is not None and combine is not None
        reject_unsupported(name, {"out": out, "initial": None if given else initial, **extra})
        x = as_tracer(a)
        axes = normalize_axes(axis, x.ndim)
        if needs_nonempty and not given:
            extent = size(tuple(x.aval.shape[i] for i in axes))
            current().check(">=", extent, DimExpr.const(1), "ValueError",
                            f"zero-size array to reduction operation {name}imum which has "
                            "no identity" if name in ("max", "min") else
                            f"zero-size array to reduction operation {name}")
        acc = result_dtype(x.dtype, dtype)
        result = lax.reduce(prim, lax.convert(x, acc), axes)
        if given:
            assert combine is not None
            start = lax.convert(as_tracer(initial, acc, wrap=True), acc)
            result = lax.convert(apply_ufunc(combine, result, start), acc)
        return _keep(x, result, axes, bool(keepdims))

    reduction.__name__ = name
    return reduction


def sum_dtype(dtype: np.dtype, requested: Any) -> np.dtype:
    result: np.dtype = np.sum(np.zeros(1, dtype), dtype=requested).dtype
    return result


sum_ = _make("sum", "reduce_sum", sum_dtype, combine=np.add)
prod = _make("prod", "reduce_prod", sum_dtype, combine=np.multiply)
max_ = _make("max", "reduce_max", lambda d, r: d, needs_nonempty=True, combine=np.maximum)
min_ = _make("min", "reduce_min", lambda d, r: d, needs_nonempty=True, combine=np.minimum)
any_ = _make("any", "reduce_or", lambda d, r: BOOL)
all_ = _make("all", "reduce_and", lambda d, r: BOOL)


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: Any = False, **extra: Any) -> Tracer:
    reject_unsupported("mean", {"out": out, **extra})
    x = as_tracer(a)
    axes = normalize_axes(axis, x.ndim)
    result_dtype = np.mean(np.zeros(1, x.dtype), dtype=dtype).dtype
    total = sum_(x, axis=axes, dtype=result_dtype, keepdims=keepdims)
    count = lax.convert(lax.dim_value(size(tuple(x.aval.shape[i] for i in axes))), result_dtype)
    return lax.convert(apply_ufunc(np.true_divide, total, count), result_dtype)
