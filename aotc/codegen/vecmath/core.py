"""Building blocks of the vector math kernels: float formats, exact arithmetic, scaling.

Every kernel is straight-line code over one element: float and integer arithmetic on the
value's bits, ``select`` for special cases, no branches, no calls except intrinsics that
are single instructions (``llvm.fmuladd``, ``llvm.fabs``, ``llvm.copysign``). The loop
vectorizer then widens a kernel like any other arithmetic, at whatever width the target
has (2 doubles with SSE, 8 with AVX-512).

No instruction here carries fast-math flags, whatever the target's setting: the
error-free transformations (``two_sum``, ``two_prod``) and the rounding trick of
:meth:`Math.round_to_int` are exactly the code ``reassoc`` would "simplify" away.
``fmuladd`` is the one contraction we allow: it fuses where the target has FMA and is a
multiply and an add otherwise, and the accuracy bounds hold either way. Exact products
use Dekker's splitting instead of ``llvm.fma``, which would be a libm call on
``x86-64-v2`` (no FMA instructions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias

import numpy as np
from llvmlite import ir

Val: TypeAlias = ir.Value


@dataclass(frozen=True)
class Fmt:
    """An IEEE binary format: its LLVM types and the constants the kernels need."""

    ty: ir.Type
    ity: ir.IntType
    mant: int   # explicit mantissa bits (52, 23)
    bias: int   # exponent bias (1023, 127)

    @property
    def bits(self) -> int:
        return int(self.ity.width)

    @property
    def precision(self) -> int:
        return self.mant + 1

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(f"f{self.bits // 8}")


F64 = Fmt(ir.DoubleType(), ir.IntType(64), 52, 1023)
F32 = Fmt(ir.FloatType(), ir.IntType(32), 23, 127)
FORMATS = {np.dtype("f8"): F64, np.dtype("f4"): F32}


class Math:
    """Float helpers on an ``IRBuilder`` for one format (no fast-math flags, ever)."""

    def __init__(self, b: ir.IRBuilder, fmt: Fmt) -> None:
        self.b = b
        self.fmt = fmt

    # -- constants and plain arithmetic -------------------------------------------------
    def c(self, value: float) -> ir.Constant:
        return ir.Constant(self.fmt.ty, float(value))

    def ci(self, value: int) -> ir.Constant:
        return ir.Constant(self.fmt.ity, int(value))

    def add(self, x: Val, y: Val) -> Val:
        return self.b.fadd(x, y)

    def sub(self, x: Val, y: Val) -> Val:
        return self.b.fsub(x, y)

    def mul(self, x: Val, y: Val) -> Val:
        return self.b.fmul(x, y)

    def div(self, x: Val, y: Val) -> Val:
        return self.b.fdiv(x, y)

    def neg(self, x: Val) -> Val:
        return self.b.fneg(x)

    def _intrinsic(self, name: str, *args: Val) -> Val:
        ty = args[0].type
        fn = self.b.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * len(args)))
        return self.b.call(fn, list(args))

    def mad(self, x: Val, y: Val, z: Val) -> Val:
        """``x * y + z``, fused where the target has FMA."""
        return self._intrinsic("llvm.fmuladd", x, y, z)

    def abs(self, x: Val) -> Val:
        return self._intrinsic("llvm.fabs", x)

    def sqrt(self, x: Val) -> Val:
        """Correctly rounded (one instruction)."""
        return self._intrinsic("llvm.sqrt", x)

    def copysign(self, mag: Val, sign: Val) -> Val:
        return self._intrinsic("llvm.copysign", mag, sign)

    def trunc(self, x: Val) -> Val:
        return self._intrinsic("llvm.trunc", x)

    def poly(self, x: Val, coeffs: Sequence[float]) -> Val:
        """``sum(coeffs[k] * x**k)`` by Horner's rule."""
        acc: Val = self.c(coeffs[-1])
        for coeff in reversed(coeffs[:-1]):
            acc = self.mad(acc, x, self.c(coeff))
        return acc

    # -- comparisons and selection ------------------------------------------------------
    def cmp(self, op: str, x: Val, y: Val) -> Val:
        """Ordered comparison (false when either side is NaN)."""
        return self.b.fcmp_ordered(op, x, y)

    def isnan(self, x: Val) -> Val:
        return self.b.fcmp_unordered("uno", x, x)

    def sel(self, cond: Val, x: Val, y: Val) -> Val:
        return self.b.select(cond, x, y)

    def clamp(self, x: Val, lo: float, hi: float) -> Val:
        """``x`` limited to ``[lo, hi]``; NaN stays NaN."""
        x = self.sel(self.cmp(">", x, self.c(hi)), self.c(hi), x)
        return self.sel(self.cmp("<", x, self.c(lo)), self.c(lo), x)

    # -- bits ---------------------------------------------------------------------------
    def as_int(self, x: Val) -> Val:
        return self.b.bitcast(x, self.fmt.ity)

    def as_float(self, i: Val) -> Val:
        return self.b.bitcast(i, self.fmt.ty)

    def signbit(self, x: Val) -> Val:
        return self.b.icmp_signed("<", self.as_int(x), self.ci(0))

    def round_to_int(self, x: Val) -> tuple[Val, Val]:
        """``(float n, int n)`` for ``n = rint(x)``, ``|x| < 2**(mant - 1)``.

        Adding ``1.5 * 2**mant`` rounds to an integer in the low mantissa bits, where an
        integer subtraction reads it: no float-to-int conversion, which x86 only has
        for 64-bit lanes with AVX-512DQ.
        """
        shifter = self.c(1.5 * 2.0**self.fmt.mant)
        t = self.add(x, shifter)
        n_int = self.b.sub(self.as_int(t), self.as_int(shifter))
        return self.sub(t, shifter), n_int

    def int_to_float(self, i: Val) -> Val:
        """An integer ``|i| < 2**(mant - 1)`` as a float, by the inverse of the trick."""
        shifter = self.c(1.5 * 2.0**self.fmt.mant)
        return self.sub(self.as_float(self.b.add(self.as_int(shifter), i)), shifter)

    def pow2(self, n: Val) -> Val:
        """``2.0**n`` for an integer ``n`` in the normal exponent range."""
        biased = self.b.add(n, self.ci(self.fmt.bias))
        return self.as_float(self.b.shl(biased, self.ci(self.fmt.mant)))

    def scale(self, x: Val, n: Val) -> Val:
        """``x * 2**n``, rounded once, for ``|n| <= 2 * bias`` and ``1 <= |x| < 2``-ish.

        ``n`` is split in two halves that are each a normal power of two; the first
        product is exact, so a subnormal result is rounded once, correctly.
        """
        half = self.b.ashr(n, self.ci(1))
        rest = self.b.sub(n, half)
        return self.mul(self.mul(x, self.pow2(half)), self.pow2(rest))

    # -- error-free transformations -----------------------------------------------------
    def two_sum(self, x: Val, y: Val) -> tuple[Val, Val]:
        """``s + e == x + y`` exactly, ``s = fl(x + y)`` (Knuth, any magnitudes)."""
        s = self.add(x, y)
        yy = self.sub(s, x)
        xx = self.sub(s, yy)
        return s, self.add(self.sub(x, xx), self.sub(y, yy))

    def fast_two_sum(self, x: Val, y: Val) -> tuple[Val, Val]:
        """``two_sum`` for ``|x| >= |y|`` (Dekker)."""
        s = self.add(x, y)
        return s, self.sub(y, self.sub(s, x))

    def split(self, x: Val) -> tuple[Val, Val]:
        """Veltkamp: ``hi + lo == x`` with each half fitting in half the mantissa."""
        factor = self.c(2.0**((self.fmt.precision + 1) // 2) + 1)
        t = self.mul(x, factor)
        hi = self.sub(t, self.sub(t, x))
        return hi, self.sub(x, hi)

    def two_prod(self, x: Val, y: Val) -> tuple[Val, Val]:
        """``p + e == x * y`` exactly, ``p = fl(x * y)`` (Dekker; no FMA needed)."""
        p = self.mul(x, y)
        xh, xl = self.split(x)
        yh, yl = self.split(y)
        e = self.sub(self.mul(xh, yh), p)
        e = self.add(e, self.mul(xh, yl))
        e = self.add(e, self.mul(xl, yh))
        return p, self.add(e, self.mul(xl, yl))


def split_constant(digits: str, bits: int) -> tuple[float, float]:
    """The constant written in ``digits`` (decimal, 40+ digits) as ``hi + lo``, ``hi``
    holding at most ``bits`` significant bits so ``n * hi`` is exact for integers ``n``
    of up to ``precision - bits`` bits, and ``lo`` the correctly rounded rest."""
    exact = Fraction(digits)
    mant, exp = math.frexp(float(exact))
    hi = math.ldexp(math.floor(mant * 2.0**bits), exp - bits)
    return hi, float(exact - Fraction(hi))


Body = Callable[..., Val]


def kernel_function(module: ir.Module, name: str, fmt: Fmt, nargs: int, body: Body
                    ) -> ir.Function:
    """Define (once per module) ``fmt name(fmt, ...)`` as an internal, always-inlined
    function whose body is ``body(math, *args)``.

    A function instead of inline code keeps the unoptimized module small when a kernel
    calls ``exp`` many times; ``alwaysinline`` puts the straight-line body back into
    each loop before the vectorizer runs.
    """
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(fmt.ty, [fmt.ty] * nargs), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(body(Math(b, fmt), *fn.args))
    return fn
