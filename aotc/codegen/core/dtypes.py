"""NumPy dtypes as LLVM types, and typed constants.

A value lives in a register as its *register type* (``i1`` for bool, so comparisons
and selects need no conversion) and in memory as its *memory type* (bool is one byte
holding 0 or 1, as NumPy and the C ABI store it). Signedness is not part of LLVM's
integer types; rules ask ``dtype.kind`` ('b', 'i', 'u', 'f', 'c') instead.

A complex value is the literal struct ``{T, T}`` (real, imaginary), NumPy's and C99's
interleaved layout. Rules only build it with ``insertvalue`` and take it apart with
``extractvalue`` (see :mod:`.complexarith`), and memory is read and written one part at a
time (:mod:`.values`), so after instcombine a loop over complex values is plain float
arithmetic on stride-2 accesses, which LLVM's vectorizer handles as interleaved groups.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir

from ...errors import UnsupportedError

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
F32 = ir.FloatType()
F64 = ir.DoubleType()

INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
FLOAT64 = np.dtype(np.float64)

_REGISTER: dict[np.dtype, ir.Type] = {
    BOOL: I1,
    **{np.dtype(f"{k}{n}"): ir.IntType(8 * n) for k in "iu" for n in (1, 2, 4, 8)},
    np.dtype("f4"): F32,
    FLOAT64: F64,
    np.dtype("c8"): ir.LiteralStructType([F32, F32]),
    np.dtype("c16"): ir.LiteralStructType([F64, F64]),
}


def check_supported(dtype: np.dtype) -> None:
    """Raise :class:`UnsupportedError` for dtypes codegen cannot handle (float16...)."""
    if dtype not in _REGISTER:
        raise UnsupportedError(f"dtype {dtype} is not supported by the code generator")


def reg_type(dtype: np.dtype) -> ir.Type:
    """The type a value of ``dtype`` has in a register (bool: ``i1``)."""
    check_supported(dtype)
    return _REGISTER[dtype]


def mem_type(dtype: np.dtype) -> ir.Type:
    """The type a value of ``dtype`` has in memory (bool: ``i8``)."""
    return I8 if dtype == BOOL else reg_type(dtype)


def bits(dtype: np.dtype) -> int:
    return 8 * dtype.itemsize


def constant(dtype: np.dtype, value: Any) -> ir.Constant:
    """A register constant; integers wrap to the dtype's width (two's complement)."""
    ty = reg_type(dtype)
    if dtype.kind == "f":
        return ir.Constant(ty, float(value))
    if dtype.kind == "c":
        z = complex(value)
        part = ty.elements[0]
        return ir.Constant(ty, [ir.Constant(part, z.real), ir.Constant(part, z.imag)])
    if dtype == BOOL:
        return ir.Constant(ty, int(bool(value)))
    width = bits(dtype)
    v = int(value) % (1 << width)
    if v >= 1 << (width - 1):
        v -= 1 << width
    return ir.Constant(ty, v)


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, int(value))


def i32(value: int) -> ir.Constant:
    return ir.Constant(I32, int(value))


def int_min(dtype: np.dtype) -> int:
    return int(np.iinfo(dtype).min)
