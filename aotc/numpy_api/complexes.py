"""Complex numbers: the parts as views (``z.real``, ``np.imag(z)``), ``np.angle``, the
``iscomplex`` family, ``complex(re, im)``, and NumPy's scalar types called on traced
values (``np.complex128(x)``, ``np.float32(x)``).

A complex array's parts are views in NumPy, so they are here: a part's window says which
part it holds (see :mod:`.views`), so writes through it (``z.real[...] = 0``,
``z.imag += 1``, ``z.real = x``) change ``z``. Of a real array, ``x.real`` is ``x`` itself
and ``x.imag`` zeros, as NumPy has them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from .. import lax
from ..ops.elementwise import complex_p, imag_p, real_p
from ..tracing.tracer import Tracer, as_tracer, current
from ..types import real_dtype
from .functions_base import warn_complex_cast
from .ufuncs import apply_ufunc, broadcast_all
from .views import Window, make_view
from .writes import write


def _with_part(k: int) -> Callable[[Window], Window]:
    return lambda window: replace(window, part=k)


def _part(a: Any, k: int) -> Any:
    if not isinstance(a, Tracer):  # a build-time value: NumPy's own
        return np.real(a) if k == 0 else np.imag(a)
    if a.dtype.kind != "c":
        if k == 0:
            return a
        return lax.broadcast_to(lax.convert(as_tracer(0), a.dtype), a.aval.shape)
    part = lax.bind1((real_p, imag_p)[k], a.atom)
    part.weak = a.weak
    return make_view(a, part, _with_part(k))


def real(val: Any) -> Any:
    """``np.real`` / ``z.real``: a view of the real parts (of a real array, the array)."""
    return _part(val, 0)


def imag(val: Any) -> Any:
    """``np.imag`` / ``z.imag``: a view of the imaginary parts (of a real array, zeros)."""
    return _part(val, 1)


def part_property(k: int) -> property:
    """``z.real`` / ``z.imag`` on tracers, with NumPy's setters (``z.imag = v`` writes)."""
    def setter(self: Tracer, value: Any) -> None:
        if k == 1 and self.dtype.kind != "c":
            raise current().error("array does not have imaginary part to set")
        write(_part(self, k), Ellipsis, value)
    return property(lambda self: _part(self, k), setter)


def make_complex(re: Any, im: Any, dtype: np.dtype) -> Tracer:
    """``re + im*1j`` of complex ``dtype``, exactly: ``im`` never multiplies ``1j``, so an
    infinite ``im`` leaves the real part alone (``complex(0.0, inf)``)."""
    part = real_dtype(dtype)
    x, y = (lax.convert(as_tracer(v), part) for v in (re, im))
    x, y = broadcast_all([x, y])
    return lax.bind1(complex_p, x.atom, y.atom)


def angle(z: Any, deg: bool = False) -> Tracer:
    """``np.angle``: ``arctan2(imag, real)``, in degrees with ``deg``."""
    x = as_tracer(z)
    if x.dtype.kind == "c":
        result = apply_ufunc(np.arctan2, imag(x), real(x))
    else:
        result = apply_ufunc(np.arctan2, 0, x)
    if deg:
        result = apply_ufunc(np.multiply, result, 180 / math.pi)
    return result


def iscomplexobj(x: Any) -> bool:
    return np.dtype(x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype).kind == "c"


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)


def iscomplex(x: Any) -> Tracer:
    """Elements whose imaginary part is nonzero (all False for a real array)."""
    return apply_ufunc(np.not_equal, imag(as_tracer(x)), 0)


def isreal(x: Any) -> Tracer:
    return apply_ufunc(np.equal, imag(as_tracer(x)), 0)


def conj(a: Any) -> Tracer:
    """``x.conj()`` / ``x.conjugate()``: the ufunc ``np.conjugate``."""
    return apply_ufunc(np.conjugate, a)


def scalar_type(kind: type) -> Callable[..., Any]:
    """``np.float64(x)``, ``np.complex128(x)``, ``np.complex128(re, im)``... of traced
    values: a conversion of a scalar (``np.float64(z)`` takes the real part, with NumPy's
    ``ComplexWarning``); of build-time values, NumPy's own scalar."""
    dtype = np.dtype(kind)

    def make(*args: Any) -> Any:
        if not any(isinstance(a, Tracer) for a in args):
            return kind(*args)
        if len(args) == 2 and dtype.kind == "c":
            return make_complex(args[0], args[1], dtype)
        x = as_tracer(args[0])
        if len(args) != 1 or x.ndim:
            raise current().error(f"np.{kind.__name__}() of a traced value takes one scalar",
                                  hint=f"convert arrays with .astype(np.{dtype})")
        warn_complex_cast(x.dtype, dtype)
        return lax.convert(x, dtype)
    make.__name__ = kind.__name__
    return make


#: Functions of NumPy's namespace this module implements (merged into the dispatch table).
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.real: real, np.imag: imag, np.angle: angle, np.iscomplexobj: iscomplexobj,
    np.isrealobj: isrealobj, np.iscomplex: iscomplex, np.isreal: isreal,
}
#: NumPy's scalar types, called on traced values (reached through autograph's calls).
SCALAR_TYPES: dict[Callable[..., Any], Callable[..., Any]] = {
    t: scalar_type(t) for t in (np.complex64, np.complex128, np.float32, np.float64, np.int8,
                                np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.bool_)
}
