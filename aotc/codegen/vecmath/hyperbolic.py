"""``sinh``, ``cosh``, ``arcsinh``, ``arccosh`` (built on :mod:`.explog`) and ``cbrt``, in
the operand's own format.

sinh(x) = sign(x) (e + e / (e + 1)) / 2, e = expm1(|x|): no cancellation near 0, where
sinh(x) ~ x. cosh(x) = (E + 1/E) / 2, E = exp(|x|). Past |x| = 709 (88 for float32),
where E overflows and sinh and cosh do not yet, both are (w/2) w, w = exp(|x|/2).

arcsinh(x) = sign(x) log1p(a + a**2 / (1 + sqrt(1 + a**2))), a = |x| (fdlibm's s_asinh.c
for a <= 2, and as accurate above, since log1p of a large argument is its log), and
log(a) + ln2 from a = 2**28 (2**12 for float32), where a**2 would lose the 1 and
later overflow. arccosh(x) likewise (fdlibm's e_acosh.c): log1p(t + sqrt(2t + t**2)),
t = x - 1, below 2; log(2x - 1 / (x + sqrt(x**2 - 1))) up to 2**28; then log(x) + ln2;
NaN below 1.

cbrt(a) for a > 0, without a division: r ~ a**(-1/3) from the bits (a constant minus
the bits divided by three: 3.5% at worst), Newton's steps r += r (1 - a r**3) / 3 (4 for
float64, 3 for float32), then y = a r**2 and one step on y itself,
y += (a - y**3) r**2 / 3, whose rounding errors are second order. Subnormals are scaled
up first and large numbers down (by powers of 8, undone on the root), so that every step
stays normal and finite. Zeros, infinities and NaN are their own roots; the sign is put
back.
"""

from __future__ import annotations

import math

from .core import F32, F64, Math, Val
from .explog import exp_core, expm1_core, log1p_core, log_core

#: Past this |x|, exp(|x|) overflows before sinh or cosh does.
BIG = {F64: 709.0, F32: 88.0}
#: From this |x| on, arcsinh(x) and arccosh(x) are log(|x|) + ln2 to within the
#: format's rounding.
LARGE = {F64: 2.0**28, F32: 2.0**12}
#: A positive number's bits divided by three, taken from this: bits near those of its
#: inverse cube root (3.5% at worst).
CBRT_INVERSE = {F64: 0x553EF0D844D013AA, F32: 0x54A2F5A5}
#: Exponents (multiples of three) subnormals are scaled up by, and large numbers down by,
#: so that every step stays normal and finite.
CBRT_SCALE = {F64: (54, 900), F32: (24, 120)}
#: Newton steps on the inverse root: each squares (and doubles) the relative error.
CBRT_STEPS = {F64: 4, F32: 3}


def _big(m: Math, a: Val) -> Val:
    """``exp(a) / 2`` for ``a`` past :data:`BIG`, without overflowing early."""
    w = exp_core(m, m.mul(a, m.c(0.5)))
    return m.mul(m.mul(w, m.c(0.5)), w)


def _keep_nan(m: Math, x: Val, out: Val) -> Val:
    return m.sel(m.isnan(x), x, out)


def sinh_core(m: Math, x: Val) -> Val:
    a = m.abs(x)
    e = expm1_core(m, a)
    moderate = m.mul(m.c(0.5), m.add(e, m.div(e, m.add(e, m.c(1.0)))))
    out = m.sel(m.cmp(">", a, m.c(BIG[m.fmt])), _big(m, a), moderate)
    return _keep_nan(m, x, m.copysign(out, x))


def cosh_core(m: Math, x: Val) -> Val:
    a = m.abs(x)
    e = exp_core(m, a)
    moderate = m.add(m.mul(m.c(0.5), e), m.div(m.c(0.5), e))
    return _keep_nan(m, x, m.sel(m.cmp(">", a, m.c(BIG[m.fmt])), _big(m, a), moderate))


def arcsinh_core(m: Math, x: Val) -> Val:
    a = m.abs(x)
    square = m.mul(a, a)
    root = m.sqrt(m.add(m.c(1.0), square))
    small = log1p_core(m, m.add(a, m.div(square, m.add(m.c(1.0), root))))
    large = m.add(log_core(m, a), m.c(math.log(2.0)))
    out = m.sel(m.cmp(">=", a, m.c(LARGE[m.fmt])), large, small)
    return _keep_nan(m, x, m.copysign(out, x))



def arccosh_core(m: Math, x: Val) -> Val:
    t = m.sub(x, m.c(1.0))  # exact for x in [1, 2]
    near = log1p_core(m, m.add(t, m.sqrt(m.mad(t, t, m.add(t, t)))))
    root = m.sqrt(m.mad(x, x, m.c(-1.0)))
    middle = log_core(m, m.sub(m.add(x, x), m.div(m.c(1.0), m.add(x, root))))
    large = m.add(log_core(m, x), m.c(math.log(2.0)))
    out = m.sel(m.cmp("<", x, m.c(2.0)), near, middle)
    out = m.sel(m.cmp(">=", x, m.c(LARGE[m.fmt])), large, out)
    return m.sel(m.b.fcmp_unordered("<", x, m.c(1.0)), m.c(math.nan), out)


def cbrt_core(m: Math, x: Val) -> Val:
    b, fmt = m.b, m.fmt
    up, down = CBRT_SCALE[fmt]
    a = m.abs(x)
    tiny = m.cmp("<", a, m.c(2.0**(1 - fmt.bias)))
    huge = m.cmp(">", a, m.c(2.0**down))
    a = m.mul(a, m.sel(tiny, m.c(2.0**up), m.sel(huge, m.c(2.0**-down), m.c(1.0))))
    third = m.c(1 / 3)
    r = m.as_float(b.sub(m.ci(CBRT_INVERSE[fmt]), b.udiv(m.as_int(a), m.ci(3))))
    for _ in range(CBRT_STEPS[fmt]):  # r += r (1 - a r**3) / 3
        r = m.mad(m.mul(r, m.sub(m.c(1.0), m.mul(a, m.mul(r, m.mul(r, r))))), third, r)
    y = m.mul(m.mul(a, r), r)
    y = m.mad(m.mul(m.sub(a, m.mul(m.mul(y, y), y)), m.mul(r, r)), third, y)
    y = m.mul(y, m.sel(tiny, m.c(2.0**(-up // 3)), m.sel(huge, m.c(2.0**(down // 3)),
                                                         m.c(1.0))))
    special = b.or_(m.cmp("==", x, m.c(0.0)), b.or_(m.isnan(x), m.cmp("==", a, m.c(math.inf))))
    return m.sel(special, x, m.copysign(y, x))


#: primitive -> kernel body, computed in the operand's own format
KERNELS = {"sinh": sinh_core, "cosh": cosh_core, "arcsinh": arcsinh_core,
           "arccosh": arccosh_core, "cbrt": cbrt_core}
