"""Complex arithmetic on one element: the kind 'c' rules of :data:`.scalar.SCALAR_RULES`.

A complex register value is the struct ``{T, T}`` (see :mod:`.dtypes`); :func:`parts` and
:func:`pack` are the only ways in and out, so LLVM sees plain float arithmetic once
instcombine has folded ``extractvalue(insertvalue(...))``. Each rule is NumPy 2's loop
for that ufunc, operation for operation, so results are NumPy's bit for bit where NumPy's
own loops agree with each other:

- ``*`` is NumPy's SIMD loop, ``re = fma(ar, br, -(ai*bi))``, ``im = fma(ar, bi, ai*br)``
  on targets with FMA (``llvm.fmuladd``) and unfused elsewhere, as NumPy dispatches;
  of two scalars (rank 0) it is NumPy's scalar ``*``, always unfused.
- ``/`` is Smith's method exactly as ``CDOUBLE_divide`` (``1/(0+0j)`` is ``inf+nanj``).
- ``abs`` is NumPy's SIMD ``cabsolute``: ``larger * sqrt(1 + (smaller/larger)**2)``, no
  overflow for huge parts, an infinite part wins over NaN.
- comparisons, ``maximum``/``minimum``/``fmax``/``fmin`` order lexicographically with
  NumPy's NaN rules (``CGE``/``CLE``...); predicates test either part.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ...types import real_dtype
from ..core.builder import KernelBuilder
from ..core.dtypes import constant
from .mathlib import call_libm, intrinsic

Fn = Callable[..., ir.Value]


# -- packing ---------------------------------------------------------------------------

def parts(b: ir.IRBuilder, z: ir.Value) -> tuple[ir.Value, ir.Value]:
    """A complex register value's real and imaginary parts."""
    return b.extract_value(z, 0), b.extract_value(z, 1)


def pack(b: ir.IRBuilder, re: ir.Value, im: ir.Value) -> ir.Value:
    """The complex register value ``re + im*1j`` (parts of one float type)."""
    ty = ir.LiteralStructType([re.type, re.type])
    return b.insert_value(b.insert_value(ir.Constant(ty, None), re, 0), im, 1)


def _zero(dtype: np.dtype) -> ir.Constant:
    return constant(real_dtype(dtype), 0.0)


def _fabs(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.call(intrinsic(b.module, "llvm.fabs", x.type, 1), [x])


def _fmuladd(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    return b.call(intrinsic(b.module, "llvm.fmuladd", x.type, 3), [x, y, z])


def _isnan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_unordered("uno", x, x)


# -- arithmetic ------------------------------------------------------------------------

def _componentwise(op: str) -> Fn:
    """``+`` and ``-``: part by part."""
    def rule(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        (xr, xi), (yr, yi) = parts(b, x), parts(b, y)
        return pack(b, getattr(b, op)(xr, yr, flags=b.fp_flags),
                    getattr(b, op)(xi, yi, flags=b.fp_flags))
    return rule


def mul(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value,
        of_scalars: bool = False) -> ir.Value:
    """NumPy's SIMD complex product (``simd_cmul``: a multiply, then a fused
    multiply-add/sub where the target has FMA); of scalars (rank 0: ``z[i] * w[j]`` in
    a loop), NumPy's scalar product, unfused."""
    if of_scalars:
        return mul_unfused(b, x, y)
    (ar, ai), (br, bi) = parts(b, x), parts(b, y)
    re = _fmuladd(b, ar, br, b.fneg(b.fmul(ai, bi)))
    im = _fmuladd(b, ar, bi, b.fmul(ai, br))
    return pack(b, re, im)


def mul_unfused(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """``(ar*br - ai*bi, ar*bi + ai*br)``, each operation rounded: NumPy's scalar loops
    (products of reductions, npymath's ``cmul`` in integer powers)."""
    (ar, ai), (br, bi) = parts(b, x), parts(b, y)
    return pack(b, b.fsub(b.fmul(ar, br), b.fmul(ai, bi)),
                b.fadd(b.fmul(ar, bi), b.fmul(ai, br)))


def mul_c99(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """C99's complex ``*`` as libgcc's ``__muldc3`` computes it (glibc's ``cpow`` uses
    it): the unfused product, unless both parts are NaN where an operand is infinite or
    a product overflowed; then NaN parts become zeros, infinite parts ±1, and the
    product is recomputed times infinity (Annex G: an infinite factor gives an infinite
    product)."""
    (a, bb), (c, d) = parts(b, x), parts(b, y)
    ty = a.type
    inf, zero, one = (ir.Constant(ty, v) for v in (float("inf"), 0.0, 1.0))

    def copysign(mag: ir.Value, sign: ir.Value) -> ir.Value:
        return b.call(intrinsic(b.module, "llvm.copysign", ty, 2), [mag, sign])

    def isinf(v: ir.Value) -> ir.Value:
        return b.fcmp_ordered("==", _fabs(b, v), inf)

    def boxed(v: ir.Value) -> ir.Value:  # an infinity as ±1, anything else as ±0
        return copysign(b.select(isinf(v), one, zero), v)

    def unnan(v: ir.Value, when: ir.Value) -> ir.Value:
        return b.select(b.and_(when, _isnan(b, v)), copysign(zero, v), v)

    ac, bd, ad, bc = b.fmul(a, c), b.fmul(bb, d), b.fmul(a, d), b.fmul(bb, c)
    re, im = b.fsub(ac, bd), b.fadd(ad, bc)
    x_inf, y_inf = b.or_(isinf(a), isinf(bb)), b.or_(isinf(c), isinf(d))
    overflow = b.or_(b.or_(isinf(ac), isinf(bd)), b.or_(isinf(ad), isinf(bc)))
    any_inf = b.or_(x_inf, y_inf)
    a2, b2 = b.select(x_inf, boxed(a), a), b.select(x_inf, boxed(bb), bb)
    c2, d2 = unnan(c, x_inf), unnan(d, x_inf)
    c2, d2 = b.select(y_inf, boxed(c2), c2), b.select(y_inf, boxed(d2), d2)
    a2, b2 = unnan(a2, y_inf), unnan(b2, y_inf)
    from_overflow = b.and_(b.not_(any_inf), overflow)
    a2, b2 = unnan(a2, from_overflow), unnan(b2, from_overflow)
    c2, d2 = unnan(c2, from_overflow), unnan(d2, from_overflow)
    re2 = b.fmul(inf, b.fsub(b.fmul(a2, c2), b.fmul(b2, d2)))
    im2 = b.fmul(inf, b.fadd(b.fmul(a2, d2), b.fmul(b2, c2)))
    recalc = b.and_(b.and_(_isnan(b, re), _isnan(b, im)), b.or_(any_inf, overflow))
    return pack(b, b.select(recalc, re2, re), b.select(recalc, im2, im))


def smith_divide(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """``x / y`` by Smith's method, as NumPy's ``CDOUBLE_divide`` (and npymath's
    ``cdiv``): scale by the larger part of ``y``; a zero ``y`` divides each part by
    ``|0|``, giving NumPy's complex infinities and NaNs."""
    (ar, ai), (br, bi) = parts(b, x), parts(b, y)
    abs_br, abs_bi = _fabs(b, br), _fabs(b, bi)
    one = ir.Constant(br.type, 1.0)
    zero = ir.Constant(br.type, 0.0)
    # |br| >= |bi| (false if either is NaN, as C's isgreaterequal)
    rat1 = b.fdiv(bi, br)
    scl1 = b.fdiv(one, b.fadd(br, b.fmul(bi, rat1)))
    re1 = b.fmul(b.fadd(ar, b.fmul(ai, rat1)), scl1)
    im1 = b.fmul(b.fsub(ai, b.fmul(ar, rat1)), scl1)
    both_zero = b.and_(b.fcmp_ordered("==", abs_br, zero), b.fcmp_ordered("==", abs_bi, zero))
    re1 = b.select(both_zero, b.fdiv(ar, abs_br), re1)
    im1 = b.select(both_zero, b.fdiv(ai, abs_bi), im1)
    # |br| < |bi|
    rat2 = b.fdiv(br, bi)
    scl2 = b.fdiv(one, b.fadd(bi, b.fmul(br, rat2)))
    re2 = b.fmul(b.fadd(b.fmul(ar, rat2), ai), scl2)
    im2 = b.fmul(b.fsub(b.fmul(ai, rat2), ar), scl2)
    first = b.fcmp_ordered(">=", abs_br, abs_bi)
    return pack(b, b.select(first, re1, re2), b.select(first, im1, im2))


def _div(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    return smith_divide(b, x, y)


def _neg(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    re, im = parts(b, x)
    return pack(b, b.fneg(re), b.fneg(im))


def conj(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    """The conjugate: the imaginary part's sign flipped (also of a zero or a NaN)."""
    re, im = parts(b, x)
    return pack(b, re, b.fneg(im))


def _square(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return mul(b, dtype, x, x)  # NumPy's csquare is cmul(x, x)


def _reciprocal(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    """``CDOUBLE_reciprocal``: its own Smith-like formula, not ``1 / x``."""
    re, im = parts(b, x)
    one = ir.Constant(re.type, 1.0)
    r1 = b.fdiv(im, re)
    d1 = b.fadd(re, b.fmul(im, r1))
    r2 = b.fdiv(re, im)
    d2 = b.fadd(b.fmul(re, r2), im)
    first = b.fcmp_ordered("<=", _fabs(b, im), _fabs(b, re))
    return pack(b, b.select(first, b.fdiv(one, d1), b.fdiv(r2, d2)),
                b.select(first, b.fdiv(b.fneg(r1), d1), b.fdiv(b.fneg(one), d2)))


def magnitude(b: ir.IRBuilder, re: ir.Value, im: ir.Value) -> ir.Value:
    """``|re + im*1j|`` as NumPy's SIMD ``cabsolute`` computes it (see the module doc)."""
    ty = re.type
    inf, nan = ir.Constant(ty, float("inf")), ir.Constant(ty, float("nan"))
    zero, one = ir.Constant(ty, 0.0), ir.Constant(ty, 1.0)
    re, im = _fabs(b, re), _fabs(b, im)
    re_inf, im_inf = b.fcmp_ordered("==", re, inf), b.fcmp_ordered("==", im, inf)
    im = b.select(re_inf, inf, im)
    re = b.select(im_inf, inf, re)
    re_nan, im_nan = _isnan(b, re), _isnan(b, im)
    im = b.select(re_nan, nan, im)
    re = b.select(im_nan, nan, re)
    larger = b.select(b.fcmp_ordered(">", re, im), re, im)
    smaller = b.select(b.fcmp_ordered("<", im, re), im, re)
    safe = b.not_(b.or_(b.fcmp_ordered("==", larger, zero), b.fcmp_ordered("==", smaller, inf)))
    ratio = b.select(safe, b.fdiv(smaller, larger), zero)
    root = b.call(intrinsic(b.module, "llvm.sqrt", ty, 1), [_fmuladd(b, ratio, ratio, one)])
    return b.fmul(root, larger)


def _abs(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return magnitude(b, *parts(b, x))


def _sign(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    """``CDOUBLE_sign`` (NumPy 2): ``x / |x|`` with ``|x|`` from C's ``hypot``; NaN for a
    NaN modulus, ``±1`` along an infinite axis, NaN for two infinite parts, 0 for 0."""
    re, im = parts(b, x)
    part = real_dtype(dtype)
    mag = call_libm("hypot")(b, part, re, im)
    zero, one, nan = (constant(part, v) for v in (0.0, 1.0, np.nan))
    inf = constant(part, np.inf)

    def unit(v: ir.Value) -> ir.Value:
        return b.select(b.fcmp_ordered(">", v, zero), one, b.fneg(one))

    re_inf = b.fcmp_ordered("==", _fabs(b, re), inf)
    im_inf = b.fcmp_ordered("==", _fabs(b, im), inf)
    out_re, out_im = b.fdiv(re, mag), b.fdiv(im, mag)
    out_re = b.select(b.fcmp_ordered("==", mag, zero), zero, out_re)
    out_im = b.select(b.fcmp_ordered("==", mag, zero), zero, out_im)
    mag_inf = b.fcmp_ordered("==", mag, inf)
    inf_re = b.select(re_inf, b.select(im_inf, nan, unit(re)), zero)
    inf_im = b.select(re_inf, b.select(im_inf, nan, zero), unit(im))
    out_re, out_im = b.select(mag_inf, inf_re, out_re), b.select(mag_inf, inf_im, out_im)
    mag_nan = _isnan(b, mag)
    return pack(b, b.select(mag_nan, nan, out_re), b.select(mag_nan, nan, out_im))


def _rint(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    re, im = parts(b, x)
    fn = intrinsic(b.module, "llvm.roundeven", re.type, 1)
    return pack(b, b.call(fn, [re]), b.call(fn, [im]))


# -- comparisons and selection ---------------------------------------------------------

def _ordered(b: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """NumPy's ``CGT``/``CGE``/``CLT``/``CLE``: lexicographic, and a NaN imaginary part
    makes the real parts' strict comparison false."""
    (xr, xi), (yr, yi) = parts(b, x), parts(b, y)
    strict = b.fcmp_ordered(op[0], xr, yr)
    no_nan = b.not_(b.or_(_isnan(b, xi), _isnan(b, yi)))
    tie = b.and_(b.fcmp_ordered("==", xr, yr), b.fcmp_ordered(op, xi, yi))
    return b.or_(b.and_(strict, no_nan), tie)


def _compare(op: str) -> Fn:
    def rule(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        if op in ("==", "!="):
            (xr, xi), (yr, yi) = parts(b, x), parts(b, y)
            if op == "==":
                return b.and_(b.fcmp_ordered("==", xr, yr), b.fcmp_ordered("==", xi, yi))
            return b.or_(b.fcmp_unordered("!=", xr, yr), b.fcmp_unordered("!=", xi, yi))
        return _ordered(b, op, x, y)
    return rule


def _has_nan(b: ir.IRBuilder, z: ir.Value) -> ir.Value:
    re, im = parts(b, z)
    return b.or_(_isnan(b, re), _isnan(b, im))


def select(b: ir.IRBuilder, cond: ir.Value, x: ir.Value, y: ir.Value) -> ir.Value:
    """``cond ? x : y`` part by part (selects of plain floats vectorize)."""
    (xr, xi), (yr, yi) = parts(b, x), parts(b, y)
    return pack(b, b.select(cond, xr, yr), b.select(cond, xi, yi))


def _select(b: KernelBuilder, dtype: np.dtype, cond: ir.Value, x: ir.Value, y: ir.Value
            ) -> ir.Value:
    return select(b, cond, x, y)


def _extreme(op: str, propagate_nan: bool) -> Fn:
    """``maximum``/``minimum``: keep ``x`` if it has a NaN or wins ``op`` (``>=``/``<=``),
    else ``y``. ``fmax``/``fmin``: keep ``x`` if ``y`` has a NaN or ``x`` wins."""
    def rule(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        nan = _has_nan(b, x) if propagate_nan else _has_nan(b, y)
        return select(b, b.or_(nan, _ordered(b, op, x, y)), x, y)
    return rule


def _predicate(test: Callable[[ir.IRBuilder, ir.Value], ir.Value], both: bool) -> Fn:
    """``isnan``/``isinf`` (either part) and ``isfinite`` (both parts)."""
    def rule(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
        re, im = parts(b, x)
        return (b.and_ if both else b.or_)(test(b, re), test(b, im))
    return rule


def _isinf(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_ordered("==", _fabs(b, x), ir.Constant(x.type, float("inf")))


def _isfinite(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_ordered("<", _fabs(b, x), ir.Constant(x.type, float("inf")))


def truth(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """A complex value as a bool: either part nonzero (NaN counts), C's ``re || im``."""
    re, im = parts(b, x)
    zero = ir.Constant(re.type, 0.0)
    return b.or_(b.fcmp_unordered("!=", re, zero), b.fcmp_unordered("!=", im, zero))


# -- parts -----------------------------------------------------------------------------

def _real(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return b.extract_value(x, 0)


def _imag(b: KernelBuilder, dtype: np.dtype, x: ir.Value) -> ir.Value:
    return b.extract_value(x, 1)


def make_complex(b: KernelBuilder, dtype: np.dtype, re: ir.Value, im: ir.Value) -> ir.Value:
    """The kind 'f' rule of ``complex``: two floats of ``dtype`` as one complex value."""
    return pack(b, re, im)


#: primitive name -> the kind 'c' scalar rule
COMPLEX_RULES: dict[str, Fn] = {
    "add": _componentwise("fadd"), "sub": _componentwise("fsub"), "mul": mul, "div": _div,
    "neg": _neg, "conj": conj, "abs": _abs, "sign": _sign, "square": _square,
    "reciprocal": _reciprocal, "rint": _rint, "select": _select,
    "real": _real, "imag": _imag,
    **{name: _compare(op) for name, op in (("eq", "=="), ("ne", "!="), ("lt", "<"),
                                           ("le", "<="), ("gt", ">"), ("ge", ">="))},
    "max": _extreme(">=", True), "min": _extreme("<=", True),
    "fmax": _extreme(">=", False), "fmin": _extreme("<=", False),
    "isnan": _predicate(_isnan, False), "isinf": _predicate(_isinf, False),
    "isfinite": _predicate(_isfinite, True),
}
