"""NumPy's complex ufuncs on one element: the kind 'c' scalar rules of the functions.

``exp``, ``log``, ``sqrt``, ``sin``, ``cos``, ``sinh``, ``cosh`` are glibc's algorithms
(:mod:`.complexmath`), which NumPy calls. ``exp2``/``log2``/``log10`` scale the parts by a
constant before ``exp`` or after ``log``, and ``expm1``/``log1p`` are NumPy's own formulas
(``nc_expm1``, ``nc_log1p``), each operation in the precision NumPy uses. ``pow`` is
npymath's ``npy_cpow``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ...types import real_dtype
from ..vecmath import VECMATH_RULES
from ..vecmath.core import F64, Math
from .complexarith import mul_c99, mul_unfused, pack, parts, select, smith_divide
from .complexmath import ccos, ccosh, cexp, clog, csin, csinh, csqrt, hypot, unary_rule


def _scaled_parts(rule: Callable[..., ir.Value], digits: str, before: bool
                  ) -> Callable[..., ir.Value]:
    """NumPy's exp2/log2/log10: each part times a constant (npymath's ``NPY_LOGE2``...,
    rounded to the operand's precision) before ``exp`` (exp2) or after ``log``."""
    def scaled(b: ir.IRBuilder, dtype: np.dtype, z: ir.Value) -> ir.Value:
        k = ir.Constant(parts(b, z)[0].type, float(real_dtype(dtype).type(digits)))
        if before:
            return rule(b, dtype, pack(b, *(b.fmul(p, k) for p in parts(b, z))))
        return pack(b, *(b.fmul(p, k) for p in parts(b, rule(b, dtype, z))))
    return scaled


def _log1p(b: ir.IRBuilder, dtype: np.dtype, z: ir.Value) -> ir.Value:
    """NumPy's own ``nc_log1p``: log(hypot(re + 1, im)) + i atan2(im, re + 1), with
    ``re + 1`` and the modulus rounded in the operand's precision as NumPy rounds them
    (near |z + 1| = 1 that rounding is most of the error, so it must be the same)."""
    re, im = parts(b, z)
    part = re.type
    x = b.fadd(re, ir.Constant(part, 1.0))
    m = Math(b, F64)
    if part != F64.ty:
        x, im = b.fpext(x, F64.ty), b.fpext(im, F64.ty)
    h = hypot(m, x, im)
    if part != F64.ty:
        h = b.fpext(b.fptrunc(h, part), F64.ty)
    out = [VECMATH_RULES[name](b, np.dtype("f8"), *args)
           for name, args in (("log", (h,)), ("arctan2", (im, x)))]
    if part != F64.ty:
        out = [b.fptrunc(v, part) for v in out]
    return pack(b, *out)


def _expm1(b: ir.IRBuilder, dtype: np.dtype, z: ir.Value) -> ir.Value:
    """NumPy's own ``nc_expm1``: expm1(x) cos y - 2 sin(y/2)**2 + i exp(x) sin y, every
    real function and operation in the operand's precision, as NumPy evaluates it (in
    complex64, exp(700) * sin(0) is inf * 0: NaN)."""
    x, y = parts(b, z)
    part = real_dtype(dtype)

    def call(name: str, v: ir.Value) -> ir.Value:
        return VECMATH_RULES[name](b, part, v)

    half, two = ir.Constant(x.type, 0.5), ir.Constant(x.type, 2.0)
    a = call("sin", b.fmul(y, half))
    re = b.fsub(b.fmul(call("expm1", x), call("cos", y)), b.fmul(b.fmul(two, a), a))
    return pack(b, re, b.fmul(call("exp", x), call("sin", y)))


_EXP, _LOG = unary_rule("exp", cexp), unary_rule("log", clog)

#: primitive name -> kind 'c' scalar rule (``pow`` is :func:`power`)
COMPLEX_MATH_RULES: dict[str, Callable[..., ir.Value]] = {
    "exp": _EXP, "log": _LOG, "sqrt": unary_rule("sqrt", csqrt),
    "sin": unary_rule("sin", csin), "cos": unary_rule("cos", ccos),
    "sinh": unary_rule("sinh", csinh), "cosh": unary_rule("cosh", ccosh),
    "exp2": _scaled_parts(_EXP, "0.693147180559945309417232121458176568", True),
    "log2": _scaled_parts(_LOG, "1.442695040888963407359924681001892137", False),
    "log10": _scaled_parts(_LOG, "0.434294481903251827651128918916605082", False),
    "expm1": _expm1, "log1p": _log1p,
}


# -- pow ---------------------------------------------------------------------------------

def power(b: ir.IRBuilder, dtype: np.dtype, a: ir.Value, e: ir.Value, *,
          scalar_exponent: bool = False) -> ir.Value:
    """npymath's ``npy_cpow``: ``1`` for a zero exponent, ``0`` (or NaN) for a zero base,
    repeated multiplication for an integer exponent ``|n| < 100`` (``1 / a**|n|`` for a
    negative one), else glibc's ``cpow``, ``exp(e * log(a))``."""
    ty = parts(b, a)[0].type
    (ar, ai), (er, ei) = parts(b, a), parts(b, e)
    zero, one = ir.Constant(ty, 0.0), ir.Constant(ty, 1.0)
    one_c = pack(b, one, zero)
    # general: exp(e * log(a)), the product as C's complex '*' (libgcc's __muldc3) in the
    # operand's precision, as glibc's cpowf rounds it (the signs of underflowed and
    # overflowed parts follow that rounding)
    general = _EXP(b, dtype, mul_c99(b, e, _LOG(b, dtype, a)))
    # integer exponents: n in (-100, 100), binary powering from 1 (npymath's loop)
    n = b.fptosi(b.select(b.fcmp_ordered("<", b.call(_fabs(b, ty), [er]),
                                         ir.Constant(ty, 100.0)), er, zero), ir.IntType(32))
    count = b.select(b.icmp_signed("<", n, ir.Constant(ir.IntType(32), 0)), b.neg(n), n)
    acc, p = one_c, a
    for bit in range(7):
        has = b.icmp_unsigned("!=", b.and_(count, ir.Constant(ir.IntType(32), 1 << bit)),
                              ir.Constant(ir.IntType(32), 0))
        acc = select(b, has, mul_unfused(b, acc, p), acc)
        p = mul_unfused(b, p, p)
    acc = select(b, b.fcmp_ordered("<", er, zero), smith_divide(b, one_c, acc), acc)
    square = mul_unfused(b, a, a)
    by_n = {1: a, 2: square, 3: mul_unfused(b, a, square)}
    for k, value in by_n.items():
        acc = select(b, b.icmp_signed("==", n, ir.Constant(ir.IntType(32), k)), value, acc)
    integral = b.and_(b.fcmp_ordered("==", ei, zero),
                      b.and_(b.fcmp_ordered("<", b.call(_fabs(b, ty), [er]),
                                            ir.Constant(ty, 100.0)),
                             b.fcmp_ordered("==", b.call(_trunc(b, ty), [er]), er)))
    out = select(b, integral, acc, general)
    # a zero base: 0 for Re e > 0, else NaN + NaN i
    base_zero = b.and_(b.fcmp_ordered("==", ar, zero), b.fcmp_ordered("==", ai, zero))
    nan = ir.Constant(ty, math.nan)
    zero_pow = select(b, b.fcmp_ordered(">", er, zero), pack(b, zero, zero), pack(b, nan, nan))
    out = select(b, base_zero, zero_pow, out)
    exponent_zero = b.and_(b.fcmp_ordered("==", er, zero), b.fcmp_ordered("==", ei, zero))
    return select(b, exponent_zero, one_c, out)


def _fabs(b: ir.IRBuilder, ty: ir.Type) -> ir.Function:
    return b.module.declare_intrinsic("llvm.fabs", [ty], ir.FunctionType(ty, [ty]))


def _trunc(b: ir.IRBuilder, ty: ir.Type) -> ir.Function:
    return b.module.declare_intrinsic("llvm.trunc", [ty], ir.FunctionType(ty, [ty]))
