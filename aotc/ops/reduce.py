"""Reductions over a set of axes; the output drops those axes and keeps the dtype.

Tracing converts to the accumulation dtype first (``np.sum`` of int8 sums in int64), so
a reduction's input and output dtypes agree. ``keepdims`` is a reshape afterwards.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import REDUCTION, impl_rules, primitive, type_rules

REDUCE_UFUNCS: dict[str, np.ufunc] = {
    "reduce_sum": np.add, "reduce_prod": np.multiply, "reduce_max": np.maximum,
    "reduce_min": np.minimum, "reduce_and": np.logical_and, "reduce_or": np.logical_or,
}
#: Reductions with no identity: an empty reduced extent is a runtime ValueError.
NO_IDENTITY = {"reduce_max", "reduce_min"}


def _reduce_type(x: Any, *, axes: tuple[int, ...]) -> tuple[Any, ...]:
    from ..ir import AType

    if sorted(set(axes)) != sorted(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"bad reduction axes {axes} for rank {x.ndim}")
    return (AType(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes)),)


def _make_impl(ufunc: np.ufunc):
    def impl(x: np.ndarray, *, axes: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        with np.errstate(all="ignore"):
            out = ufunc.reduce(x, axis=axes, dtype=x.dtype) if axes else x.copy()
        return (np.asarray(out, dtype=x.dtype),)
    return impl


REDUCTIONS = {}
for _name, _ufunc in REDUCE_UFUNCS.items():
    _p = primitive(_name, REDUCTION)
    REDUCTIONS[_name] = _p
    type_rules[_p] = _reduce_type
    impl_rules[_p] = _make_impl(_ufunc)
