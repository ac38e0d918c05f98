"""The ufuncs that take floats apart: ``frexp``, ``ldexp``, ``nextafter``, ``spacing``.

They are exact in NumPy (C's bit manipulations); here they are exact arithmetic on
powers of two, which ``exp2`` of an integer gives exactly:

- ``ldexp(x, n)`` multiplies by ``2**(n // 2)`` and then ``2**(n - n // 2)``: each factor
  is a normal number and the first product does not round, so the one rounding is the
  last (a subnormal or overflowing result rounds once, as C's ``ldexp``);
- ``frexp(x)`` guesses the exponent from ``log2|x|``, scales by it with ``ldexp`` and
  corrects the guess by one where ``log2`` rounded across a power of two;
- ``nextafter(x, y)`` adds or subtracts one unit in the last place of ``x``: ``2**(e -
  p)`` for ``x = m 2**e`` (``p`` the precision), half that when stepping towards zero
  from a power of two, and at least the smallest subnormal; ``spacing(x)`` is
  ``nextafter(x, ±inf) - x`` with ``x``'s sign, as NumPy defines it (the smallest
  subnormal for either zero).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer, as_tracer
from .functions_base import where
from .special import _operands
from .statistics import clip
from .ufuncs import DECOMPOSITIONS, apply_ufunc, loop_dtypes

I32 = np.dtype(np.int32)


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _scaled(x: Tracer, n: Tracer) -> Tracer:
    """``x * 2**n`` rounded once, for int64 ``n`` (clamped where the result is 0 or inf
    anyway)."""
    n = clip(n, -2200, 2200)
    first = _u(np.floor_divide, n, 2)
    power = lax.convert(first, x.dtype), lax.convert(n - first, x.dtype)
    return cast(Tracer, x * _u(np.exp2, power[0]) * _u(np.exp2, power[1]))


def _ldexp(a: Any, b: Any) -> Tracer:
    dtype = loop_dtypes(np.ldexp, (a, b))[-1]
    return _scaled(lax.convert(as_tracer(a), dtype),
                   lax.convert(as_tracer(b), np.dtype(np.int64)))


def _frexp(a: Any) -> tuple[Tracer, Tracer]:
    x = lax.convert(as_tracer(a), loop_dtypes(np.frexp, (a,))[0])  # (its last: the int)
    ordinary = _u(np.logical_and, _u(np.isfinite, x), x != 0)
    size = where(ordinary, _u(np.absolute, x), 1)
    guess = lax.convert(_u(np.floor, _u(np.log2, size)), np.dtype(np.int64)) + 1
    mantissa = _scaled(x, -guess)
    big = _u(np.absolute, mantissa) >= 1
    small = _u(np.absolute, mantissa) < 0.5
    exponent = where(big, guess + 1, where(small, guess - 1, guess))
    mantissa = where(big, mantissa * 0.5, where(small, mantissa * 2, mantissa))
    return (where(ordinary, mantissa, x),
            lax.convert(where(ordinary, exponent, 0), I32))


def _nextafter(a: Any, b: Any) -> Tracer:
    (x, y), dtype = _operands(np.nextafter, a, b)
    info = np.finfo(dtype)
    tiny = np.asarray(info.smallest_subnormal, dtype)[()]
    mantissa, exponent = _frexp(x)
    exponent = lax.convert(exponent, np.dtype(np.int64))
    towards_zero = (y > x) == (x < 0)
    at_power = _u(np.absolute, mantissa) == 0.5
    shift = where(_u(np.logical_and, towards_zero, at_power), 1, 0)
    unit = _u(np.maximum, _scaled(as_tracer(np.asarray(1, dtype)[()]),
                                  exponent - (info.nmant + 1) - shift), tiny)
    step = where(y > x, x + unit, x - unit)
    step = _u(np.copysign, step, where(step == 0, x, step))  # -tiny towards 0 is -0.0
    step = where(x == 0, _u(np.copysign, tiny, y), step)
    largest = _u(np.copysign, np.asarray(info.max, dtype)[()], x)
    step = where(_u(np.isinf, x), largest, step)  # (x != y here)
    return where(_u(np.logical_or, _u(np.isnan, x), _u(np.isnan, y)), x + y,
                 where(x == y, y, step))


def _spacing(a: Any) -> Tracer:
    (x,), dtype = _operands(np.spacing, a)
    inf = np.asarray(np.inf, dtype)[()]
    away = _nextafter(x, _u(np.copysign, inf, x)) - x
    away = where(_u(np.isinf, x), np.asarray(np.nan, dtype)[()], away)  # NumPy's NaN: +
    return where(x == 0, np.asarray(np.finfo(dtype).smallest_subnormal, dtype)[()], away)


DECOMPOSITIONS.update({
    np.ldexp: _ldexp, np.frexp: _frexp, np.nextafter: _nextafter, np.spacing: _spacing,
})
