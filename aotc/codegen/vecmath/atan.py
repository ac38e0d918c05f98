"""``arctan``, ``arctan2`` and ``tanh``.

arctan(|x|) = c + arctan(t), |t| <= tan(pi/8), with three ranges picked by ``select``
(one division for all of them): t = |x| (c = 0) below tan(pi/8), t = (|x| - 1)/(|x| + 1)
(c = pi/4) up to tan(3pi/8), t = -1/|x| (c = pi/2) above; arctan t = t + t**3 A(t**2).
The constant is added as hi + lo, and the sign restored by ``copysign``.

arctan2(y, x) = the same core on a = arctan(min(|x|,|y|)/max(|x|,|y|)), then a,
pi/2 - a, pi - a or pi/2 + a by quadrant (x's sign bit, |y| > |x|), then y's sign. The
C99 special cases (zeros of either sign, infinities) fall out of that, with two selects
for 0/0 and inf/inf.

tanh(x) = e / (e + 2), e = expm1(2|x|), with the sign of x; |x| is capped where the
result is 1 to the last bit, so e never overflows.
"""

from __future__ import annotations

import math
from fractions import Fraction

from . import coeffs
from .core import F64, Body, Math, Val, split_constant
from .explog import expm1_core

PI_DIGITS = "3.141592653589793238462643383279502884197169399375105820974944592307816"
TAN_PI_8 = math.sqrt(2.0) - 1.0
TAN_3PI_8 = math.sqrt(2.0) + 1.0
#: tanh(x) rounds to 1 above this (with margin)
TANH_ONE = {64: 22.0, 32: 9.5}


def _pi_part(m: Math, numerator: int, denominator: int) -> tuple[Val, Val]:
    """``numerator/denominator * pi`` as hi + lo in the format."""
    value = Fraction(PI_DIGITS) * numerator / denominator
    hi, lo = split_constant(f"{value.numerator}/{value.denominator}", m.fmt.precision)
    return m.c(hi), m.c(lo)


def _atan_poly(m: Math, t: Val) -> Val:
    """``arctan(t) - t`` for ``|t| <= tan(pi/8)``."""
    z = m.mul(t, t)
    table = coeffs.ATAN_F64 if m.fmt is F64 else coeffs.ATAN_F32
    return m.mul(m.mul(t, z), m.poly(z, table))


def atan_positive(m: Math, ax: Val) -> Val:
    """``arctan(ax)`` for ``ax >= 0`` (inf gives pi/2, NaN stays NaN)."""
    mid = m.cmp(">", ax, m.c(TAN_PI_8))
    high = m.cmp(">", ax, m.c(TAN_3PI_8))
    one = m.c(1.0)
    num = m.sel(high, m.c(-1.0), m.sel(mid, m.sub(ax, one), ax))
    den = m.sel(high, ax, m.sel(mid, m.add(ax, one), one))
    t = m.div(num, den)
    q_hi, q_lo = _pi_part(m, 1, 4)
    h_hi, h_lo = _pi_part(m, 1, 2)
    zero = m.c(0.0)
    c_hi = m.sel(high, h_hi, m.sel(mid, q_hi, zero))
    c_lo = m.sel(high, h_lo, m.sel(mid, q_lo, zero))
    return m.add(c_hi, m.add(t, m.add(_atan_poly(m, t), c_lo)))


def atan_kernel(m: Math, x: Val) -> Val:
    return m.copysign(atan_positive(m, m.abs(x)), x)


def atan2_kernel(m: Math, y: Val, x: Val) -> Val:
    ax, ay = m.abs(x), m.abs(y)
    swap = m.cmp(">", ay, ax)
    small, large = m.sel(swap, ax, ay), m.sel(swap, ay, ax)
    ratio = m.div(small, large)
    inf = m.c(math.inf)
    both_inf = m.b.and_(m.cmp("==", ax, inf), m.cmp("==", ay, inf))
    ratio = m.sel(both_inf, m.c(1.0), m.sel(m.cmp("==", large, m.c(0.0)), m.c(0.0), ratio))
    a = atan_positive(m, ratio)
    # base + a or base - a, base in {0, pi/2, pi}: one rounding after a's own
    negative = m.signbit(x)
    h_hi, h_lo = _pi_part(m, 1, 2)
    p_hi, p_lo = _pi_part(m, 1, 1)
    zero = m.c(0.0)
    base_hi = m.sel(swap, h_hi, m.sel(negative, p_hi, zero))
    base_lo = m.sel(swap, h_lo, m.sel(negative, p_lo, zero))
    a = m.sel(m.b.xor(swap, negative), m.neg(a), a)
    a = m.copysign(m.add(base_hi, m.add(a, base_lo)), y)
    return m.sel(m.b.or_(m.isnan(x), m.isnan(y)), m.add(x, y), a)


def tanh_kernel(m: Math, x: Val) -> Val:
    ax = m.abs(x)
    cap = m.c(TANH_ONE[m.fmt.bits])
    ax = m.sel(m.cmp(">", ax, cap), cap, ax)
    e = expm1_core(m, m.add(ax, ax))
    return m.copysign(m.div(e, m.add(e, m.c(2.0))), x)


#: primitive -> kernel body, in the operand's own format
KERNELS: dict[str, Body] = {"arctan": atan_kernel, "arctan2": atan2_kernel, "tanh": tanh_kernel}
