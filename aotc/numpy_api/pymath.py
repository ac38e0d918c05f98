"""Python's ``math`` functions on traced scalars (``math.sqrt(x)`` in a kernel).

:data:`PYMATH` maps each ``math`` function to a stand-in that autograph's converted
calls use (``aotc.autograph.runtime.TRACED``). On build-time numbers the stand-in is
``math.fn`` itself. On a traced scalar it does what Python does with a NumPy scalar:
convert the arguments to float64 (``math`` computes in C doubles, so a float32 or an
integer argument is widened first) and apply the matching NumPy ufunc; the result is a
Python-like (weak) float64, an int64 for ``floor``/``ceil``/``trunc`` (computed from
the float, as ``math.floor(np.int64(v))`` is) and a bool for ``isnan``/``isinf``/
``isfinite``. A traced array is a build error (use ``np.sqrt``).

Where Python raises for a value outside a function's domain, the kernel gives NumPy's
answer, as Numba does: ``math.sqrt(-1.0)``, ``math.log(0.0)``, ``math.acos(2.0)`` and
``math.fmod(inf, 1.0)`` are NaN or -inf, and an overflowing ``math.exp`` is inf. A check
per call would keep loops over array items from vectorizing (measured: 5x slower for
``math.sqrt(x[i]) + math.exp(-x[i])``). Conversions to int are checked as ``int()`` is:
``math.floor`` of NaN or infinity is Python's ValueError or OverflowError, and beyond
int64 an OverflowError (a kernel's integers are int64), never an undefined int64.
``math.fmod`` is NumPy's ``fmod``. ``math.log(x, base)`` is ``log(x) / log(base)``, as
CPython computes it, with its ZeroDivisionError for base 1.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer, as_tracer, current
from . import errorfunction
from .complexes import angle, make_complex
from .random import integer_scalar, raise_if
from .ufuncs import apply_ufunc

F64 = np.dtype(np.float64)
C128 = np.dtype(np.complex128)
I64 = np.dtype(np.int64)


def _scalar(name: str, value: Any) -> Tracer:
    x = as_tracer(value, F64 if not isinstance(value, Tracer) else None)
    if x.ndim:
        raise current().error(f"{name} takes a number, not an array",
                              hint="use the NumPy function on arrays (np.sqrt...)")
    return x


def _float(name: str, value: Any) -> Tracer:
    """A ``math`` argument: a scalar, converted to a C double."""
    x = _scalar(name, value)
    if x.dtype.kind == "c":
        raise current().error(f"{name}: complex numbers are not supported "
                              "(must be real number, not complex)")
    return lax.convert(x, F64)


def _complex(name: str, value: Any) -> Tracer:
    """A ``cmath`` argument: a scalar, converted to a C double complex."""
    return lax.convert(_scalar(name, value), C128)


def _python(result: Tracer) -> Tracer:
    out = lax.fresh(result)
    out.weak = True  # a Python float or int: weak in arithmetic with arrays (NEP 50)
    return out


def python_numbers(result: Any) -> Any:
    """``result`` (a scalar tracer, a number or a tuple of them) as Python's numbers."""
    if isinstance(result, tuple):
        return tuple(python_numbers(r) for r in result)
    return _python(result) if isinstance(result, Tracer) and not result.ndim else result


def _log_of(kind: str) -> Callable[..., Tracer]:
    """``log(x)``, or ``log(x) / log(base)`` with CPython's ZeroDivisionError for base
    1 (``kind``: the division its message names, float or complex)."""
    def log(x: Tracer, base: Tracer | None = None) -> Tracer:
        num = apply_ufunc(np.log, x)
        if base is None:
            return num
        den = apply_ufunc(np.log, base)
        raise_if(np.equal(den, 0), "ZeroDivisionError", f"{kind} division by zero")
        return apply_ufunc(np.true_divide, num, den)
    return log


def int_of_float(x: Tracer, what: str = "int()") -> Any:
    """``int(x)`` of a float, truncated, with Python's errors for NaN and infinity (and
    an OverflowError beyond int64, where Python's int would grow); 0 there, so that a
    size computed from it before the kernel runs is valid until the error is raised."""
    raise_if(np.isnan(x), "ValueError", "cannot convert float NaN to integer")
    raise_if(np.isinf(x), "OverflowError", "cannot convert float infinity to integer")
    raise_if(np.greater_equal(np.abs(x), 2.0 ** 63), "OverflowError",
                 f"{what} of a float beyond int64's range (a compiled kernel's integers "
                 "are int64)")
    return lax.convert(as_tracer(np.where(np.less(np.abs(x), 2.0 ** 63), np.trunc(x), 0.0)),
                       I64)


def _to_int(ufunc: np.ufunc) -> Callable[[Tracer], Tracer]:
    return lambda x: int_of_float(apply_ufunc(ufunc, x), f"math.{ufunc.__name__}()")


def _stand_in(fn: Callable[..., Any], compute: Callable[..., Any], arity: tuple[int, ...],
              python_result: bool = True,
              argument: Callable[[str, Any], Tracer] = _float) -> Callable[..., Any]:
    name = f"{fn.__module__}.{fn.__name__}"

    def traced(*args: Any) -> Any:
        if not any(isinstance(a, Tracer) for a in args):
            return fn(*args)
        if len(args) not in arity:
            expected = " or ".join(map(str, arity))
            raise current().error(f"{name} takes {expected} argument(s) "
                                  f"({len(args)} given)")
        result = compute(*(argument(name, a) for a in args))
        return python_numbers(result) if python_result else result

    traced.__name__ = fn.__name__
    traced.__doc__ = f"``{name}`` on traced scalars (see :mod:`aotc.numpy_api.pymath`)."
    return traced


def _ufunc(ufunc: np.ufunc) -> Callable[..., Tracer]:
    return lambda *xs: apply_ufunc(ufunc, *xs)


_UNARY: dict[Callable[..., Any], np.ufunc] = {
    math.sqrt: np.sqrt, math.exp: np.exp, math.exp2: np.exp2, math.expm1: np.expm1,
    math.log10: np.log10, math.log2: np.log2, math.log1p: np.log1p, math.cbrt: np.cbrt,
    math.sin: np.sin, math.cos: np.cos, math.tan: np.tan, math.asin: np.arcsin,
    math.acos: np.arccos, math.atan: np.arctan, math.sinh: np.sinh, math.cosh: np.cosh,
    math.tanh: np.tanh, math.asinh: np.arcsinh, math.acosh: np.arccosh,
    math.atanh: np.arctanh, math.fabs: np.absolute, math.degrees: np.rad2deg,
    math.radians: np.deg2rad,
}
_BINARY: dict[Callable[..., Any], np.ufunc] = {
    math.atan2: np.arctan2, math.hypot: np.hypot, math.pow: np.power,
    math.copysign: np.copysign, math.fmod: np.fmod,
}
_PREDICATES: dict[Callable[..., Any], np.ufunc] = {
    math.isnan: np.isnan, math.isinf: np.isinf, math.isfinite: np.isfinite,
}
_TO_INT: dict[Callable[..., Any], np.ufunc] = {
    math.floor: np.floor, math.ceil: np.ceil, math.trunc: np.trunc,
}

def _isclose(a: Any, b: Any, *, rel_tol: Any = 1e-09, abs_tol: Any = 0.0) -> Any:
    """``math.isclose``: equal, or both finite and ``|a - b|`` within ``rel_tol`` of
    either's magnitude or within ``abs_tol`` (CPython's test, in that order)."""
    if not any(isinstance(v, Tracer) for v in (a, b, rel_tol, abs_tol)):
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    for tol in (rel_tol, abs_tol):
        if not isinstance(tol, Tracer) and tol < 0:
            math.isclose(0.0, 0.0, rel_tol=rel_tol, abs_tol=abs_tol)  # Python's ValueError
    x, y = _float("math.isclose", a), _float("math.isclose", b)
    rel, tol = _float("math.isclose", rel_tol), _float("math.isclose", abs_tol)
    diff = np.abs(y - x)
    near = (diff <= np.abs(rel * y)) | (diff <= np.abs(rel * x)) | (diff <= tol)
    return (x == y) | (np.isfinite(x) & np.isfinite(y) & near)


def _integer(name: str, value: Any) -> Tracer:
    """An integer ``math`` argument (Python's TypeError for a float)."""
    return integer_scalar(value, f"math.{name}'s argument", hint="convert with int(...)")


def _isqrt(n: Any) -> Any:
    """``math.isqrt``: the float square root corrected by one either way (exact for
    int64: each test divides rather than squares, which could overflow)."""
    if not isinstance(n, Tracer):
        return math.isqrt(n)
    k = _integer("isqrt", n)
    raise_if(np.less(k, 0), "ValueError", "isqrt() argument must be nonnegative")
    r: Any = lax.convert(as_tracer(np.floor(np.sqrt(lax.convert(k, F64)))), I64)
    safe = np.maximum(r, 1)
    r = np.where(np.greater(r, np.floor_divide(k, safe)), r - 1, r)  # r * r > k
    up = r + 1
    return np.where(np.less_equal(up, np.floor_divide(k, up)), up, r)  # (r+1)**2 <= k


def _gcd(*values: Any) -> Any:
    """``math.gcd``: Euclid's algorithm on the magnitudes, as a runtime loop."""
    if not any(isinstance(v, Tracer) for v in values):
        return math.gcd(*values)
    result: Any = as_tracer(np.int64(0))
    for v in values:
        def step(state: Any) -> Any:
            a, b = state
            return b, np.remainder(a, np.where(np.equal(b, 0), 1, b))
        result, _ = lax.while_loop(lambda s: np.not_equal(s[1], 0), step,
                                   (np.abs(result), np.abs(_integer("gcd", v))))
    return result


#: ``math`` function -> its stand-in in converted kernels (registered by autograph).
PYMATH: dict[Callable[..., Any], Callable[..., Any]] = {
    **{fn: _stand_in(fn, _ufunc(u), (1,)) for fn, u in _UNARY.items()},
    **{fn: _stand_in(fn, _ufunc(u), (2,)) for fn, u in _BINARY.items()},
    **{fn: _stand_in(fn, _ufunc(u), (1,), python_result=False) for fn, u in _PREDICATES.items()},
    **{fn: _stand_in(fn, _to_int(u), (1,)) for fn, u in _TO_INT.items()},
    math.erf: _stand_in(math.erf, errorfunction.erf, (1,)),
    math.erfc: _stand_in(math.erfc, errorfunction.erfc, (1,)),
    math.log: _stand_in(math.log, _log_of("float"), (1, 2)),
    math.isclose: _isclose, math.isqrt: _isqrt, math.gcd: _gcd,
}


def _rect(r: Tracer, phi: Tracer) -> Any:
    return make_complex(apply_ufunc(np.multiply, r, apply_ufunc(np.cos, phi)),
                        apply_ufunc(np.multiply, r, apply_ufunc(np.sin, phi)), C128)


_CMATH_UNARY: dict[Callable[..., Any], np.ufunc] = {
    cmath.exp: np.exp, cmath.sqrt: np.sqrt, cmath.log10: np.log10, cmath.sin: np.sin,
    cmath.cos: np.cos, cmath.sinh: np.sinh, cmath.cosh: np.cosh,
}  # (not tan, tanh and the inverse functions: aotc has no complex kernel for them yet)
_CMATH_PREDICATES: dict[Callable[..., Any], np.ufunc] = {
    cmath.isnan: np.isnan, cmath.isinf: np.isinf, cmath.isfinite: np.isfinite,
}

#: ``cmath`` function -> its stand-in: the arguments are converted to complex128 (C
#: double complex, as ``cmath`` computes), the result is a weak Python complex (a float
#: for ``phase``, a pair of floats for ``polar``). Domain errors give NumPy's answers, as
#: :data:`PYMATH` does.
PYCMATH: dict[Callable[..., Any], Callable[..., Any]] = {
    **{fn: _stand_in(fn, _ufunc(u), (1,), argument=_complex)
       for fn, u in _CMATH_UNARY.items()},
    **{fn: _stand_in(fn, _ufunc(u), (1,), python_result=False, argument=_complex)
       for fn, u in _CMATH_PREDICATES.items()},
    cmath.log: _stand_in(cmath.log, _log_of("complex"), (1, 2), argument=_complex),
    cmath.phase: _stand_in(cmath.phase, angle, (1,), argument=_complex),
    cmath.polar: _stand_in(cmath.polar, lambda z: (apply_ufunc(np.absolute, z), angle(z)),
                           (1,), argument=_complex),
    cmath.rect: _stand_in(cmath.rect, _rect, (2,)),
}
