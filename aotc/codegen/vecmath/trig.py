"""``sin``, ``cos``, ``tan`` in float64 (float32 runs these and rounds once).

Reduction: x = n*pi/2 + r, |r| <= pi/4, with pi/2 in three 33-bit pieces and a tail
(fdlibm's medium case, done branch-free with ``two_sum``): each ``n * piece`` is exact
for n < 2**20, and r comes out as a double-double (rh, rl) good to ~2**-100 of pi/2,
enough for the worst cancellation a double can produce below 1.5e6.

Kernels on [-pi/4, pi/4]: sin r = r + r**3 S(r**2), cos r = 1 - r**2/2 + r**4 C(r**2)
(with fdlibm's split of ``1 - r**2/2``), each corrected for rl; the quadrant n mod 4
picks and negates them; tan = sin/cos (or -cos/sin).

Beyond 1.5e6 (Payne-Hanek territory) the kernel branches to libm. The branch holds only
the call, which the vectorizer predicates per lane: vector code stays vector and the
rare huge argument costs one scalar call.
"""

from __future__ import annotations

import math
from fractions import Fraction

from . import coeffs
from .core import Math, Val, split_constant
from .fallback import call_libm

PIO2_DIGITS = "1.570796326794896619231321691639751442098584699687552910487472296153908"
#: |x| up to here is reduced inline: n = rint(x * 2/pi) < 2**20
MEDIUM = 1.5e6


def _pio2_pieces() -> tuple[float, float, float, float]:
    """pi/2 = p1 + p2 + p3 + p4, p1..p3 of 33 bits each (n * pk exact for n < 2**20)."""
    pieces, rest = [], PIO2_DIGITS
    for _ in range(3):
        hi, _ = split_constant(rest, 33)
        pieces.append(hi)
        rest_exact = Fraction(rest) - Fraction(hi)
        rest = f"{rest_exact.numerator}/{rest_exact.denominator}"
    pieces.append(float(Fraction(rest)))
    return pieces[0], pieces[1], pieces[2], pieces[3]


PIO2 = _pio2_pieces()


def reduce_pio2(m: Math, x: Val) -> tuple[Val, Val, Val]:
    """``(rh, rl, n)`` with ``x = n*pi/2 + rh + rl`` for ``|x| <= MEDIUM``."""
    nf, n = m.round_to_int(m.mul(x, m.c(2 / math.pi)))
    p1, p2, p3, p4 = (m.c(p) for p in PIO2)
    y1 = m.sub(x, m.mul(nf, p1))  # exact
    y2, e2 = m.two_sum(y1, m.neg(m.mul(nf, p2)))
    y3, e3 = m.two_sum(y2, m.neg(m.mul(nf, p3)))
    tail = m.sub(m.add(e2, e3), m.mul(nf, p4))
    rh, rl = m.two_sum(y3, tail)
    return rh, rl, n


def sin_cos_reduced(m: Math, rh: Val, rl: Val) -> tuple[Val, Val]:
    """``(sin, cos)`` of ``rh + rl``, ``|rh| <= pi/4``."""
    z = m.mul(rh, rh)
    half_z = m.mul(m.c(0.5), z)
    sin_tail = m.mad(m.mul(rh, z), m.poly(z, coeffs.SIN_F64),
                     m.mul(rl, m.sub(m.c(1.0), half_z)))
    sin = m.add(rh, sin_tail)
    w = m.sub(m.c(1.0), half_z)
    cos_tail = m.sub(m.mul(m.mul(z, z), m.poly(z, coeffs.COS_F64)), m.mul(rh, rl))
    cos = m.add(w, m.add(m.sub(m.sub(m.c(1.0), w), half_z), cos_tail))
    return sin, cos


def _huge(m: Math, x: Val) -> Val:
    """``MEDIUM < |x| < inf``: the arguments left to libm."""
    ax = m.abs(x)
    return m.b.and_(m.cmp(">", ax, m.c(MEDIUM)), m.cmp("<", ax, m.c(math.inf)))


def _with_fallback(m: Math, x: Val, huge: Val, name: str, fast: Val) -> Val:
    """``fast``, or libm's ``name(x)`` where ``huge``."""
    b = m.b
    here = b.block
    slow = b.append_basic_block(f"{name}.huge")
    done = b.append_basic_block(f"{name}.done")
    b.cbranch(huge, slow, done)
    b.position_at_end(slow)
    exact = call_libm(m, name, x)
    b.branch(done)
    b.position_at_end(done)
    out = b.phi(m.fmt.ty)
    out.add_incoming(fast, here)
    out.add_incoming(exact, slow)
    return out


def _quadrant_parts(m: Math, x: Val, huge: Val) -> tuple[Val, Val, Val]:
    """``(sin r, cos r, n)`` for the inline reduction of ``x`` (of 0 where ``huge``;
    inf and NaN give NaN)."""
    rh, rl, n = reduce_pio2(m, m.sel(huge, m.c(0.0), x))
    sin, cos = sin_cos_reduced(m, rh, rl)
    return sin, cos, n


def _bit(m: Math, n: Val, mask: int) -> Val:
    return m.b.icmp_signed("!=", m.b.and_(n, m.ci(mask)), m.ci(0))


def _keep_zero(m: Math, x: Val, out: Val) -> Val:
    return m.sel(m.cmp("==", x, m.c(0.0)), x, out)  # sin(-0.0) = -0.0


def sin_kernel(m: Math, x: Val) -> Val:
    huge = _huge(m, x)
    sin, cos, n = _quadrant_parts(m, x, huge)
    value = m.sel(_bit(m, n, 1), cos, sin)
    value = m.sel(_bit(m, n, 2), m.neg(value), value)
    return _with_fallback(m, x, huge, "sin", _keep_zero(m, x, value))


def cos_kernel(m: Math, x: Val) -> Val:
    huge = _huge(m, x)
    sin, cos, n = _quadrant_parts(m, x, huge)
    value = m.sel(_bit(m, n, 1), sin, cos)
    flip = _bit(m, m.b.add(n, m.ci(1)), 2)
    return _with_fallback(m, x, huge, "cos", m.sel(flip, m.neg(value), value))


def tan_kernel(m: Math, x: Val) -> Val:
    huge = _huge(m, x)
    sin, cos, n = _quadrant_parts(m, x, huge)
    odd = _bit(m, n, 1)
    value = m.div(m.sel(odd, m.neg(cos), sin), m.sel(odd, sin, cos))
    return _with_fallback(m, x, huge, "tan", _keep_zero(m, x, value))


#: primitive -> float64 kernel body
KERNELS = {"sin": sin_kernel, "cos": cos_kernel, "tan": tan_kernel}
