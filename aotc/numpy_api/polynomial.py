"""``np.polyval`` (Horner's scheme, exactly as NumPy writes it), ``polyadd``,
``polysub``, ``polymul``, ``polyder`` and ``polyint`` (NumPy's definitions).

``y = zeros_like(x)``, then ``y = y * x + pv`` for each coefficient, highest power
first, so the dtype is NumPy's (x's dtype promoted with p's), ``0 * inf`` makes the
first step NaN for an infinite x as in NumPy, and integers wrap around. Up to
:data:`UNROLL` coefficients of build-time count are unrolled; more, or a count known only
at run time, become a ``fori_loop`` over the coefficients.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr, maximum, relu
from ..tracing.tracer import Tracer, as_tracer, current
from .convolution import convolve
from .creation import full_from_dims, iota
from .functions_base import where
from .joining import asarray, concatenate
from .ufuncs import apply_ufunc

#: Coefficient counts known at build time up to this are unrolled.
UNROLL = 32


def polyval(p: Any, x: Any) -> Tracer:
    coeffs = asarray(p)
    if coeffs.ndim == 0:
        raise current().error("iteration over a 0-d array",
                              hint="np.polyval takes a sequence of coefficients")
    xv = as_tracer(x)
    if xv.weak:  # NumPy sees a Python number as a (strong) 0-d array here
        xv = Tracer(xv.atom)
    y = full_from_dims(xv.aval.shape, 0, xv.dtype)

    def horner(y: Tracer, pv: Tracer) -> Tracer:
        return apply_ufunc(np.add, apply_ufunc(np.multiply, y, xv), pv)

    n = coeffs.aval.shape[0]
    if n.is_const and n.value <= UNROLL:
        for i in range(n.value):
            y = horner(y, coeffs[i])
        return y
    if n.is_const:
        y = horner(y, coeffs[0])
    else:  # the first step fixes the dtype; with no coefficients it keeps zeros
        tail = full_from_dims((DimExpr.const(1),) + coeffs.aval.shape[1:], 0, coeffs.dtype)
        first = horner(y, concatenate([coeffs, tail])[0])
        y = where(apply_ufunc(np.greater, lax.dim_value(n), 0), first,
                  lax.convert(y, first.dtype))
    return cast(Tracer, lax.fori_loop(1, coeffs.shape[0], lambda i, y: horner(y, coeffs[i]), y))


def _coefficients(p: Any) -> Tracer:
    c = asarray(p)
    if c.ndim != 1:
        raise current().error("np.poly* functions take 1-D coefficient arrays here")
    return c


def _aligned(ufunc: np.ufunc) -> Callable[[Any, Any], Tracer]:
    """NumPy's ``polyadd``/``polysub``: the shorter one padded with leading zeros (the
    high powers), then ``ufunc`` of the two."""
    def apply(a1: Any, a2: Any) -> Tracer:
        a, b = _coefficients(a1), _coefficients(a2)
        longest = maximum(a.aval.shape[0], b.aval.shape[0])
        padded = [concatenate([full_from_dims((longest - c.aval.shape[0],), 0, c.dtype), c])
                  for c in (a, b)]
        return apply_ufunc(ufunc, *padded)
    return apply


polyadd, polysub = _aligned(np.add), _aligned(np.subtract)


def polymul(a1: Any, a2: Any) -> Tracer:
    return convolve(_coefficients(a1), _coefficients(a2))


def polyder(p: Any, m: int = 1) -> Tracer:
    """NumPy's: ``p[:-1] * arange(n - 1, 0, -1)``, ``m`` times (a build-time count)."""
    if int(m) < 0:
        raise current().error("Order of derivative must be positive (see polyint)")
    c = _coefficients(p)
    c = c if c.dtype.kind in "fc" else lax.convert(c, np.result_type(c.dtype, np.int64))
    for _ in range(int(m)):
        n = c.aval.shape[0]
        powers = lax.convert(iota(np.dtype(np.int64), (relu(n - 1),), 0), c.dtype)
        c = apply_ufunc(np.multiply, c[:-1], lax.dim_value(n) - 1 - powers)
    return c


def polyint(p: Any, m: int = 1, k: Any = None) -> Tracer:
    """NumPy's: ``concatenate((p / arange(n, 0, -1), [k]))``, ``m`` times."""
    if int(m) < 0:
        raise current().error("Order of integral must be positive (see polyder)")
    c = _coefficients(p)
    constants = [0.0] * int(m) if k is None else (list(k) if np.ndim(k) else [k] * int(m))
    for step in range(int(m)):
        n = c.aval.shape[0]
        powers = lax.convert(iota(np.dtype(np.int64), (n,), 0), np.dtype(np.float64))
        scaled = apply_ufunc(np.true_divide, c, lax.dim_value(n) - powers)
        tail = lax.convert(as_tracer(constants[step]), scaled.dtype)[None]
        c = concatenate([scaled, tail])
    return c


def _no_eigenvalues(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise current().error(f"np.{name} needs the eigenvalues of a general (nonsymmetric) "
                              "matrix, which aotc does not compile yet",
                              hint="np.linalg.eigh and eigvalsh handle symmetric matrices")
    return refuse


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.polyval: polyval, np.polyadd: polyadd, np.polysub: polysub, np.polymul: polymul,
    np.polyder: polyder, np.polyint: polyint,
}
#: NumPy dispatches these on the bare array (not a sequence of them), which a tracer is
#: not: stand-ins for any call, so they fail with a located message. The supported-API
#: table lists them as refused, not as compiled.
NOT_COMPILED: dict[Callable[..., Any], Callable[..., Any]] = {
    np.roots: _no_eigenvalues("roots"), np.poly: _no_eigenvalues("poly"),
    np.linalg.eig: _no_eigenvalues("linalg.eig"),
    np.linalg.eigvals: _no_eigenvalues("linalg.eigvals"),
}
