"""Data-dependent indexing and runtime errors that depend on values.

``take`` gathers along one axis with integer indices read at run time; an index out of
range makes the kernel fail with ``IndexError`` (NumPy's ``mode='raise'``), never read
out of bounds. ``raise_if`` raises ``error(message)`` from the kernel when any element
of its bool input is true; ``check`` does when a size condition fails where it runs (a
check inside a loop body or branch holds only where that code runs, so it cannot be
decided at the kernel's entry). Both have an effect, so DCE keeps them; the kernel's
table of such errors is :func:`aotc.ir.runtime_errors`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abi import KERNEL_ERRORS
from ..avals import AType
from .core import COMPARE, EFFECT, impl_rules, primitive, type_rules

take_p = primitive("take")
#: ``x[i0:i0+s0, i1:i1+s1, ...]`` with runtime starts (i64 scalars) and static sizes;
#: tracing checks bounds with ``raise_if`` first, so starts are always in range.
dynamic_slice_p = primitive("dynamic_slice")
#: A new version of ``x`` with the block at the runtime starts replaced by ``update``.
dynamic_update_slice_p = primitive("dynamic_update_slice")
raise_if_p = primitive("raise_if", EFFECT)
check_p = primitive("check", EFFECT)


class KernelError(Exception):
    """The reference interpreter's form of a kernel failing with ``error(message)``."""

    def __init__(self, error: str, message: str) -> None:
        self.error = error
        super().__init__(message)

    @staticmethod
    def of_code(code: int) -> KernelError:
        """The error of one of the global codes of :data:`aotc.abi.KERNEL_ERRORS`."""
        return KernelError(*KERNEL_ERRORS[code])


def _take_type(x: Any, indices: Any, *, axis: int) -> tuple[Any, ...]:

    if indices.dtype.kind not in "iu":
        raise ValueError("take: indices must be integers")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"take: axis {axis} out of range for rank {x.ndim}")
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    return (AType(x.dtype, shape),)


def _take_impl(x: np.ndarray, indices: np.ndarray, *, axis: int) -> tuple[np.ndarray, ...]:
    n = x.shape[axis]
    if indices.size and (np.any(indices >= n) or np.any(indices < -n)):
        raise KernelError.of_code(2)
    return (np.take(x, indices, axis=axis),)


def _raise_if_type(cond: Any, *, error: str, message: str) -> tuple[Any, ...]:
    if cond.dtype != np.bool_:
        raise ValueError("raise_if: the condition must be bool")
    return ()


def _raise_if_impl(cond: np.ndarray, *, error: str, message: str) -> tuple[np.ndarray, ...]:
    if np.any(cond):
        raise KernelError(error, message)
    return ()


def _check_type(*, op: str, lhs: Any, rhs: Any, error: str, message: str) -> tuple[Any, ...]:
    if op not in COMPARE:
        raise ValueError(f"check: unknown comparison {op!r}")
    return ()


def _check_impl(*, op: str, lhs: int, rhs: int, error: str, message: str
                ) -> tuple[np.ndarray, ...]:
    if not COMPARE[op](lhs, rhs):
        raise KernelError(error, message.format(lhs=lhs, rhs=rhs))
    return ()


def _starts_ok(x: Any, starts: tuple[Any, ...]) -> None:
    if len(starts) != x.ndim:
        raise ValueError("one start index per axis")
    for s in starts:
        if s.shape != () or s.dtype != np.dtype(np.int64):
            raise ValueError("start indices must be int64 scalars")


def _dynamic_slice_type(x: Any, *starts: Any, sizes: tuple[Any, ...]) -> tuple[Any, ...]:

    _starts_ok(x, starts)
    return (AType(x.dtype, tuple(sizes)),)


def _dynamic_slice_impl(x, *starts, sizes):
    index = tuple(slice(int(s), int(s) + n) for s, n in zip(starts, sizes, strict=True))
    return (np.array(x[index]),)


def _dynamic_update_slice_type(x: Any, update: Any, *starts: Any) -> tuple[Any, ...]:

    _starts_ok(x, starts)
    if update.dtype != x.dtype or update.ndim != x.ndim:
        raise ValueError("dynamic_update_slice: update must match the array's dtype and rank")
    return (AType(x.dtype, x.shape),)


def _dynamic_update_slice_impl(x, update, *starts):
    out = np.array(x, copy=True)
    index = tuple(slice(int(s), int(s) + n) for s, n in zip(starts, update.shape, strict=True))
    out[index] = update
    return (out,)


type_rules.update({take_p: _take_type, raise_if_p: _raise_if_type, check_p: _check_type,
                   dynamic_slice_p: _dynamic_slice_type,
                   dynamic_update_slice_p: _dynamic_update_slice_type})
impl_rules.update({take_p: _take_impl, raise_if_p: _raise_if_impl, check_p: _check_impl,
                   dynamic_slice_p: _dynamic_slice_impl,
                   dynamic_update_slice_p: _dynamic_update_slice_impl})
