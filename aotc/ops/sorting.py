"""Sorting primitives: ``sort``, ``argsort`` along one axis, and ``searchsorted``.

Both sorts are **stable** and use NumPy's order: NaN after every number, ``-0.0`` equal
to ``0.0`` (so a stable sort keeps their order and their bits, as NumPy's
``kind='stable'`` does). Every ``kind`` NumPy accepts is this sort, which is a valid
answer for NumPy's unstable kinds as well. Everything built on sorting (``unique``,
``median``, ``percentile``, ``partition``) is a decomposition over these two in
:mod:`aotc.numpy_api`.

``searchsorted[side] a v``: for each element of ``v`` (any shape), the index where it
would be inserted in the sorted 1-D ``a`` (NumPy's ``side='left'``/``'right'``, NaN
last), by binary search. ``a`` and ``v`` share a dtype (tracing converts first).

Complex values are not ordered here: the type rules refuse them (the NumPy functions
refuse them first, with a located message).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tracing.avals import AType
from .core import impl_rules, primitive, type_rules

sort_p = primitive("sort")
argsort_p = primitive("argsort")
searchsorted_p = primitive("searchsorted")

I64 = np.dtype(np.int64)
#: The dtype kinds sorting orders: bool, signed and unsigned integers, floats.
ORDERED_KINDS = "biuf"


def _check_ordered(name: str, dtype: np.dtype) -> None:
    if dtype.kind not in ORDERED_KINDS:
        raise ValueError(f"{name}: values of dtype {dtype} are not ordered")


def _along_axis(name: str, x: Any, axis: int) -> None:
    _check_ordered(name, x.dtype)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"{name}: axis {axis} out of range for rank {x.ndim}")


def _sort_type(x: Any, *, axis: int) -> tuple[Any, ...]:
    _along_axis("sort", x, axis)
    return (AType(x.dtype, x.shape),)


def _argsort_type(x: Any, *, axis: int) -> tuple[Any, ...]:
    _along_axis("argsort", x, axis)
    return (AType(I64, x.shape),)


def _searchsorted_type(a: Any, v: Any, *, side: str) -> tuple[Any, ...]:
    _check_ordered("searchsorted", a.dtype)
    if a.ndim != 1 or a.dtype != v.dtype:
        raise ValueError("searchsorted: a is 1-D and shares v's dtype")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side {side!r}")
    return (AType(I64, v.shape),)


def _sort_impl(x: np.ndarray, *, axis: int) -> tuple[np.ndarray, ...]:
    return (np.sort(x, axis=axis, kind="stable"),)


def _argsort_impl(x: np.ndarray, *, axis: int) -> tuple[np.ndarray, ...]:
    return (np.argsort(x, axis=axis, kind="stable").astype(I64),)


def _searchsorted_impl(a: np.ndarray, v: np.ndarray, *, side: str) -> tuple[np.ndarray, ...]:
    return (np.asarray(np.searchsorted(a, v, side=side), I64),)  # type: ignore[call-overload]


type_rules.update({sort_p: _sort_type, argsort_p: _argsort_type,
                   searchsorted_p: _searchsorted_type})
impl_rules.update({sort_p: _sort_impl, argsort_p: _argsort_impl,
                   searchsorted_p: _searchsorted_impl})
