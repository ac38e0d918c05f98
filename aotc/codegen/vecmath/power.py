"""``power``: |x|**y = exp(y * log|x|), then C99's special cases by ``select``.

float64 needs log|x| to about 2**-64 (an error d in y*log|x| is a relative error d in
the result, and y*log|x| reaches 745), so log runs in double-double: s = f/(2+f) and
its remainder, z = s**2 and s**3 as exact products (Dekker, no FMA), then
log1p(f) = 2s + (2/3) s**3 + s**5 U(s**2), where only the last, 2**-12 smaller, term is
plain double. y*log|x| is an exact product plus a tail, and exp takes the tail into its
reduced argument. float32 does the same in plain float64 arithmetic, which is already
30 bits more than it needs, and rounds once.

Special cases (C99 Annex F, as NumPy's ``power``): pow(x, ±0) = 1 and pow(1, y) = 1 even
for NaN; x < 0 finite with y finite non-integer is NaN; an odd integer y keeps x's sign
(-0.0, -inf included); |x| = 0 or inf, or y = ±inf, give 0 or inf by whether |x| > 1
agrees with y > 0, except pow(-1, ±inf) = 1.
"""

from __future__ import annotations

import math

from . import coeffs
from .core import F64, Math, Val, split_constant
from .explog import LN2, LN2_SPLIT, expm1_reduced, log1p_reduced, log_parts

TWO_THIRDS = split_constant("2/3", 53)
#: |y| is capped here: beyond it |y * log|x|| > 2**847 whenever x != 1 anyway
Y_CAP = 2.0**900


def log_dd(m: Math, a: Val) -> tuple[Val, Val]:
    """``log(a)`` as hi + lo (relative error ~2**-64) for positive finite ``a``."""
    k, f = log_parts(m, a)
    two = m.c(2.0)
    den = m.add(two, f)
    den_lo = m.add(m.sub(two, den), f)
    s = m.div(f, den)
    p, pe = m.two_prod(s, den)
    s_lo = m.div(m.sub(m.sub(m.sub(f, p), pe), m.mul(s, den_lo)), den)
    z, ze = m.two_prod(s, s)
    z_lo = m.add(ze, m.mul(m.add(s, s), s_lo))
    cube, ce = m.two_prod(s, z)
    cube_lo = m.add(ce, m.add(m.mul(s, z_lo), m.mul(s_lo, z)))
    t_hi, t_lo = (m.c(v) for v in TWO_THIRDS)
    b, be = m.two_prod(t_hi, cube)
    b_lo = m.add(be, m.add(m.mul(t_hi, cube_lo), m.mul(t_lo, cube)))
    c = m.mul(m.mul(cube, z), m.poly(z, coeffs.LOGU_F64))
    h, e1 = m.fast_two_sum(m.add(s, s), b)
    lo = m.add(e1, m.add(m.add(m.add(s_lo, s_lo), b_lo), c))
    ln2_hi, ln2_lo = (m.c(v) for v in LN2_SPLIT[F64])
    big, e2 = m.two_sum(m.mul(k, ln2_hi), h)
    lo = m.add(e2, m.add(lo, m.mul(k, ln2_lo)))
    return m.fast_two_sum(big, lo)


def exp_dd(m: Math, hi: Val, lo: Val) -> Val:
    """``exp(hi + lo)``, ``|lo| <= ulp(hi)``; overflow to inf, underflow to 0."""
    clamped = m.clamp(hi, -746.0, 710.0)
    lo = m.sel(m.cmp("==", clamped, hi), lo, m.c(0.0))
    nf, n = m.round_to_int(m.mul(clamped, m.c(1 / LN2)))
    ln2_hi, ln2_lo = (m.c(v) for v in LN2_SPLIT[F64])
    r = m.add(m.sub(clamped, m.mul(nf, ln2_hi)), m.sub(lo, m.mul(nf, ln2_lo)))
    return m.scale(m.add(m.c(1.0), expm1_reduced(m, r)), n)


def _safe_base(m: Math, x: Val) -> tuple[Val, Val]:
    """``(|x|, |x| or 1 where it is 0, inf or NaN)``: the log never sees those."""
    ax = m.abs(x)
    normal = m.b.and_(m.cmp(">", ax, m.c(0.0)), m.cmp("<", ax, m.c(math.inf)))
    return ax, m.sel(normal, ax, m.c(1.0))


def _specials(m: Math, x: Val, y: Val, ax: Val, magnitude: Val) -> Val:
    b = m.b
    inf, zero, one = m.c(math.inf), m.c(0.0), m.c(1.0)
    ay = m.abs(y)
    y_int = m.cmp("==", m.trunc(y), y)
    half = m.mul(y, m.c(0.5))
    y_odd = b.and_(y_int, m.cmp("!=", m.trunc(half), half))
    edge = b.or_(m.cmp("==", ay, inf), b.or_(m.cmp("==", ax, zero), m.cmp("==", ax, inf)))
    grows = b.icmp_unsigned("==", m.cmp(">", ax, one), m.cmp(">", y, zero))
    out = m.sel(edge, m.sel(grows, inf, zero), magnitude)
    out = m.sel(b.and_(m.cmp("==", ax, one), m.cmp("==", ay, inf)), one, out)
    out = m.sel(b.and_(m.signbit(x), y_odd), m.neg(out), out)
    finite_negative = b.and_(m.cmp("<", x, zero), m.cmp(">", x, m.neg(inf)))
    out = m.sel(b.and_(finite_negative, b.not_(y_int)), m.c(math.nan), out)
    out = m.sel(b.or_(m.isnan(x), m.isnan(y)), m.add(x, y), out)
    return m.sel(b.or_(m.cmp("==", y, zero), m.cmp("==", x, one)), one, out)


def pow_f64(m: Math, x: Val, y: Val) -> Val:
    ax, base = _safe_base(m, x)
    log_hi, log_lo = log_dd(m, base)
    ys = m.clamp(y, -Y_CAP, Y_CAP)
    p, pe = m.two_prod(ys, log_hi)
    magnitude = exp_dd(m, p, m.add(pe, m.mul(ys, log_lo)))
    return _specials(m, x, y, ax, magnitude)


def pow_f32(m: Math, x: Val, y: Val) -> Val:
    wide = Math(m.b, F64)
    x, y = (m.b.fpext(v, F64.ty) for v in (x, y))
    ax, base = _safe_base(wide, x)
    k, f = log_parts(wide, base)
    t = wide.mul(y, log1p_reduced(wide, k, f))
    magnitude = exp_dd(wide, t, wide.c(0.0))
    return m.b.fptrunc(_specials(wide, x, y, ax, magnitude), m.fmt.ty)

