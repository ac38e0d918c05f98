"""The error function and its complement, for ``math.erf`` and ``math.erfc``.

The algorithm is the one C libraries use (Sun's, in FreeBSD, musl and glibc's ``erf``):
rational approximations on ``|x| < 0.84375`` (of ``erf(x)/x - 1``), on ``[0.84375,
1.25)`` (of ``erf(|x|) - erx`` around 1), and of ``erfc`` on ``[1.25, 1/0.35)`` and
``[1/0.35, 28)``, where ``erfc(x) = exp(-z*z - 0.5625) * exp((z - x)(z + x) + R/S) / x``
with ``z`` the high half of ``x`` (so ``z*z`` is exact). The published coefficients
give under 1 ulp; every range is computed on every element and the right one selected
(branch-free, so it vectorizes), in float64 as ``math`` computes. ``z`` is split off
arithmetically (Veltkamp: ``x * (2^27 + 1)`` minus its difference with ``x``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tracing.tracer import Tracer
from .functions_base import where
from .ufuncs import apply_ufunc

ERX = 8.45062911510467529297e-01
EFX8 = 1.02703333676410069053e+00
PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
      -5.77027029648944159157e-03, -2.37630166566501626084e-05)
QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
      1.32494738004321644526e-04, -3.96022827877536812320e-06)
PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
      3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
      -2.16637559486879084300e-03)
QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
      1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
      -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
      -8.12874355063065934246e+01, -9.81432934416914548592e+00)
SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
      6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
      6.57024977031928170135e+00, -6.04244152148580987438e-02)
RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
      -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
      -4.83519191608651397019e+02)
SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
      3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
      -2.24409524465858183362e+01)
#: The smallest positive normal double: erf's result just below 1 past |x| = 6.
TINY = float(np.finfo(np.float64).tiny)


def _horner(coeffs: tuple[float, ...], x: Any) -> Any:
    result: Any = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        result = result * x + c
    return result


def _small(x: Any) -> Any:
    """``x * (erf(x) / x - 1)`` on ``|x| < 0.84375``: ``erf(x) = x + _small(x)``."""
    z = x * x
    return x * (_horner(PP, z) / _horner(QQ, z))


def _near_one(a: Any) -> Any:
    """``erf(a) - erx`` on ``0.84375 <= a < 1.25``."""
    s = a - 1.0
    return _horner(PA, s) / _horner(QA, s)


def _tail(a: Any) -> Any:
    """``erfc(a)`` on ``1.25 <= a < 28``."""
    s = 1.0 / (a * a)
    inner = a < 1.0 / 0.35
    ratio = where(inner, _horner(RA, s) / _horner(SA, s), _horner(RB, s) / _horner(SB, s))
    split = a * 134217729.0  # 2^27 + 1
    z = split - (split - a)
    exp = np.exp  # traced through __array_ufunc__
    return exp(-z * z - 0.5625) * exp((z - a) * (z + a) + ratio) / a


def erf(x: Any) -> Tracer:
    """``erf`` of a float64 tracer (any shape)."""
    a = apply_ufunc(np.absolute, x)
    sign: Any = apply_ufunc(np.copysign, 1.0, x)
    tiny_x = (8.0 * x + EFX8 * x) / 8.0
    small = where(a < 2.0 ** -28, tiny_x, x + _small(x))
    middle = sign * (ERX + _near_one(a))
    large = sign * (1.0 - _tail(where(a < 1.25, 1.25, a)))
    result = where(a < 0.84375, small, where(a < 1.25, middle,
                                             where(a < 6.0, large, sign * (1.0 - TINY))))
    return where(apply_ufunc(np.isnan, x), x, result)


def erfc(x: Any) -> Tracer:
    """``erfc`` of a float64 tracer (any shape)."""
    a = apply_ufunc(np.absolute, x)
    negative = x < 0
    y = _small(x)
    small = where(negative | (a < 0.25), 1.0 - (x + y), 0.5 - (x - 0.5 + y))
    small = where(a < 2.0 ** -56, 1.0 - x, small)
    near = 1.0 - ERX - _near_one(a)
    middle = where(negative, 1.0 + (ERX + _near_one(a)), near)
    tail: Any = _tail(where(a < 1.25, 1.25, where(a < 28.0, a, 27.0)))
    large = where(negative, 2.0 - tail, tail)
    beyond = where(negative, 2.0 - TINY, TINY * TINY)
    result = where(a < 0.84375, small, where(a < 1.25, middle, where(a < 28.0, large, beyond)))
    return where(apply_ufunc(np.isnan, x), x, result)
