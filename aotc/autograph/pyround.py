"""``round(x, ndigits)`` of a float, as Python rounds it.

Python rounds a float to the decimal nearest its exact binary value (``round(-3.55, 1)``
is -3.5: the float -3.55 is -3.54999...), where NumPy's ``np.round`` rounds
``x * 10**n`` after that product has been rounded to a float (-35.5, then -36). A NumPy
scalar's ``round`` is NumPy's, so the choice follows whether the value is a Python
number, which may be told only at run time (:func:`~aotc.tracing.tracer.python_number`).

Python's answer without decimal arithmetic, for ``|n| <= 22`` (where ``p = 10**|n|`` is
a float exactly): ``y = x * p`` (or ``x / p``) rounded, with its rounding error ``r``
found exactly (Dekker's product; a quotient's remainder). ``rint(y)`` is the nearest
integer to the exact value unless ``y`` lies exactly halfway, where the sign of ``r``
says which side the exact value is on (only an exact tie goes to the even neighbour).
The integer is then scaled back with one correctly rounded operation, which gives the
float nearest the decimal, as CPython's ``dtoa`` round trip does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api.pynumbers import marked
from ..tracing.tracer import Tracer, python_number

#: Veltkamp's splitting constant for float64: 2**27 + 1.
_SPLIT = 134217729.0
#: From this magnitude on, a float64 is an integer: nothing is left to round.
_INTEGRAL = 2.0**52


def _split(a: Any) -> tuple[Any, Any]:
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


def _product_error(a: Any, b: float, product: Any) -> Any:
    """``a * b - product`` exactly, for ``product`` the rounded ``a * b`` (Dekker)."""
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(np.float64(b))
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _python_round(x: Any, ndigits: int) -> Any:
    scale = 10.0 ** abs(ndigits)
    if ndigits >= 0:
        y = x * scale
        above = _product_error(x, scale, y) > 0  # the exact x * scale is above y
        below = _product_error(x, scale, y) < 0
    else:
        y = x / scale
        made = y * scale
        rest = (x - made) - _product_error(y, scale, made)  # x - y * scale, its sign exact
        above, below = rest > 0, rest < 0
    z = np.rint(y)
    z = np.where((y - z == 0.5) & above, z + 1.0, z)  # y halfway above z: the exact one
    z = np.where((z - y == 0.5) & below, z - 1.0, z)  # lies past the tie or short of it
    back = z / scale if ndigits >= 0 else z * scale
    return np.where(np.abs(y) >= _INTEGRAL, x, back)


def round_float(number: Tracer, ndigits: Any) -> Any:
    """``round(number, ndigits)`` of a traced float scalar."""
    numpy = np.round(number, ndigits)
    flag = python_number(number)
    if flag is False or number.dtype != np.float64 or isinstance(ndigits, Tracer) \
            or not -22 <= int(ndigits) <= 22:
        return numpy
    python = _python_round(number, int(ndigits))
    return marked(python if flag is True else np.where(flag, python, numpy), flag)
