"""Conversion between dtypes, as ``ndarray.astype`` does it on the target's architecture.

Most conversions are one LLVM instruction chosen by the (source kind, target kind)
pair. Float to integer is the exception: LLVM's ``fptosi``/``fptoui`` give poison for
NaN and out-of-range values, and NumPy leaves them to the C compiler. We reproduce
what x86-64 NumPy builds produce, without ever creating poison:

- ``cvt32``/``cvt64`` are x86's ``cvttsd2si``: truncate toward zero, and the
  "integer indefinite" ``INT_MIN`` for NaN and anything out of range.
- int64/int32: ``cvt64``/``cvt32``. int16/int8/uint16/uint8: ``cvt32``, then keep the
  low bits (``np.float64(300.7).astype(np.int8) == 44``; NaN gives 0).
- uint32/uint64: ``x >= 2**(w-1) ? cvt(x - 2**(w-1)) ^ SIGN : cvt(x)`` in width w,
  the sequence compilers emit for ``(unsigned)x`` (NaN and -inf give ``2**(w-1)``,
  +inf and too-large values give 0, negative values wrap: -1.0 -> 2**w - 1).

These results are platform behaviour, not a NumPy promise; they match NumPy 2.x on
x86-64 Linux, which the tests check. AArch64 saturates instead (:func:`_saturating`). The
target's instruction set names its behaviour
(:attr:`~aotc.codegen.targets.isa.InstructionSet.float_to_int`), and
:data:`FLOAT_TO_INT` has the rule for each.

Complex values convert part by part to another complex dtype; a real value becomes the
real part with a +0.0 imaginary part; a complex value becomes bool when either part is
nonzero, and any other dtype from its real part alone (NumPy's ``astype``, which warns
with ``ComplexWarning`` that the imaginary part is discarded).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ...types import real_dtype
from ..core.builder import KernelBuilder, existing
from ..core.dtypes import BOOL, FLOAT64, bits, constant, reg_type
from .complexarith import pack, parts, truth

_INT32 = np.dtype(np.int32)
_INT64 = np.dtype(np.int64)


def convert(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """``x`` (a register value of ``src``) as a register value of ``dst``."""
    if src == dst:
        return x
    if src.kind == "c" and dst.kind == "c":
        return pack(b, *(convert(b, p, real_dtype(src), real_dtype(dst)) for p in parts(b, x)))
    if src.kind == "c":
        if dst == BOOL:
            return truth(b, x)
        return convert(b, b.extract_value(x, 0), real_dtype(src), dst)
    if dst.kind == "c":
        part = real_dtype(dst)
        return pack(b, convert(b, x, src, part), constant(part, 0.0))
    return _RULES[(_kind(src), _kind(dst))](b, x, src, dst)


def _kind(dtype: np.dtype) -> str:
    return "b" if dtype == BOOL else "f" if dtype.kind == "f" else "i"


def _to_bool(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    zero = constant(src, 0)
    if src.kind == "f":
        return b.fcmp_unordered("!=", x, zero)  # NaN is True, as in NumPy
    return b.icmp_unsigned("!=", x, zero)


def _int_to_int(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    to = reg_type(dst)
    if bits(dst) < bits(src):
        return b.trunc(x, to)
    if bits(dst) == bits(src):
        return x
    return b.sext(x, to) if src.kind == "i" else b.zext(x, to)


def _int_to_float(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    if src.kind == "i":
        return b.sitofp(x, reg_type(dst))
    return b.uitofp(x, reg_type(dst))


def _float_to_float(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    if bits(dst) > bits(src):
        return b.fpext(x, reg_type(dst))
    return b.fptrunc(x, reg_type(dst))


def _truncating_cvt(b: KernelBuilder, x: ir.Value, src: np.dtype, width: int) -> ir.Value:
    """x86 ``cvtts?2si`` to ``width`` bits: INT_MIN for NaN and out-of-range input."""
    ity = ir.IntType(width)
    t = b.call(b.module.declare_intrinsic("llvm.trunc", [x.type]), [x])
    lo = b.fcmp_ordered(">=", t, constant(src, -(2.0 ** (width - 1))))
    hi = b.fcmp_ordered("<", t, constant(src, 2.0 ** (width - 1)))
    ok = b.and_(lo, hi)
    safe = b.fptosi(b.select(ok, x, constant(src, 0.0)), ity)
    return b.select(ok, safe, ir.Constant(ity, -(1 << (width - 1))))


def _unsigned_cvt(b: KernelBuilder, x: ir.Value, src: np.dtype, width: int) -> ir.Value:
    """What compilers emit for ``(uintW_t)x`` on x86-64 without AVX-512."""
    half = constant(src, 2.0 ** (width - 1))
    high = b.fcmp_ordered(">=", x, half)
    shifted = b.xor(_truncating_cvt(b, b.fsub(x, half), src, width),
                    ir.Constant(ir.IntType(width), -(1 << (width - 1))))
    return b.select(high, shifted, _truncating_cvt(b, x, src, width))


def _indefinite(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    if dst in (_INT32, _INT64):
        return _truncating_cvt(b, x, src, bits(dst))
    if dst.kind == "u" and bits(dst) >= 32:
        return _unsigned_cvt(b, x, src, bits(dst))
    return b.trunc(_truncating_cvt(b, x, src, 32), reg_type(dst))


def _saturating(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """AArch64's ``fcvtzs``/``fcvtzu`` as NumPy's aarch64 casting loops use them: NaN
    gives 0 and out-of-range values clamp, in 32 bits from float32 to 32-bit or narrower
    results (unsigned for uint32) and in 64 bits otherwise (unsigned for uint64); a
    narrower result keeps the low bits (``np.float32(300.7).astype(np.int8) == 44``).
    (NumPy's scalar tails convert float64 straight to 32 bits, so its own results for
    values out of the int32 range depend on where in the array they are.)"""
    width = 64 if 64 in (bits(src), bits(dst)) else 32
    unsigned = dst.kind == "u" and bits(dst) == width
    sign = "u" if unsigned else "i"
    name = f"llvm.fpto{'u' if unsigned else 's'}i.sat.i{width}.f{bits(src)}"
    fn = existing(b.module, name) or ir.Function(
        b.module, ir.FunctionType(ir.IntType(width), [x.type]), name)
    return _int_to_int(b, b.call(fn, [x]), np.dtype(f"{sign}{width // 8}"), dst)


#: How floats that do not fit convert, by the instruction set's name for it.
FLOAT_TO_INT = {"indefinite": _indefinite, "saturate": _saturating}


def _float_to_int(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    return FLOAT_TO_INT[b.isa.float_to_int](b, x, src, dst)


def _from_bool(b: KernelBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    if dst.kind == "f":
        return b.uitofp(x, reg_type(dst))
    return b.zext(x, reg_type(dst))


_RULES = {
    ("b", "i"): _from_bool, ("b", "f"): _from_bool,
    ("i", "b"): _to_bool, ("f", "b"): _to_bool,
    ("i", "i"): _int_to_int, ("i", "f"): _int_to_float,
    ("f", "f"): _float_to_float, ("f", "i"): _float_to_int,
}


def to_float64(b: KernelBuilder, x: ir.Value, src: np.dtype) -> ir.Value:
    return convert(b, x, src, FLOAT64)


def to_bool(b: KernelBuilder, x: ir.Value, src: np.dtype) -> ir.Value:
    return convert(b, x, src, BOOL)
