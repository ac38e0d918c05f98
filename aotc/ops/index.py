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

import time
from typing import Any

import numpy as np

from ..abi import DETAILS, KERNEL_ERRORS
from ..tracing.avals import AType
from ..tracing.messages import fill
from .core import COMPARE, EFFECT, STATEFUL, impl_rules, primitive, type_rules

take_p = primitive("take")
#: ``compress[size] x mask``: the items of ``x`` (sub-arrays over the axes after the
#: mask's) where ``mask`` (``x``'s leading shape) is true, in C order; ``size`` is their
#: count, a size bound while the kernel runs.
compress_p = primitive("compress")
raise_if_p = primitive("raise_if", EFFECT)
check_p = primitive("check", EFFECT)
#: ``python_number[argument] x``: whether scalar argument ``x`` (parameter number
#: ``argument``) was passed as a Python number, not a NumPy scalar: the caller says so
#: in ``aotc_runtime.argument_bits`` (see ``numpy_api.pynumbers``). The reference
#: interpreter is called with NumPy values: false.
python_number_p = primitive("python_number")
#: Scalar arguments past this many are not asked about (NumPy's answer for them).
PYTHON_NUMBER_BITS = 64
#: ``c_contiguous[argument] x``: whether array argument number ``argument`` (below 64),
#: of which ``x`` is a value, is C-contiguous, which decides whether NumPy's reshape of it
#: is a view: the caller says so in ``aotc_runtime.argument_bits``. The reference
#: interpreter asks the NumPy array it has for ``x``.
c_contiguous_p = primitive("c_contiguous")
#: ``clock``: the wall clock's seconds since the epoch, as a float64, read where it runs
#: (``time.time()``; ``time.perf_counter()`` and ``time.monotonic()`` read it too, so
#: their differences are elapsed seconds). Stateful, so two reads stay two; an effect,
#: so no read is folded into a constant of the build.
clock_p = primitive("clock", EFFECT, STATEFUL)


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
    bad = indices[(indices >= n) | (indices < -n)] if indices.size else indices
    if bad.size:
        error, message = KERNEL_ERRORS[2]
        raise KernelError(error, fill(message, int(bad.flat[0]), n, bits=False))
    return (np.take(x, indices, axis=axis),)


def _raise_if_type(cond: Any, *detail: Any, error: str, message: str) -> tuple[Any, ...]:
    """``raise_if cond [lhs rhs]``: a scalar condition may carry two scalars (bool,
    integers or floats) that fill the message's ``{lhs}`` and ``{rhs}`` (the index and
    the size; see :mod:`aotc.tracing.messages`)."""
    if cond.dtype != np.bool_:
        raise ValueError("raise_if: the condition must be bool")
    if detail and (cond.ndim or not 2 <= len(detail) <= DETAILS
                   or any(d.shape != () or d.dtype.kind not in "biuf" for d in detail)):
        raise ValueError("raise_if: details are 2 to 4 real scalars, for a scalar condition")
    return ()


def _raise_if_impl(cond: np.ndarray, *detail: np.ndarray, error: str, message: str
                   ) -> tuple[np.ndarray, ...]:
    if np.any(cond):
        if detail:
            message = fill(message, *(d[()] for d in detail), bits=False)
        raise KernelError(error, message)
    return ()


def _check_type(*, op: str, lhs: Any, rhs: Any, error: str, message: str) -> tuple[Any, ...]:
    if op not in COMPARE:
        raise ValueError(f"check: unknown comparison {op!r}")
    return ()


def _check_impl(*, op: str, lhs: int, rhs: int, error: str, message: str
                ) -> tuple[np.ndarray, ...]:
    if not COMPARE[op](lhs, rhs):
        raise KernelError(error, fill(message, lhs, rhs, bits=False))
    return ()


def _compress_type(x: Any, mask: Any, *, size: Any) -> tuple[Any, ...]:
    if mask.dtype != np.bool_ or tuple(x.shape[:mask.ndim]) != tuple(mask.shape):
        raise ValueError("compress: the mask is bool and has the array's leading shape")
    return (AType(x.dtype, (size,) + tuple(x.shape[mask.ndim:])),)


def _compress_impl(x: np.ndarray, mask: np.ndarray, *, size: int) -> tuple[np.ndarray, ...]:
    out = x[mask]
    assert out.shape[0] == size, "compress: the bound size is the mask's count"
    return (out,)


def _python_number_type(x: Any, *, argument: int) -> tuple[Any, ...]:
    if x.ndim:
        raise ValueError("python_number: of a scalar argument")
    return (AType(np.dtype(np.bool_), ()),)


type_rules.update({compress_p: _compress_type, take_p: _take_type,
                   raise_if_p: _raise_if_type, check_p: _check_type,
                   python_number_p: _python_number_type,
                   c_contiguous_p: lambda x, *, argument: (AType(np.dtype(np.bool_), ()),),
                   clock_p: lambda: (AType(np.dtype(np.float64), ()),)})
impl_rules.update({compress_p: _compress_impl, take_p: _take_impl,
                   raise_if_p: _raise_if_impl, check_p: _check_impl,
                   python_number_p: lambda x, *, argument: (np.asarray(False),),
                   c_contiguous_p: lambda x, *, argument: (np.asarray(x.flags.c_contiguous),),
                   clock_p: lambda: (np.asarray(time.time()),)})
