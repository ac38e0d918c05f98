"""Elementwise functions NumPy builds from others, with NumPy's own special cases:
``logaddexp``, ``logaddexp2``, ``heaviside`` (ufuncs), ``sinc`` and ``nan_to_num``.

Each is written as NumPy computes it (``npy_logaddexp``: ``x + log(2)`` when the inputs
are equal, which keeps two infinities of one sign finite-free; the larger input plus
``log1p(exp(-|x - y|))`` otherwise; NaN through), so results agree to the ulps of the
functions they are made of, and dtypes come from NumPy's own loops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..tracer import Tracer, as_tracer
from .complexes import imag, make_complex, real
from .functions_base import where
from .ufuncs import DECOMPOSITIONS, apply_ufunc, loop_dtypes


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
    np.heaviside: _heaviside,
})
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sinc: sinc, np.nan_to_num: nan_to_num,
}
