"""``exp``, ``expm1``, ``log``, ``log1p`` (and ``exp2``, ``log2``, ``log10`` from the same
parts): Cody-Waite reduction, a polynomial, rescaling.

exp(x) = 2**n * exp(r), n = rint(x / ln2), r = x - n*ln2 with ln2 split so ``n * hi`` is
exact, |r| <= ln2/2; exp(r) = 1 + (r + r**2 P(r)). The scale by 2**n is split in two
(:meth:`Math.scale`), so overflow gives inf and gradual underflow rounds correctly.

expm1(x) = 2**n * (expm1(r) + (1 - 2**-n)): one rounding on top of expm1(r) and no
cancellation for n = 0 (FreeBSD's formulation, without its branches).

log(x) = k*ln2 + log1p(f), x = 2**k (1 + f), 1 + f in [sqrt(2)/2, sqrt(2)):
log1p(f) = f - hfsq + s (hfsq + z T(z)), s = f / (2 + f), z = s**2 (FreeBSD's e_log.c).
log1p(x) decomposes u = 1 + x instead and adds the rounding error of that sum, c/u.

Special values come from clamping (exp overflows or underflows by itself) and selects.
"""

from __future__ import annotations

import math

import numpy as np

from . import coeffs
from .core import F32, F64, Math, Val, split_constant

LN2 = math.log(2.0)
LN2_DIGITS = "0.693147180559945309417232121458176568075500134360255254120680"
#: format -> (hi, lo) of ln2, hi exact times any exponent of that format
LN2_SPLIT = {F64: split_constant(LN2_DIGITS, 40), F32: split_constant(LN2_DIGITS, 14)}
EXP_POLY = {F64: coeffs.EXP_F64, F32: coeffs.EXP_F32}
LOG_POLY = {F64: coeffs.LOG_F64, F32: coeffs.LOG_F32}
#: exp's input range: below it the result is +0, above it inf (both by rescaling)
EXP_RANGE = {F64: (-746.0, 710.0), F32: (-104.0, 89.0)}
#: exp2's, likewise
EXP2_RANGE = {F64: (-1080.0, 1025.0), F32: (-160.0, 129.0)}
LN10 = math.log(10.0)
#: format -> (hi, lo) of log10(2), hi exact times any exponent of that format
LOG10_2_SPLIT = {
    fmt: split_constant("0.301029995663981195213738894724493026768189881462108541310430", bits)
    for fmt, bits in ((F64, 40), (F32, 14))}
#: expm1's: below, 2**n (expm1(r) + 1 - 2**-n) rounds to -1
EXPM1_LOW = {F64: -45.0, F32: -20.0}
#: bits of sqrt(2)/2: log's mantissa is reduced into [sqrt(2)/2, sqrt(2))
SQRT_HALF_BITS = {F64: 0x3FE6A09E667F3BCD, F32: 0x3F3504F3}


def _ln2(m: Math) -> tuple[Val, Val]:
    hi, lo = LN2_SPLIT[m.fmt]
    return m.c(hi), m.c(lo)


def exp_reduce(m: Math, x: Val) -> tuple[Val, Val]:
    """``(r, n)`` with ``x = n*ln2 + r``, ``|r| <= ln2/2``, ``n`` an integer register."""
    nf, n = m.round_to_int(m.mul(x, m.c(1 / LN2)))
    hi, lo = _ln2(m)
    return m.sub(m.sub(x, m.mul(nf, hi)), m.mul(nf, lo)), n


def expm1_reduced(m: Math, r: Val) -> Val:
    """``expm1(r)`` for ``|r| <= ln2/2``: r + r**2 P(r)."""
    return m.mad(m.mul(r, r), m.poly(r, EXP_POLY[m.fmt]), r)


def exp_core(m: Math, x: Val) -> Val:
    """``exp(x)`` for finite or infinite ``x``; NaN propagates."""
    lo, hi = EXP_RANGE[m.fmt]
    r, n = exp_reduce(m, m.clamp(x, lo, hi))
    return m.scale(m.add(m.c(1.0), expm1_reduced(m, r)), n)


def expm1_core(m: Math, x: Val) -> Val:
    _, hi = EXP_RANGE[m.fmt]
    r, n = exp_reduce(m, m.clamp(x, EXPM1_LOW[m.fmt], hi))
    # 1 - 2**-n; for n > precision + 2 that is 1 (and 2**-n may not be a normal number)
    cap = m.ci(m.fmt.precision + 2)
    n_cap = m.sel(m.b.icmp_signed(">", n, cap), cap, n)
    one_minus = m.sub(m.c(1.0), m.pow2(m.b.neg(n_cap)))
    out = m.scale(m.add(expm1_reduced(m, r), one_minus), n)
    return m.sel(m.cmp("==", x, m.c(0.0)), x, out)  # expm1(-0.0) = -0.0


def log_parts(m: Math, x: Val) -> tuple[Val, Val]:
    """``(k, f)`` as floats with ``x = 2**k (1 + f)``, ``1 + f`` in [sqrt(2)/2, sqrt(2)),
    for positive finite ``x`` (subnormals included); garbage otherwise."""
    fmt, b = m.fmt, m.b
    tiny = m.cmp("<", x, m.c(2.0**(1 - fmt.bias)))
    x = m.sel(tiny, m.mul(x, m.c(2.0**fmt.mant)), x)
    offset = m.ci(SQRT_HALF_BITS[fmt])
    tmp = b.sub(m.as_int(x), offset)
    k = b.ashr(tmp, m.ci(fmt.mant))
    k = b.add(k, m.sel(tiny, m.ci(-fmt.mant), m.ci(0)))
    exponent_mask = m.ci(((1 << (fmt.bits - fmt.mant)) - 1) << fmt.mant)
    mantissa = m.as_float(b.sub(m.as_int(x), b.and_(tmp, exponent_mask)))
    return m.int_to_float(k), m.sub(mantissa, m.c(1.0))


def log1p_reduced(m: Math, k: Val, f: Val, c: Val | None = None) -> Val:
    """``k*ln2 + log1p(f) + c`` for ``1 + f`` in [sqrt(2)/2, sqrt(2)), ``|c|`` tiny."""
    s = m.div(f, m.add(m.c(2.0), f))
    z = m.mul(s, s)
    big_r = m.mul(z, m.poly(z, LOG_POLY[m.fmt]))
    hfsq = m.mul(m.c(0.5), m.mul(f, f))
    hi, lo = _ln2(m)
    tail = m.mul(k, lo) if c is None else m.add(m.mul(k, lo), c)
    inner = m.sub(hfsq, m.mad(s, m.add(hfsq, big_r), tail))
    return m.sub(m.mul(k, hi), m.sub(inner, f))


def _log_specials(m: Math, x: Val, zero_at: Val, out: Val) -> Val:
    """inf at +inf, -inf where ``zero_at`` is 0, NaN below it (and for NaN)."""
    out = m.sel(m.cmp("==", x, m.c(np.inf)), x, out)
    out = m.sel(m.cmp("==", zero_at, m.c(0.0)), m.c(-np.inf), out)
    return m.sel(m.b.fcmp_unordered("<", zero_at, m.c(0.0)), m.c(np.nan), out)


def log_core(m: Math, x: Val) -> Val:
    k, f = log_parts(m, x)
    return _log_specials(m, x, x, log1p_reduced(m, k, f))


def log1p_core(m: Math, x: Val) -> Val:
    u, c = m.two_sum(m.c(1.0), x)  # 1 + x == u + c exactly
    k, f = log_parts(m, u)
    out = log1p_reduced(m, k, f, m.div(c, u))
    out = _log_specials(m, x, u, out)
    return m.sel(m.cmp("==", x, m.c(0.0)), x, out)  # log1p(-0.0) = -0.0


def exp2_core(m: Math, x: Val) -> Val:
    """``2**x = 2**n exp((x - n) ln2)``, ``n = rint(x)``: ``x - n`` is exact and
    ``|(x - n) ln2| <= ln2/2``, exp's own reduced range."""
    lo, hi = EXP2_RANGE[m.fmt]
    x = m.clamp(x, lo, hi)
    nf, n = m.round_to_int(x)
    r = m.mul(m.sub(x, nf), m.c(LN2))
    return m.scale(m.add(m.c(1.0), expm1_reduced(m, r)), n)


def log2_core(m: Math, x: Val) -> Val:
    """``k + log1p(f) / ln2``: exact at powers of two."""
    k, f = log_parts(m, x)
    out = m.mad(log1p_reduced(m, m.c(0.0), f), m.c(1 / LN2), k)
    return _log_specials(m, x, x, out)


def log10_core(m: Math, x: Val) -> Val:
    """``k log10(2) + log1p(f) / ln10``, ``log10(2)`` split so ``k`` times its head is
    exact."""
    k, f = log_parts(m, x)
    hi, lo = LOG10_2_SPLIT[m.fmt]
    tail = m.mad(log1p_reduced(m, m.c(0.0), f), m.c(1 / LN10), m.mul(k, m.c(lo)))
    return _log_specials(m, x, x, m.mad(k, m.c(hi), tail))


#: primitive -> kernel body, computed in the operand's own format
KERNELS = {"exp": exp_core, "expm1": expm1_core, "log": log_core, "log1p": log1p_core,
           "exp2": exp2_core, "log2": log2_core, "log10": log10_core}
