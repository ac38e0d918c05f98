"""Data-dependent indexing and runtime errors that depend on values.

``take`` gathers along one axis with integer indices read at run time; an index out of
range makes the kernel fail with ``IndexError`` (NumPy's ``mode='raise'``), never read
out of bounds. ``raise_if`` fails the kernel with a code from ``aotc.abi.KERNEL_ERRORS``
when any element of its bool input is true; it has an effect, so DCE keeps it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import impl_rules, primitive, type_rules

EFFECT = "effect"

take_p = primitive("take")
raise_if_p = primitive("raise_if", EFFECT)


class KernelError(Exception):
    """The reference interpreter's form of a nonzero kernel return code."""

    def __init__(self, code: int) -> None:
        from ..abi import KERNEL_ERRORS

        self.code = code
        self.error, message = KERNEL_ERRORS[code]
        super().__init__(message)


def _take_type(x: Any, indices: Any, *, axis: int) -> tuple[Any, ...]:
    from ..ir import AType

    if indices.dtype.kind not in "iu":
        raise ValueError("take: indices must be integers")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"take: axis {axis} out of range for rank {x.ndim}")
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    return (AType(x.dtype, shape),)


def _take_impl(x: np.ndarray, indices: np.ndarray, *, axis: int) -> tuple[np.ndarray, ...]:
    n = x.shape[axis]
    if indices.size and (np.any(indices >= n) or np.any(indices < -n)):
        raise KernelError(2)
    return (np.take(x, indices, axis=axis),)


def _raise_if_type(cond: Any, *, code: int) -> tuple[Any, ...]:
    if cond.dtype != np.bool_:
        raise ValueError("raise_if: the condition must be bool")
    return ()


def _raise_if_impl(cond: np.ndarray, *, code: int) -> tuple[np.ndarray, ...]:
    if np.any(cond):
        raise KernelError(code)
    return ()


type_rules.update({take_p: _take_type, raise_if_p: _raise_if_type})
impl_rules.update({take_p: _take_impl, raise_if_p: _raise_if_impl})
