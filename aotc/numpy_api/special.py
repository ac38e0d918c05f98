"""Elementwise functions NumPy builds from others, with NumPy's own special cases:
``logaddexp``, ``logaddexp2``, ``heaviside``, ``fmod``, ``modf``, ``gcd``, ``lcm`` (ufuncs),
``sinc`` and ``nan_to_num``.

Each is written as NumPy computes it (``npy_logaddexp``: ``x + log(2)`` when the inputs
are equal, which keeps two infinities of one sign finite-free; the larger input plus
``log1p(exp(-|x - y|))`` otherwise; NaN through), so results agree to the ulps of the
functions they are made of, and dtypes come from NumPy's own loops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.lib import _function_base_impl as numpy_functions

from .. import lax
from ..tracing.tracer import Tracer, as_tracer, current
from .complexes import imag, make_complex, real
from .functions_base import where
from .reductions import any_
from .ufuncs import DECOMPOSITIONS, apply_ufunc, broadcast_all, loop_dtypes


def _operands(ufunc: np.ufunc, *args: Any) -> tuple[list[Tracer], np.dtype]:
    """The operands converted to the dtype of NumPy's loop for them."""
    dtype = loop_dtypes(ufunc, args)[-1]
    return [lax.convert(as_tracer(a, None if isinstance(a, Tracer) else dtype), dtype)
            for a in args], dtype


def _log_add_exp(ufunc: np.ufunc, log_two: float, exp: np.ufunc, scale: float
                 ) -> Callable[[Any, Any], Tracer]:
    def apply(a: Any, b: Any) -> Tracer:
        (x, y), dtype = _operands(ufunc, a, b)

        def c(v: float) -> Any:
            return np.asarray(v, dtype)[()]

        def tail(big: Tracer, d: Any) -> Any:  # big + log1p(exp(d)) / log(base)
            return big + apply_ufunc(np.log1p, apply_ufunc(exp, d)) * c(scale)

        d = x - y
        return where(x == y, x + c(log_two),
                     where(d > 0, tail(x, -d), where(d <= 0, tail(y, d), d)))
    return apply


def _heaviside(a: Any, b: Any) -> Tracer:
    (x, h0), dtype = _operands(np.heaviside, a, b)
    zero, one = np.asarray(0, dtype)[()], np.asarray(1, dtype)[()]
    return where(apply_ufunc(np.isnan, x), x,
                 where(x == 0, h0, where(x < 0, zero, one)))


def _fmod(a: Any, b: Any) -> Tracer:
    """C's ``fmod``: the remainder with the sign of ``x`` (truncated division); for
    integers ``x - trunc(x / y) * y``, 0 for a zero divisor, as NumPy's loop gives."""
    (x, y), dtype = _operands(np.fmod, a, b)
    if dtype.kind == "f":
        magnitude = apply_ufunc(np.remainder, apply_ufunc(np.absolute, x),
                                apply_ufunc(np.absolute, y))
        return apply_ufunc(np.copysign, magnitude, x)
    zero = np.asarray(0, dtype)[()]
    safe = where(y == 0, np.asarray(1, dtype)[()], y)
    rest = apply_ufunc(np.remainder, x, safe)  # Python's: the sign of y
    rest = where((rest != 0) & ((rest < 0) != (x < 0)), rest - safe, rest)
    return where(y == 0, zero, rest)


def _modf(a: Any) -> tuple[Tracer, Tracer]:
    """(fractional part, integral part), both with the sign of ``x``; ``inf`` has a zero
    fraction."""
    (x,), _ = _operands(np.modf, a)
    whole = apply_ufunc(np.trunc, x)
    part = where(apply_ufunc(np.isinf, x), 0.0, x - whole)
    return apply_ufunc(np.copysign, part, x), whole


def _gcd(a: Any, b: Any) -> Tracer:
    """Euclid's algorithm on every element at once, until every remainder is 0."""
    (x, y), dtype = _operands(np.gcd, a, b)
    x, y = broadcast_all([apply_ufunc(np.absolute, x), apply_ufunc(np.absolute, y)],
                         scalars=True)  # (the loop carries both at the result's shape)

    def more(state: Any) -> Any:
        return any_(state[1] != 0)

    def step(state: Any) -> Any:
        p, q = state
        nonzero = q != 0
        return (where(nonzero, q, p),
                where(nonzero, apply_ufunc(np.remainder, p, where(nonzero, q, 1)), q))

    result, _ = lax.while_loop(more, step, (x, y))
    return lax.convert(result, dtype)


def _lcm(a: Any, b: Any) -> Tracer:
    (x, y), dtype = _operands(np.lcm, a, b)
    g = _gcd(x, y)
    zero = np.asarray(0, dtype)[()]
    quotient = apply_ufunc(np.floor_divide, apply_ufunc(np.absolute, x),
                           where(g == 0, np.asarray(1, dtype)[()], g))
    return where(g == 0, zero, apply_ufunc(np.absolute, quotient * y))


def sinc(x: Any) -> Tracer:
    """``sin(pi y) / (pi y)`` with ``y`` 1e-20 where ``x`` is 0, as NumPy's."""
    v = as_tracer(x)
    y = apply_ufunc(np.multiply, math.pi, where(v == 0, 1.0e-20, v))
    return apply_ufunc(np.divide, apply_ufunc(np.sin, y), y)


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Tracer:
    v = as_tracer(x)
    if v.dtype.kind == "c":  # each part on its own, as NumPy does
        re, im = (nan_to_num(p, True, nan, posinf, neginf) for p in (real(v), imag(v)))
        return make_complex(re, im, v.dtype)
    if v.dtype.kind != "f":
        return lax.fresh(v)
    big = np.finfo(v.dtype).max
    fills = [np.asarray(big if posinf is None else posinf).astype(v.dtype)[()],
             np.asarray(-big if neginf is None else neginf).astype(v.dtype)[()],
             np.asarray(nan).astype(v.dtype)[()]]
    return where(apply_ufunc(np.isnan, v), fills[2],
                 where(v == np.inf, fills[0], where(v == -np.inf, fills[1], v)))


DECOMPOSITIONS.update({
    np.logaddexp: _log_add_exp(np.logaddexp, math.log(2.0), np.exp, 1.0),
    np.logaddexp2: _log_add_exp(np.logaddexp2, 1.0, np.exp2, 1.0 / math.log(2.0)),
    np.heaviside: _heaviside, np.fmod: _fmod, np.modf: _modf, np.gcd: _gcd, np.lcm: _lcm,
})
def _chebyshev(x: Tracer, coefficients: Any) -> Tracer:
    """NumPy's ``_chbevl``: Clenshaw's recurrence for a Chebyshev series at ``x``."""
    b0: Any = float(coefficients[0])
    b1: Any = 0.0
    b2: Any = 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + float(c)
    return cast(Tracer, 0.5 * (b0 - b2))


def i0(x: Any) -> Tracer:
    """NumPy's (Cephes'): a Chebyshev series in ``x / 2 - 2`` up to 8, in ``32 / x - 2``
    over ``sqrt(x)`` beyond, both times ``exp(x)``."""
    v = as_tracer(x)
    if v.dtype.kind == "c":
        raise current().error("i0 not supported for complex values")
    if v.dtype.kind != "f":
        v = lax.convert(v, np.dtype(np.float64))
    v = apply_ufunc(np.absolute, v)
    near = apply_ufunc(np.exp, v) * _chebyshev(v / 2.0 - 2, _I0_NEAR)
    far = apply_ufunc(np.exp, v) * _chebyshev(32.0 / v - 2.0, _I0_FAR) \
        / apply_ufunc(np.sqrt, v)
    return where(v <= 8.0, near, far)


_I0_NEAR = numpy_functions._i0A  # type: ignore[attr-defined]
_I0_FAR = numpy_functions._i0B  # type: ignore[attr-defined]

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sinc: sinc, np.nan_to_num: nan_to_num, np.i0: i0,
}
