"""``math`` functions of runtime values that are algorithms rather than one ufunc, as
Python source that kernels compile (converted as a user's own helpers are, see
:mod:`.pymodules`).

``gamma`` and ``lgamma`` are CPython's own (``Modules/mathmodule.c``): Lanczos' sum with
CPython's coefficients, exact factorials for small integers and the reflection formula
below zero, with CPython's errors (a pole or an overflow raises as Python does).
``fsum`` is CPython's exact sum (Shewchuk's non-overlapping partials, then one correct
rounding); there are never more than :data:`_PARTIALS` partials of doubles.
``remainder`` and ``ulp`` follow CPython's definitions; ``dist`` scales by the largest
difference before squaring, so it neither overflows nor underflows. Each result is a
Python float (or int), weak in arithmetic with arrays, as Python's is.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_LANCZOS_G = 6.024680040776729583740234375
_LANCZOS_G_MINUS_HALF = 5.524680040776729583740234375
_LANCZOS_NUM = (
    23531376880.410759688572007674451636754734846804940,
    42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843,
    17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708,
    1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801,
    31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768,
    186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024,
    210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408,
)
#: The denominator's coefficients: x (x + 1) ... (x + 11), expanded.
_LANCZOS_DEN = (0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0,
                13339535.0, 2637558.0, 357423.0, 32670.0, 1925.0, 66.0, 1.0)
#: Gamma of 1 to 23: (n - 1)!, exact in a double.
_GAMMA_INTEGRAL = tuple(float(math.factorial(n - 1)) for n in range(1, 24))
_LOGPI = 1.144729885849400174143427351353058711647
#: A bound on fsum's partials: they do not overlap, and doubles span 2098 bits.
_PARTIALS = 48


def _lanczos_sum(x: Any) -> Any:
    num = 0.0
    den = 0.0
    if x < 5.0:
        for a, b in zip(_LANCZOS_NUM[::-1], _LANCZOS_DEN[::-1], strict=True):
            num = num * x + a
            den = den * x + b
    else:
        for a, b in zip(_LANCZOS_NUM, _LANCZOS_DEN, strict=True):
            num = num / x + a
            den = den / x + b
    return num / den


def _sinpi(x: Any) -> Any:
    """sin(pi x), exact at the integers and half-integers."""
    y = math.fmod(abs(x), 2.0)
    n = round(2.0 * y)
    if n == 0:
        r = math.sin(math.pi * y)
    elif n == 1:
        r = math.cos(math.pi * (y - 0.5))
    elif n == 2:
        r = math.sin(math.pi * (1.0 - y))
    elif n == 3:
        r = -math.cos(math.pi * (y - 1.5))
    else:
        r = math.sin(math.pi * (y - 2.0))
    return math.copysign(1.0, x) * r


def gamma(x: Any) -> Any:
    x = float(x)
    if math.isnan(x) or x == math.inf:
        return x
    if x == -math.inf or (x == np.floor(x) and x <= 0.0):
        raise ValueError("math domain error")
    if x == np.floor(x) and x <= 23.0:
        return _GAMMA_INTEGRAL[int(x) - 1]
    absx = abs(x)
    if absx < 1e-20:
        return 1.0 / x
    if absx > 200.0:
        if x < 0.0:
            return 0.0 / _sinpi(x)
        raise OverflowError("math range error")
    y = absx + _LANCZOS_G_MINUS_HALF
    if absx > _LANCZOS_G_MINUS_HALF:
        z = (y - absx) - _LANCZOS_G_MINUS_HALF
    else:
        z = (y - _LANCZOS_G_MINUS_HALF) - absx
    z = z * _LANCZOS_G / y
    if x < 0.0:
        r = -math.pi / _sinpi(absx) / absx * math.exp(y) / _lanczos_sum(absx)
        r -= z * r
        if absx < 140.0:
            r /= math.pow(y, absx - 0.5)
        else:
            half = math.pow(y, absx / 2.0 - 0.25)
            r = r / half / half
    else:
        r = _lanczos_sum(absx) / math.exp(y)
        r += z * r
        if absx < 140.0:
            r *= math.pow(y, absx - 0.5)
        else:
            half = math.pow(y, absx / 2.0 - 0.25)
            r = r * half * half
    if math.isinf(r):
        raise OverflowError("math range error")
    return r


def lgamma(x: Any) -> Any:
    x = float(x)
    if math.isnan(x):
        return x
    if math.isinf(x):
        return math.inf
    if x == np.floor(x) and x <= 2.0:
        if x <= 0.0:
            raise ValueError("math domain error")
        return 0.0
    absx = abs(x)
    if absx < 1e-20:
        return -math.log(absx)
    r = math.log(_lanczos_sum(absx)) - _LANCZOS_G
    r += (absx - 0.5) * (math.log(absx + _LANCZOS_G - 0.5) - 1.0)
    if x < 0.0:
        r = _LOGPI - math.log(abs(_sinpi(absx))) - math.log(absx) - r
    if math.isinf(r):
        raise OverflowError("math range error")
    return r


def fsum(iterable: Any) -> Any:
    partials = np.zeros(_PARTIALS)
    n = 0
    special = 0.0
    infinities = 0.0
    for item in iterable:
        x = float(item)
        if not math.isfinite(x):
            if math.isinf(x):
                infinities += x
            special += x
            continue
        i = 0
        for j in range(n):
            y = partials[j]
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                partials[i] = lo
                i += 1
            x = hi
        if not math.isfinite(x):
            raise OverflowError("intermediate overflow in fsum")
        partials[i] = x
        n = i + 1
    if special != 0.0:
        if math.isnan(infinities):
            raise ValueError("-inf + inf in fsum")
        return special
    hi = 0.0
    if n > 0:
        n -= 1
        hi = partials[n]
        lo = 0.0
        while n > 0:
            x = hi
            n -= 1
            y = partials[n]
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                break
        if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0)
                      or (lo > 0.0 and partials[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            if y == x - hi:
                hi = x
    return float(hi)


def remainder(x: Any, y: Any) -> Any:
    x = float(x)
    y = float(y)
    if math.isnan(x):
        return x
    if math.isnan(y):
        return y
    if math.isinf(x) or y == 0.0:
        raise ValueError("math domain error")
    if math.isinf(y):
        return x
    absx = abs(x)
    absy = abs(y)
    m = math.fmod(absx, absy)
    c = absy - m
    if m < c:
        r = m
    elif m > c:
        r = -c
    else:
        r = m - 2.0 * math.fmod(0.5 * (absx - m), absy)
    return math.copysign(1.0, x) * r


def ulp(x: Any) -> Any:
    x = abs(float(x))
    if not math.isfinite(x):
        return x
    up = float(np.nextafter(x, math.inf))
    if math.isinf(up):
        return x - float(np.nextafter(x, -math.inf))
    return up - x


def lcm(*integers: Any) -> Any:
    r = 1
    for k in integers:
        k = abs(int(k))
        r = 0 if r == 0 or k == 0 else abs(r // math.gcd(r, k) * k)
    return r


def dist(p: Any, q: Any) -> Any:
    if len(p) != len(q):
        raise ValueError("both points must have the same number of dimensions")
    largest = 0.0
    nan = False
    for i in range(len(p)):
        d = abs(float(p[i]) - float(q[i]))
        nan = nan or math.isnan(d)
        largest = max(largest, d)
    if math.isinf(largest):
        return largest
    if nan:
        return math.nan
    if largest == 0.0:
        return 0.0
    total = 0.0
    for i in range(len(p)):
        scaled = (float(p[i]) - float(q[i])) / largest
        total += scaled * scaled
    return largest * math.sqrt(total)


def ldexp(x: Any, i: Any) -> Any:
    if isinstance(i, float) or getattr(i, "dtype", np.dtype(int)).kind not in "iub":
        raise TypeError("Expected an int as second argument to ldexp.")
    x = float(x)
    r = float(np.ldexp(x, int(i)))
    if math.isinf(r) and math.isfinite(x):
        raise OverflowError("math range error")
    return r


def frexp(x: Any) -> Any:
    mantissa, exponent = np.frexp(float(x))
    return float(mantissa), int(exponent)


def modf(x: Any) -> Any:
    fraction, whole = np.modf(float(x))
    return float(fraction), float(whole)


def nextafter(x: Any, y: Any) -> Any:
    return float(np.nextafter(float(x), float(y)))
