"""``np.linalg.qr``, ``np.vander`` and ``np.polyfit``: LAPACK's Householder QR as a loop.

``qr`` is LAPACK's ``geqr2`` then ``org2r``, unblocked: at step ``k`` the column below the
diagonal is reflected onto the diagonal by ``H = I - tau v v^T`` (``dlarfg``: ``beta =
-sign(alpha) * hypot(alpha, |x|)``, ``|x|`` scaled as ``dnrm2`` scales it,
``v = x / (alpha - beta)`` with ``v[k] = 1``, ``tau =
(beta - alpha) / beta``, and no reflection when the column is already zero below the
diagonal), applied to the rest of ``R`` and accumulated into ``Q``. As in
:mod:`.linalg_solve`, every step works on the whole matrix under ``iota`` masks, so the
loop runs over ``min(m, n)`` (a runtime size) with fixed shapes. Signs follow LAPACK's,
so ``Q`` and ``R`` agree with NumPy's up to rounding.

``polyfit`` is NumPy's: the Vandermonde matrix of ``x`` (``np.vander``: powers by
repeated multiplication, as NumPy's ``multiply.accumulate``), its columns scaled to unit
norm, then the least-squares solution, here through QR (``R c = Q^T y``) where NumPy's
``lstsq`` uses the SVD: the same solution for a full-rank fit up to rounding. A fit of
lower rank (a diagonal element of ``R`` within ``len(x) * eps`` of the largest, where
NumPy's cut on singular values is) is a ``LinAlgError`` here, where NumPy warns and
returns its minimum-norm fit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr, minimum
from ..tracing.bind import size_value
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import eye, full_from_dims, iota
from .diagonals import diagonal as diagonal_of
from .functions_base import where
from .histograms import raise_if
from .joining import concatenate, cumprod
from .linalg import matmul
from .linalg_solve import _result_dtype, solve
from .loops import LINALG_ERROR
from .reductions import max_, sum_
from .shaping import transpose
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)


def scaled_norm(v: Tracer) -> Tracer:
    """``sqrt(sum(v * v))`` without the squares' overflow or underflow: computed on ``v``
    divided by its largest magnitude, as LAPACK's ``dnrm2`` does (entries near 1e-170 or
    1e154 square to 0 or inf)."""
    largest = max_(apply_ufunc(np.absolute, v))
    scale = where(largest > 0, largest, 1)
    scaled = v / scale
    return cast(Tracer, apply_ufunc(np.sqrt, sum_(scaled * scaled)) * scale)


def _householder(a: Tracer) -> tuple[Tracer, Tracer]:
    """``(Q, R)`` of an ``m x n`` matrix, ``Q`` the full ``m x m``."""
    m, n = a.aval.shape
    index, columns = iota(I64, (m,), 0), iota(I64, (ONE, n), 1)
    q0 = eye(lax.dim_value(m), dtype=a.dtype)

    def step(k: Any, state: Any) -> Any:
        r, q = state
        column = r[:, k]
        alpha = column[k]
        tail = where(index > k, column, 0)
        rest = scaled_norm(tail)
        reflect = rest != 0
        beta = -apply_ufunc(np.copysign, apply_ufunc(np.hypot, alpha, rest), alpha)
        safe_beta = where(reflect, beta, 1)
        tau = where(reflect, (beta - alpha) / safe_beta, 0)
        v = where(index == k, 1, where(index > k, tail / where(reflect, alpha - beta, 1), 0))
        r = r - tau * v[:, None] * matmul(v[None, :], r)
        q = q - tau * matmul(q, v[:, None]) * v[None, :]
        exact = where(index == k, where(reflect, beta, alpha),
                      where(index > k, 0, r[:, k]))  # the column as LAPACK leaves it
        r = where(columns == k, exact[:, None], r)
        return r, q

    r, q = lax.fori_loop(0, lax.dim_value(minimum(m, n)), step, (a, q0))
    return q, r


def qr(a: Any, mode: str = "reduced") -> Any:
    ctx = current()
    x = as_tracer(a)
    if x.ndim != 2:
        raise ctx.error("np.linalg.qr: only 2-D matrices are supported (stacks are not yet)")
    if mode not in ("reduced", "complete", "r"):
        raise ctx.error(f"Unrecognized mode '{mode}'")
    x = lax.convert(x, _result_dtype(x))
    q, r = _householder(x)
    m, n = x.aval.shape
    k = minimum(m, n)
    if mode == "complete":
        return q, r
    r = r[:lax.dim_value(k)]
    if mode == "r":
        return r
    return q[:, :lax.dim_value(k)], r


def vander(x: Any, N: Any = None, increasing: bool = False) -> Tracer:
    v = as_tracer(x)
    if v.ndim != 1:
        raise current().error("x must be a one-dimensional array or sequence.")
    dtype = np.promote_types(v.dtype, int)
    v = lax.convert(v, dtype)
    count = v.aval.shape[0] if N is None else size_value(N, "N")
    ones = full_from_dims((v.aval.shape[0], ONE), 1, dtype)
    rest = lax.broadcast_to(v[:, None], (v.aval.shape[0], count - 1)) \
        if not (count.is_const and count.value <= 1) else None
    columns = ones if rest is None else concatenate([ones, cumprod(rest, axis=1)], axis=1)
    columns = columns[:, :lax.dim_value(count)]
    return columns if increasing else cast(Tracer, columns[:, ::-1])


def polyfit(x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None,
            cov: bool = False) -> Tracer:
    ctx = current()
    if full or cov:
        raise ctx.error("np.polyfit: full=True and cov= are not supported yet")
    if isinstance(deg, Tracer) or not isinstance(deg, (int, np.integer)):
        raise ctx.error("np.polyfit: deg must be a build-time integer (it sets the "
                        "result's length)")
    if deg < 0:
        raise ctx.error("expected deg >= 0")
    xs, ys = as_tracer(x) + 0.0, as_tracer(y) + 0.0
    if xs.ndim != 1:
        raise ctx.error("expected 1D vector for x")
    if ys.ndim not in (1, 2):
        raise ctx.error("expected 1D or 2D array for y")
    ctx.check(">=", xs.aval.shape[0], ONE, "TypeError", "expected non-empty vector for x")
    if ys.aval.shape[0] != xs.aval.shape[0]:
        ctx.check("==", ys.aval.shape[0], xs.aval.shape[0], "TypeError",
                  "expected x and y to have same length")
        ys = lax.refine_shape(ys, xs.aval.shape + ys.aval.shape[1:])
    lhs = vander(xs, int(deg) + 1)
    rhs = ys
    if w is not None:
        weights = as_tracer(w) + 0.0
        lhs = lhs * weights[:, None]
        rhs = rhs * (weights[:, None] if rhs.ndim == 2 else weights)
    scale = apply_ufunc(np.sqrt, sum_(lhs * lhs, axis=0))
    lhs = lhs / scale
    q, r = qr(lhs)
    # Rank: NumPy's lstsq drops singular values below len(x) * eps of the largest; R's
    # diagonal stands in for them here (a zero there is a rank-deficient fit).
    diagonal = apply_ufunc(np.absolute, diagonal_of(r))
    cut = max_(diagonal) * (lax.dim_value(xs.aval.shape[0]) * float(np.finfo(xs.dtype).eps))
    raise_if(diagonal <= cut, "LinAlgError: np.polyfit: the fit is rank-deficient (fewer "
             "distinct x than coefficients); NumPy warns and returns its minimum-norm fit",
             LINALG_ERROR)
    coefficients = solve(r, matmul(transpose(q), rhs))
    return cast(Tracer, (transpose(coefficients) / scale).T if rhs.ndim == 2
                else coefficients / scale)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.linalg.qr: qr, np.vander: vander, np.polyfit: polyfit,
}
