"""Complex elementary functions as glibc computes them: exp, log, sqrt, sin, cos, sinh,
cosh (the scalar rules, with pow and NumPy's own compositions, are in :mod:`.complexfuncs`).

NumPy calls glibc's ``cexp``/``clog``/``csqrt``/``csin``/``ccos``/``cpow`` (through npymath,
whose ``npy_cpow`` first handles zero bases and small integer exponents itself). Each
kernel here follows glibc's algorithm and its C99 Annex G special values (every
infinity, NaN and signed zero as glibc gives them), built from the straight-line real
kernels of :mod:`.vecmath` and a branch-free copy of glibc's correctly rounded ``hypot``
(Borges' correction step), so the code vectorizes like the real functions. Accuracy:

- ``sqrt`` uses exact ``hypot`` and ``sqrt``: NumPy's result bit for bit, or 1 ulp.
- ``exp``, ``log``, ``sin``, ``cos`` inherit the real kernels' <= 2.2 ulp plus one
  rounding (``tests/codegen/test_complexmath.py`` states and checks the bounds).
- ``pow`` with an integer exponent below 100 in magnitude is npymath's repeated
  multiplication, bit for bit; otherwise ``exp(b * log(a))`` as glibc's ``cpow``, whose
  error grows with ``|b * log(a)|`` in both libraries.

complex64 computes in float64 and rounds once at the end (as the real float32 trig
kernels do), except where NumPy's own formula rounds in float32 first.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ..core.builder import existing
from ..vecmath import VECMATH_RULES
from ..vecmath.core import F64, Math, Val
from .complexarith import pack, parts

Pair = tuple[Val, Val]
F8 = np.dtype("f8")
MAX = float(np.finfo(np.float64).max)
MIN = float(np.finfo(np.float64).tiny)
EPS = float(np.finfo(np.float64).eps)
LN2 = math.log(2.0)
#: exp overflows past this: cexp and ccosh scale by exp(T) first (glibc's ``t``).
T = 709.0
EXP_T = math.exp(T)


def _call(m: Math, name: str, *args: Val) -> Val:
    return VECMATH_RULES[name](m.b, F8, *args)


def _sqrt(m: Math, x: Val) -> Val:
    return m._intrinsic("llvm.sqrt", x)


def _isinf(m: Math, x: Val) -> Val:
    return m.cmp("==", m.abs(x), m.c(math.inf))


def _finite(m: Math, x: Val) -> Val:
    return m.cmp("<", m.abs(x), m.c(math.inf))


def _and(m: Math, *conds: Val) -> Val:
    out = conds[0]
    for c in conds[1:]:
        out = m.b.and_(out, c)
    return out


def _or(m: Math, *conds: Val) -> Val:
    out = conds[0]
    for c in conds[1:]:
        out = m.b.or_(out, c)
    return out


def _sincos(m: Math, y: Val) -> Pair:
    """``(sin y, cos y)``; glibc takes ``(y, 1)`` below the smallest normal."""
    tiny = m.cmp("<=", m.abs(y), m.c(MIN))
    return (m.sel(tiny, y, _call(m, "sin", y)), m.sel(tiny, m.c(1.0), _call(m, "cos", y)))


# -- hypot -------------------------------------------------------------------------------

def _hypot_kernel(m: Math, ax: Val, ay: Val) -> Val:
    """Borges' correctly rounded sqrt(ax**2 + ay**2) for ``ax >= ay`` in range (glibc's
    kernel without FMA: every operation rounded as written)."""
    h = _sqrt(m, m.add(m.mul(ax, ax), m.mul(ay, ay)))
    two = m.c(2.0)
    d1 = m.sub(h, ay)
    t1a = m.mul(ax, m.sub(m.mul(two, d1), ax))
    t2a = m.mul(m.sub(d1, m.mul(two, m.sub(ax, ay))), d1)
    d2 = m.sub(h, ax)
    t1b = m.mul(m.mul(two, d2), m.sub(ax, m.mul(two, ay)))
    t2b = m.add(m.mul(m.sub(m.mul(m.c(4.0), d2), ay), ay), m.mul(d2, d2))
    near = m.cmp("<=", h, m.mul(two, ay))
    t1, t2 = m.sel(near, t1a, t1b), m.sel(near, t2a, t2b)
    return m.sub(h, m.div(m.add(t1, t2), m.mul(two, h)))


def hypot(m: Math, x: Val, y: Val) -> Val:
    """glibc's ``hypot``, bit for bit: scaled away from overflow and underflow."""
    x, y = m.abs(x), m.abs(y)
    swap = m.cmp("<", x, y)
    ax, ay = m.sel(swap, y, x), m.sel(swap, x, y)
    scale = m.c(2.0 ** -600)
    big, tiny = m.cmp(">", ax, m.c(2.0 ** 511)), m.cmp("<", ay, m.c(2.0 ** -511))
    out = _hypot_kernel(m, ax, ay)
    out = m.sel(tiny, m.mul(_hypot_kernel(m, m.div(ax, scale), m.div(ay, scale)), scale), out)
    out = m.sel(big, m.div(_hypot_kernel(m, m.mul(ax, scale), m.mul(ay, scale)), scale), out)
    eps = m.c(2.0 ** -54)
    negligible = m.sel(tiny, m.cmp(">=", ax, m.div(ay, eps)), m.cmp("<=", ay, m.mul(ax, eps)))
    negligible = m.sel(big, m.cmp("<=", ay, m.mul(ax, eps)), negligible)
    out = m.sel(negligible, m.add(ax, ay), out)
    nan = m.add(x, y)
    out = m.sel(_or(m, m.isnan(x), m.isnan(y)), nan, out)
    return m.sel(_or(m, _isinf(m, x), _isinf(m, y)), m.c(math.inf), out)


# -- exp ---------------------------------------------------------------------------------

def cexp(m: Math, x: Val, y: Val) -> Pair:
    """glibc's ``cexp``: exp(x) (cos y + i sin y), exp(x) scaled down by exp(709) once or
    twice first so exp(x) * cos(y) is finite whenever the result is."""
    sin_y, cos_y = _sincos(m, y)
    t, exp_t = m.c(T), m.c(EXP_T)
    xs, s, c = x, sin_y, cos_y
    for _ in range(2):
        over = m.cmp(">", xs, t)
        xs = m.sel(over, m.sub(xs, t), xs)
        s, c = m.sel(over, m.mul(s, exp_t), s), m.sel(over, m.mul(c, exp_t), c)
    ev = _call(m, "exp", xs)
    overflow = m.cmp(">", xs, t)
    re = m.sel(overflow, m.mul(m.c(MAX), c), m.mul(ev, c))
    im = m.sel(overflow, m.mul(m.c(MAX), s), m.mul(ev, s))
    nan, inf, zero = m.c(math.nan), m.c(math.inf), m.c(0.0)
    fin_y, y_zero = _finite(m, y), m.cmp("==", y, zero)
    re = m.sel(fin_y, re, nan)  # finite x, y inf or NaN: NaN + NaN i
    im = m.sel(fin_y, im, nan)
    # x = ±inf
    value = m.sel(m.signbit(x), zero, inf)
    inf_re = m.sel(y_zero, value, m.copysign(value, cos_y))
    inf_im = m.sel(y_zero, y, m.copysign(value, sin_y))
    inf_re = m.sel(fin_y, inf_re, m.sel(m.signbit(x), zero, inf))
    inf_im = m.sel(fin_y, inf_im, m.sel(m.signbit(x), m.copysign(zero, y), m.sub(y, y)))
    is_inf = _isinf(m, x)
    re, im = m.sel(is_inf, inf_re, re), m.sel(is_inf, inf_im, im)
    # x NaN: NaN + (y if y == 0 else NaN) i
    x_nan = m.isnan(x)
    return m.sel(x_nan, nan, re), m.sel(x_nan, m.sel(y_zero, y, nan), im)


# -- log ---------------------------------------------------------------------------------

def _x2y2m1(m: Math, x: Val, y: Val) -> Val:
    """``x**2 + y**2 - 1`` for ``0.5 <= x < 1`` in double-double: the squares are split
    exactly, so the cancellation against 1 loses nothing glibc's ``__x2y2m1`` keeps."""
    xx, ex = m.two_prod(x, x)
    yy, ey = m.two_prod(y, y)
    s, e = m.two_sum(m.c(-1.0), xx)  # exact by Sterbenz for xx in [0.25, 1)
    s, e2 = m.two_sum(s, yy)
    return m.add(s, m.add(m.add(e, e2), m.add(ex, ey)))


def clog(m: Math, x: Val, y: Val) -> Pair:
    """glibc's ``clog``: log|z| from log1p where |z| is near 1 (no cancellation), scaled
    away from overflow and underflow; arg z = atan2(y, x)."""
    ax, ay = m.abs(x), m.abs(y)
    swap = m.cmp("<", ax, ay)
    ax, ay = m.sel(swap, ay, ax), m.sel(swap, ax, ay)
    huge = m.cmp(">", ax, m.c(MAX / 2))
    tiny = _and(m, m.cmp("<", ax, m.c(MIN)), m.cmp("<", ay, m.c(MIN)))
    half, up = m.c(0.5), m.c(2.0 ** 53)
    ax_s = m.sel(huge, m.mul(ax, half), m.sel(tiny, m.mul(ax, up), ax))
    ay_h = m.sel(m.cmp(">=", ay, m.c(MIN * 2)), m.mul(ay, half), m.c(0.0))
    ay_s = m.sel(huge, ay_h, m.sel(tiny, m.mul(ay, up), ay))
    shift = m.sel(huge, m.c(-LN2), m.sel(tiny, m.c(53 * LN2), m.c(0.0)))  # scale * ln2
    unscaled = m.b.not_(m.b.or_(huge, tiny))
    one, two = m.c(1.0), m.c(2.0)
    general = m.sub(_call(m, "log", hypot(m, ax_s, ay_s)), shift)
    d2m1 = m.mul(m.sub(ax, one), m.add(ax, one))
    case2 = m.add(d2m1, m.sel(m.cmp(">=", ay, m.c(EPS)), m.mul(ay, ay), m.c(0.0)))
    below = _and(m, m.cmp("<", ax, one), m.cmp(">=", ax, half))
    d = m.sel(m.cmp("<", ay, m.c(EPS / 2)), d2m1, _x2y2m1(m, ax, ay))
    d = m.sel(m.cmp(">", ax, one), case2, d)
    d = m.sel(m.cmp("==", ax, one), m.mul(ay, ay), d)
    near = _or(m, m.cmp("==", ax, one),
               _and(m, m.cmp(">", ax, one), m.cmp("<", ax, two), m.cmp("<", ay, one)),
               _and(m, below, m.cmp("<", ay, m.c(EPS / 2))),
               _and(m, below, m.cmp(">=", m.add(m.mul(ax, ax), m.mul(ay, ay)), half)))
    re = m.sel(m.b.and_(near, unscaled), m.div(_call(m, "log1p", d), two), general)
    im = _call(m, "arctan2", y, x)
    zero = m.c(0.0)
    both_zero = _and(m, m.cmp("==", x, zero), m.cmp("==", y, zero))
    re = m.sel(both_zero, m.c(-math.inf), re)
    any_nan = _or(m, m.isnan(x), m.isnan(y))
    nan_re = m.sel(_or(m, _isinf(m, x), _isinf(m, y)), m.c(math.inf), m.c(math.nan))
    return m.sel(any_nan, nan_re, re), m.sel(any_nan, m.c(math.nan), im)


# -- sqrt --------------------------------------------------------------------------------

def csqrt(m: Math, x: Val, y: Val) -> Pair:
    """glibc's ``csqrt``: from ``hypot``, using 2 Re Im = y to avoid cancellation in
    ``d ± x``, with parts scaled by 4 (or 2**54) out of overflow (underflow)."""
    quarter, zero = m.c(0.25), m.c(0.0)
    s1 = m.cmp(">", m.abs(x), m.c(MAX / 4))
    x1, y1 = m.sel(s1, m.mul(x, quarter), x), m.sel(s1, m.mul(y, quarter), y)
    s2 = m.cmp(">", m.abs(y1), m.c(MAX / 4))
    x2 = m.sel(s2, m.sel(m.cmp(">=", m.abs(x1), m.c(4 * MIN)), m.mul(x1, quarter), zero), x1)
    y2 = m.sel(s2, m.mul(y1, quarter), y1)
    s3 = _and(m, m.b.not_(s2), m.cmp("<", m.abs(x2), m.c(2 * MIN)),
              m.cmp("<", m.abs(y2), m.c(2 * MIN)))
    up = m.c(2.0 ** 54)
    xs, ys = m.sel(s3, m.mul(x2, up), x2), m.sel(s3, m.mul(y2, up), y2)
    grow = m.b.or_(s1, s2)  # the result is scaled by 2 (glibc's scale == 1)
    d = hypot(m, xs, ys)
    half = m.c(0.5)
    early = m.b.and_(grow, m.cmp("<", m.abs(ys), m.c(1.0)))
    # x > 0
    r = _sqrt(m, m.mul(half, m.add(d, xs)))
    s_pos = m.sel(early, m.div(ys, r), m.mul(half, m.div(ys, r)))
    r_pos = m.sel(early, m.mul(r, m.c(2.0)), r)
    # x <= 0
    s = _sqrt(m, m.mul(half, m.sub(d, xs)))
    r_neg = m.sel(early, m.abs(m.div(ys, s)), m.abs(m.mul(half, m.div(ys, s))))
    s_neg = m.sel(early, m.mul(s, m.c(2.0)), s)
    positive = m.cmp(">", xs, zero)
    re, im = m.sel(positive, r_pos, r_neg), m.sel(positive, s_pos, s_neg)
    factor = m.sel(m.b.and_(grow, m.b.not_(early)), m.c(2.0),
                   m.sel(s3, m.c(2.0 ** -27), m.c(1.0)))
    re, im = m.mul(re, factor), m.copysign(m.mul(im, factor), y)
    # a zero part
    r0 = m.sel(m.cmp(">=", m.abs(y), m.c(2 * MIN)), _sqrt(m, m.mul(half, m.abs(y))),
               m.mul(half, _sqrt(m, m.mul(m.c(2.0), m.abs(y)))))
    x_zero, y_zero = m.cmp("==", x, zero), m.cmp("==", y, zero)
    re, im = m.sel(x_zero, r0, re), m.sel(x_zero, m.copysign(r0, y), im)
    neg = m.cmp("<", x, zero)
    re = m.sel(y_zero, m.sel(neg, zero, m.abs(_sqrt(m, x))), re)
    im = m.sel(y_zero, m.copysign(m.sel(neg, _sqrt(m, m.neg(x)), zero), y), im)
    # infinities and NaNs
    nan, inf = m.c(math.nan), m.c(math.inf)
    y_nan = m.isnan(y)
    any_nan = m.b.or_(m.isnan(x), y_nan)
    re, im = m.sel(any_nan, nan, re), m.sel(any_nan, nan, im)
    x_inf = _isinf(m, x)
    xi_re = m.sel(neg, m.sel(y_nan, nan, zero), x)
    xi_im = m.sel(neg, m.copysign(inf, y), m.sel(y_nan, nan, m.copysign(zero, y)))
    re, im = m.sel(x_inf, xi_re, re), m.sel(x_inf, xi_im, im)
    y_inf = _isinf(m, y)
    return m.sel(y_inf, inf, re), m.sel(y_inf, y, im)


# -- sinh, cosh, sin, cos --------------------------------------------------------------

def _cosh_sinh(m: Math, ax: Val) -> Pair:
    """``(cosh ax, sinh ax)`` for ``0 <= ax <= 709``, from expm1 and exp as fdlibm does."""
    one, half = m.c(1.0), m.c(0.5)
    t = _call(m, "expm1", ax)
    e = _call(m, "exp", ax)
    small_cosh = m.add(one, m.div(m.mul(t, t), m.mul(m.c(2.0), m.add(one, t))))
    mid_cosh = m.add(m.mul(half, e), m.div(half, e))
    cosh = m.sel(m.cmp("<", ax, m.c(LN2 / 2)), small_cosh,
                 m.sel(m.cmp("<", ax, m.c(22.0)), mid_cosh, m.mul(half, e)))
    below1 = m.mul(half, m.sub(m.mul(m.c(2.0), t), m.div(m.mul(t, t), m.add(t, one))))
    below22 = m.mul(half, m.add(t, m.div(t, m.add(t, one))))
    sinh = m.sel(m.cmp("<", ax, one), below1,
                 m.sel(m.cmp("<", ax, m.c(22.0)), below22, m.mul(half, e)))
    return cosh, sinh


def _hyperbolic(m: Math, x: Val, y: Val, sine: bool) -> Pair:
    """glibc's ``ccosh`` (``sine`` False) and ``csinh``: cosh/sinh(x) times cos/sin(y),
    scaled by exp(709) for |x| > 709 as ``cexp`` is."""
    sin_y, cos_y = _sincos(m, y)
    ax, neg = m.abs(x), m.signbit(x)
    cosh, sinh = _cosh_sinh(m, m.sel(m.cmp(">", ax, m.c(T)), m.c(0.0), ax))
    sinh = m.sel(neg, m.neg(sinh), sinh)
    # |x| > 709: the sign of x goes to sin (cosh) or cos (sinh), then exp(|x|)/2 scaled
    s = m.sel(neg, m.neg(sin_y), sin_y) if not sine else sin_y
    c = m.sel(neg, m.neg(cos_y), cos_y) if sine else cos_y
    half_t = m.c(EXP_T / 2)
    rx, s, c = m.sub(ax, m.c(T)), m.mul(s, half_t), m.mul(c, half_t)
    again = m.cmp(">", rx, m.c(T))
    rx = m.sel(again, m.sub(rx, m.c(T)), rx)
    s, c = m.sel(again, m.mul(s, m.c(EXP_T)), s), m.sel(again, m.mul(c, m.c(EXP_T)), c)
    overflow = m.cmp(">", rx, m.c(T))
    ev = _call(m, "exp", rx)
    big_re = m.sel(overflow, m.mul(m.c(MAX), c), m.mul(ev, c))
    big_im = m.sel(overflow, m.mul(m.c(MAX), s), m.mul(ev, s))
    first, second = (sinh, cosh) if sine else (cosh, sinh)
    re, im = m.mul(first, cos_y), m.mul(second, sin_y)
    big = m.cmp(">", ax, m.c(T))
    re, im = m.sel(big, big_re, re), m.sel(big, big_im, im)
    nan, inf, zero = m.c(math.nan), m.c(math.inf), m.c(0.0)
    fin_y, y_zero, x_zero = _finite(m, y), m.cmp("==", y, zero), m.cmp("==", x, zero)
    # finite x, y inf or NaN
    if sine:
        bad_re = m.sel(x_zero, m.sel(neg, m.c(-0.0), zero), nan)
        bad_im = m.sel(x_zero, m.sub(y, y), nan)
    else:
        bad_re, bad_im = m.sub(y, y), m.sel(x_zero, zero, nan)
    re, im = m.sel(fin_y, re, bad_re), m.sel(fin_y, im, bad_im)
    # x = ±inf
    sign_x = m.copysign(m.c(1.0), x)
    if sine:
        inf_re = m.sel(y_zero, m.copysign(inf, x), m.mul(m.copysign(inf, cos_y), sign_x))
        inf_im = m.sel(y_zero, y, m.copysign(inf, sin_y))
    else:
        inf_re = m.sel(y_zero, inf, m.copysign(inf, cos_y))
        inf_im = m.sel(y_zero, m.mul(y, sign_x), m.mul(m.copysign(inf, sin_y), sign_x))
    inf_re = m.sel(fin_y, inf_re, inf)
    inf_im = m.sel(fin_y, inf_im, m.sub(y, y))
    x_inf = _isinf(m, x)
    re, im = m.sel(x_inf, inf_re, re), m.sel(x_inf, inf_im, im)
    x_nan = m.isnan(x)
    return m.sel(x_nan, nan, re), m.sel(x_nan, m.sel(y_zero, y, nan), im)


def ccosh(m: Math, x: Val, y: Val) -> Pair:
    return _hyperbolic(m, x, y, sine=False)


def csinh(m: Math, x: Val, y: Val) -> Pair:
    return _hyperbolic(m, x, y, sine=True)


def ccos(m: Math, x: Val, y: Val) -> Pair:
    """cos z = cosh(i z), as glibc computes it."""
    return ccosh(m, m.neg(y), x)


def csin(m: Math, x: Val, y: Val) -> Pair:
    """sin z = -i sinh(i z); for an infinite ``y`` and a non-finite ``x`` glibc's own
    ``csin`` gives ``NaN + inf i`` (a positive infinity, which ``-i sinh(i z)`` lacks)."""
    re, im = csinh(m, m.neg(y), x)
    odd = m.b.and_(m.b.not_(_finite(m, x)), _isinf(m, y))
    return m.sel(odd, m.sub(x, x), im), m.sel(odd, m.c(math.inf), m.neg(re))


# -- the scalar rules ---------------------------------------------------------------------

Kernel = Callable[[Math, Val, Val], Pair]


def _kernel_function(module: ir.Module, name: str, dtype: np.dtype, kernel: Kernel
                     ) -> ir.Function:
    """``{T, T} name(T re, T im)``: internal and always inlined (as the real vector
    kernels), computing in float64 and rounding a complex64 result once."""
    found = existing(module, name)
    if found is not None:
        return found
    part = F64.ty if dtype.itemsize == 16 else ir.FloatType()
    ty = ir.LiteralStructType([part, part])
    fn = ir.Function(module, ir.FunctionType(ty, [part, part]), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    m = Math(b, F64)
    x, y = fn.args
    if part != F64.ty:
        x, y = b.fpext(x, F64.ty), b.fpext(y, F64.ty)
    re, im = kernel(m, x, y)
    if part != F64.ty:
        re, im = b.fptrunc(re, part), b.fptrunc(im, part)
    b.ret(pack(b, re, im))
    return fn


def unary_rule(name: str, kernel: Kernel) -> Callable[..., ir.Value]:
    def rule(b: ir.IRBuilder, dtype: np.dtype, z: ir.Value) -> ir.Value:
        fn = _kernel_function(b.module, f"aotc.cmath.{name}.c{dtype.itemsize}", dtype, kernel)
        return b.call(fn, list(parts(b, z)))
    rule.__name__ = f"complex_{name}"
    return rule
