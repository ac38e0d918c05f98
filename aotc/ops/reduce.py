"""Reductions over a set of axes; the output drops those axes and keeps the dtype.

Tracing converts to the accumulation dtype first (``np.sum`` of int8 sums in int64), so
a reduction's input and output dtypes agree. ``keepdims`` is a reshape afterwards.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tracing.avals import AType
from .core import REDUCTION, ImplRule, impl_rules, primitive, type_rules

REDUCE_UFUNCS: dict[str, np.ufunc] = {
    "reduce_sum": np.add, "reduce_prod": np.multiply, "reduce_max": np.maximum,
    "reduce_min": np.minimum, "reduce_and": np.logical_and, "reduce_or": np.logical_or,
}
#: Reductions with no identity: an empty reduced extent is a runtime ValueError.
NO_IDENTITY = {"reduce_max", "reduce_min"}


def _reduce_type(x: Any, *, axes: tuple[int, ...]) -> tuple[Any, ...]:

    if sorted(set(axes)) != sorted(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"bad reduction axes {axes} for rank {x.ndim}")
    return (AType(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes)),)


def lowest(dtype: np.dtype) -> object:
    """Below every value (complex: lexicographically, as NumPy orders complex): where
    max starts, so what an empty extent gives."""
    if dtype.kind in "fc":
        return complex(-np.inf, -np.inf) if dtype.kind == "c" else -np.inf
    return False if dtype.kind == "b" else int(np.iinfo(dtype).min)


def highest(dtype: np.dtype) -> object:
    if dtype.kind in "fc":
        return complex(np.inf, np.inf) if dtype.kind == "c" else np.inf
    return True if dtype.kind == "b" else int(np.iinfo(dtype).max)


#: Where max and min start, for an empty extent (NumPy has no identity; tracing checks
#: that user-level reductions are not empty, aotc.tracing.derived's sizes may reduce nothing).
START = {"reduce_max": lowest, "reduce_min": highest}


def _make_impl(ufunc: np.ufunc, name: str) -> ImplRule:
    def impl(x: np.ndarray, *, axes: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        extra: dict[str, Any] = {"initial": START[name](x.dtype)} \
            if name in START and x.size == 0 else {}
        with np.errstate(all="ignore"):
            out = ufunc.reduce(x, axis=axes, dtype=x.dtype, **extra) if axes else x.copy()
        return (np.asarray(out, dtype=x.dtype),)
    return impl


REDUCTIONS = {}
for _name, _ufunc in REDUCE_UFUNCS.items():
    _p = primitive(_name, REDUCTION)
    REDUCTIONS[_name] = _p
    type_rules[_p] = _reduce_type
    impl_rules[_p] = _make_impl(_ufunc, _name)


# -- index-valued reductions and cumulative scans -------------------------------------

def _arg_type(x: Any, *, axis: int) -> tuple[Any, ...]:

    if not 0 <= axis < x.ndim:
        raise ValueError(f"bad axis {axis} for rank {x.ndim}")
    return (AType(np.dtype(np.int64), tuple(d for i, d in enumerate(x.shape) if i != axis)),)


#: ``argmax``/``argmin`` along one axis; NaN counts as the extreme (NumPy's rule) and the
#: first occurrence wins. The axis must be non-empty (tracing adds the check).
ARG_REDUCTIONS = {name: primitive(name, REDUCTION) for name in ("argmax", "argmin")}
def _arg_impl(fn: Any) -> Any:
    return lambda x, *, axis: (np.asarray(fn(x, axis=axis), np.int64),)


for _name, _p in ARG_REDUCTIONS.items():
    type_rules[_p] = _arg_type
    impl_rules[_p] = _arg_impl(getattr(np, _name))


def _cumulative_type(x: Any, *, axis: int) -> tuple[Any, ...]:

    if not 0 <= axis < x.ndim:
        raise ValueError(f"bad axis {axis} for rank {x.ndim}")
    return (AType(x.dtype, x.shape),)


#: Inclusive scans along one axis, accumulating in the input dtype.
CUMULATIVE = {name: primitive(name) for name in ("cumsum", "cumprod")}
def _cumulative_impl(fn: Any) -> Any:
    return lambda x, *, axis: (np.asarray(fn(x, axis=axis, dtype=x.dtype)),)


for _name, _p in CUMULATIVE.items():
    type_rules[_p] = _cumulative_type
    impl_rules[_p] = _cumulative_impl(getattr(np, _name))
