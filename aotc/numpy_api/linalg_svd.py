"""``np.linalg.svd`` and what NumPy builds on it: ``pinv``, ``lstsq``, ``matrix_rank``,
``cond`` and the 2-norm and nuclear norm of a matrix.

A real matrix goes to NumPy's own LAPACK loops (``svd``, ``svd_s``, ``svd_f``;
``lstsq``'s ``gelsd``), as ``numpy.linalg`` calls them, but a small one in a loop or a
stack (:mod:`.lapack`). That one, and a complex one, takes one-sided Jacobi (Hestenes;
LAPACK's ``dgesvj``): the columns of ``A`` are rotated in pairs until every pair is
orthogonal (``|a_p . a_q| <= m * eps * |a_p||a_q|``), the same rotations accumulated into
``V``. Then ``A V`` has orthogonal columns, their
norms are the singular values and the columns scaled to unit length are ``U``. It needs
no bidiagonalization, is accurate to high relative precision, and each rotation is a
loop over two rows (the columns are kept as rows of ``A^T``), so it is a short program of
nested ``fori_loop``s. A wide matrix is factored through its transpose (Jacobi on more
columns than rows would try to make too many columns orthogonal), chosen at run time when
the shape leaves it open. The columns of ``U`` for zero singular values (and the extra
columns of ``full_matrices=True``) complete an orthonormal basis: the unit vector of the
coordinate the columns so far cover least, with those columns projected out twice.

Singular values are in descending order, as LAPACK's. Singular vectors are unique only
up to sign (and to rotations within a repeated singular value): they match NumPy's up to
those, as two LAPACK builds do. Non-finite input is NumPy's ``LinAlgError`` ("SVD did not
converge"), raised as ``ValueError`` (see :mod:`.linalg_solve`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr, maximum, minimum
from ..tracing.tracer import Tracer, as_tracer, current
from . import linalg
from .creation import eye, full_from_dims, iota
from .functions_base import where
from .histograms import raise_if
from .joining import concatenate
from .lapack import SMALL, by_order
from .linalg import matmul
from .linalg_solve import _result_dtype, inv, per_matrix
from .loops import LINALG_ERROR, call_loop
from .reductions import any_, max_, min_, sum_
from .sorting import argsort
from .statistics import argmin, count_nonzero
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
#: Sweeps over every pair of columns before the SVD is declared not converged (dgesvj's).
MAX_SWEEPS = 30
NO_SVD = "SVD did not converge"
NO_LSTSQ = "SVD did not converge in Linear Least Squares"


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def rotate_rows(rows: Tracer, p: Any, q: Any, c: Tracer, s: Tracer) -> Tracer:
    """Rows ``p`` and ``q`` of ``rows`` replaced by ``c r_p - s r_q`` and ``s r_p + c r_q``
    (both computed before either is written): a Jacobi rotation."""
    rp, rq = rows[p], rows[q]
    new_p, new_q = c * rp - s * rq, s * rp + c * rq
    rows[p] = new_p
    rows[q] = new_q
    return rows


def each_pair(n: Tracer, step: Callable[[Any, Any, Any], Any], state: Any) -> Any:
    """``state = step(p, q, state)`` for every ``p < q < n`` in order: a Jacobi sweep."""
    return lax.fori_loop(0, n - 1, lambda p, st: lax.fori_loop(
        p + 1, n, lambda q, inner: step(p, q, inner), st), state)


def _jacobi(w: Tracer, tol: Tracer, floor: Tracer) -> tuple[Tracer, Tracer]:
    """Rotate the rows of ``w`` (``A^T``: ``n`` rows of length ``m``, ``n <= m``) until
    they are pairwise orthogonal; returns them and ``V^T`` (the rotations, as rows).
    Rows whose squared norm is at most ``floor`` are rounding noise of the others (a
    rank-deficient matrix): they are left alone, as dgesvj leaves them, since rotating
    them only shrinks them towards underflow, where their angles are noise too."""
    n = lax.dim_value(w.aval.shape[0])

    def step(p: Any, q: Any, state: Any) -> Any:
        w, vt, worst = state
        wp, wq = w[p], w[q]
        alpha, beta, gamma = sum_(wp * wp), sum_(wq * wq), sum_(wp * wq)
        scale = _u(np.sqrt, alpha) * _u(np.sqrt, beta)
        relevant = _u(np.minimum, alpha, beta) > floor
        measure = where(relevant, _u(np.absolute, gamma) / where(relevant, scale, 1), 0)
        rotate = measure > tol
        zeta = (beta - alpha) / (2 * where(rotate, gamma, 1))
        t = _u(np.copysign, 1, zeta) / (_u(np.absolute, zeta)
                                         + _u(np.sqrt, 1 + zeta * zeta))
        t = where(rotate, t, 0)
        c = 1 / _u(np.sqrt, 1 + t * t)
        s = c * t
        return (rotate_rows(w, p, q, c, s), rotate_rows(vt, p, q, c, s),
                _u(np.maximum, worst, measure))

    def sweep(state: Any) -> Any:
        w, vt, _, sweeps = state
        w, vt, worst = each_pair(n, step, (w, vt, np.asarray(0, w.dtype)[()]))
        return w, vt, worst, sweeps + 1

    def going(state: Any) -> Any:
        return _u(np.logical_and, state[2] > tol, state[3] < MAX_SWEEPS)

    start = (w, eye(n, dtype=w.dtype), np.asarray(np.inf, w.dtype)[()], np.int64(0))
    w, vt, worst, _ = lax.while_loop(going, sweep, start)
    # Past the sweeps, rounding alone keeps a pair above tol: accept what is orthogonal
    # to half the digits, as a converged Jacobi SVD of such a matrix would be.
    raise_if(worst > float(np.sqrt(np.finfo(w.dtype).eps)),
             "LinAlgError: SVD did not converge", LINALG_ERROR)
    return w, vt


def _complete(unit: Tracer, rank: Tracer, rows: DimExpr) -> Tracer:
    """``unit`` (orthonormal rows, then zero rows from ``rank`` on) with zero rows
    appended up to ``rows``, every zero row replaced by a unit vector orthogonal to the
    rows before it."""
    count, m = unit.aval.shape
    if rows != count:
        unit = concatenate([unit, full_from_dims((rows - count, m), 0, unit.dtype)], axis=0)
    columns = iota(I64, (m,), 0)

    def fill(j: Any, ur: Any) -> Any:
        least = argmin(sum_(ur * ur, axis=0))  # the coordinate the rows cover least
        v = lax.convert(columns == least, ur.dtype) - matmul(ur[:, least], ur)
        v = v - matmul(matmul(ur, v), ur)
        ur[j] = v / _u(np.sqrt, sum_(v * v))
        return ur

    return cast(Tracer, lax.fori_loop(rank, lax.dim_value(rows), fill, unit))


def _tall(a: Tracer, full: bool, vectors: bool) -> tuple[Tracer | None, Tracer, Tracer | None]:
    """``(U, s, V^T)`` of an ``m x n`` matrix with ``m >= n`` at run time."""
    m, n = a.aval.shape
    eps = float(np.finfo(a.dtype).eps)
    tol = lax.convert(lax.dim_value(m), a.dtype) * eps
    big = _largest(_u(np.absolute, a).ravel())
    scale = where(big > 0, big, 1)
    w = _transpose(a / scale) + 0  # a copy: the rotations write its rows
    floor = sum_(w * w) * (eps * eps)
    w, vt = _jacobi(w, tol, floor)
    norms = _u(np.sqrt, sum_(w * w, axis=1))
    order = argsort(-norms, kind="stable")
    s = norms[order]
    if not vectors:
        return None, s * scale, None
    positive = s * s > floor
    unit = where(positive[:, None], w[order] / where(positive, s, 1)[:, None], 0)
    rank = count_nonzero(positive)
    u_rows = _complete(unit, rank, m if full else n)
    return _transpose(u_rows), s * scale, vt[order]


def _svd2(a: Tracer, full: bool, vectors: bool) -> tuple[Any, Tracer, Any]:
    """``(U, s, V^T)`` of a matrix (``U`` and ``V^T`` None without ``vectors``): Jacobi's
    for a small or complex one, NumPy's LAPACK loop otherwise (:mod:`.lapack`)."""
    m, n = a.aval.shape
    k, order = minimum(m, n), maximum(m, n)
    if not vectors:
        s = by_order(a, lambda: _jacobi_svd(a, full, False)[1], lambda: call_loop(
            "svd", "d->d", [a], [(k,)], error=NO_SVD, cast=a.dtype)[0], order)
        return None, s, None
    shapes = [(m, m), (k,), (n, n)] if full else [(m, k), (k,), (k, n)]
    u, s, vh = by_order(a, lambda: _jacobi_svd(a, full, True), lambda: tuple(call_loop(
        "svd_f" if full else "svd_s", "d->ddd", [a], shapes, error=NO_SVD, cast=a.dtype)),
        order)
    return u, s, vh


def _jacobi_svd(a: Tracer, full: bool, vectors: bool) -> tuple[Any, Tracer, Any]:
    """``(U, s, V^T)`` of a matrix, tall or wide: a wide one is factored as its transpose,
    chosen at run time when the shape leaves it open (only the transposes are in the
    branches, so the factorization is emitted once)."""
    m, n = a.aval.shape
    k, big = minimum(m, n), maximum(m, n)
    gap = m - n
    if m == n or (gap.is_const and gap.value >= 0):
        return _tall(a, full, vectors)
    if gap.is_const:
        u, s, vh = _tall(_transpose(a), full, vectors)
        if u is None or vh is None:
            return None, s, None
        return _transpose(vh), s, _transpose(u)
    tall = lax.dim_value(m) >= lax.dim_value(n)
    w = lax.cond(tall, lambda x: lax.refine_shape(x, (big, k)),
                 lambda x: lax.refine_shape(_transpose(x), (big, k)), a)
    u, s, vh = _tall(w, full, vectors)
    if not vectors:
        return None, s, None
    assert u is not None and vh is not None
    u_shape, vh_shape = ((m, m), (n, n)) if full else ((m, k), (k, n))

    def as_tall(u: Tracer, vh: Tracer) -> tuple[Tracer, Tracer]:
        return lax.refine_shape(u, u_shape), lax.refine_shape(vh, vh_shape)

    def as_wide(u: Tracer, vh: Tracer) -> tuple[Tracer, Tracer]:
        return (lax.refine_shape(_transpose(vh), u_shape),
                lax.refine_shape(_transpose(u), vh_shape))

    u, vh = lax.cond(tall, as_tall, as_wide, u, vh)
    return u, s, vh


def _transpose(x: Tracer) -> Tracer:
    return lax.transpose(x, (1, 0))


def _matrix(a: Any, name: str, stacks: bool = False) -> Tracer:
    x = as_tracer(a)
    if x.ndim < 2 or (x.ndim > 2 and not stacks):
        raise current().error(f"{name}: only 2-D matrices are supported (stacks are not "
                              "yet)" if x.ndim > 2 else
                              f"{x.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")
    x = lax.convert(x, _result_dtype(x))
    raise_if(_u(np.logical_not, _u(np.isfinite, x)), "LinAlgError: SVD did not converge",
             LINALG_ERROR)
    return x


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    x = _matrix(a, "np.linalg.svd", stacks=True)
    full, vectors = bool(full_matrices), bool(compute_uv)
    if x.ndim > 2:
        results = _stacked(x, full, vectors)
        return tuple(results) if vectors else results[0]
    u, s, vh = _svd2(x, full, vectors)
    return (u, s, vh) if vectors else s


def _stacked(x: Tracer, full: bool, vectors: bool) -> list[Tracer]:
    """The SVD of every matrix of a stack ``(..., m, n)``."""
    m, n = x.aval.shape[-2:]
    k = minimum(m, n)
    cores = [(m, m) if full else (m, k), (k,), (n, n) if full else (k, n)] if vectors \
        else [(k,)]

    def one(matrix: Tracer) -> tuple[Tracer, ...]:
        u, s, vh = _svd2(matrix, full, vectors)
        return (u, s, vh) if vectors else (s,)

    return per_matrix(x, [], one, [(core, x.dtype) for core in cores])


def singular_values(x: Tracer) -> Tracer:
    """The singular values of a float matrix, descending."""
    return _svd2(x, False, False)[1]


def _largest(s: Tracer) -> Tracer:
    """The largest of the non-negative ``s`` (singular values), 0 when it is empty."""
    return max_(concatenate([s, full_from_dims((DimExpr.const(1),), 0, s.dtype)]))


def _default_rtol(x: Tracer) -> Tracer:
    """``max(m, n) * eps``, NumPy's cut on singular values relative to the largest."""
    m, n = x.aval.shape
    return cast(Tracer, lax.convert(lax.dim_value(maximum(m, n)), x.dtype)
                * float(np.finfo(x.dtype).eps))


def _inverted(s: Tracer, cutoff: Tracer) -> Tracer:
    """``1 / s`` where ``s > cutoff``, else 0 (NumPy's pinv and LAPACK's gelsd)."""
    large = s > cutoff
    return where(large, 1 / where(large, s, 1), 0)


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tracer:
    x = _matrix(a, "np.linalg.pinv")
    _m, _n = x.aval.shape
    if rcond is None:
        rcond = 1e-15 if rtol is None else rtol
    u, s, vh = _svd2(x, False, True)
    cutoff = as_tracer(rcond) * _largest(s)
    return matmul(_transpose(vh), _inverted(s, cutoff)[:, None]
                  * _transpose(u))


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Tracer, Tracer, Tracer, Tracer]:
    ctx = current()
    x, rhs = as_tracer(a), as_tracer(b)
    vector = rhs.ndim == 1
    if vector:
        rhs = rhs[:, None]
    if x.ndim != 2 or rhs.ndim != 2:
        raise ctx.error(f"{max(x.ndim, rhs.ndim)}-dimensional array given. Array must be "
                        "two-dimensional")
    dtype = _result_dtype(x, rhs)
    x, rhs = _matrix(lax.convert(x, dtype), "np.linalg.lstsq"), lax.convert(rhs, dtype)
    m, n = x.aval.shape
    if rhs.aval.shape[0] != m:
        ctx.check("==", rhs.aval.shape[0], m, LINALG_ERROR,
                  "LinAlgError: Incompatible dimensions")
        rhs = lax.refine_shape(rhs, (m,) + rhs.aval.shape[1:])
    cut = _default_rtol(x) if rcond is None else as_tracer(rcond)
    k = rhs.aval.shape[1]

    def small() -> tuple[Tracer, Tracer, Tracer, Tracer]:
        u, s, vh = _jacobi_svd(x, False, True)
        inverse = _inverted(s, cut * _largest(s))
        solution = matmul(_transpose(vh), inverse[:, None] * matmul(_transpose(u), rhs))
        rank = lax.convert(count_nonzero(inverse != 0), np.dtype(np.int32))
        error = rhs - matmul(x, solution)
        return solution, sum_(error * error, axis=0), rank, s

    def lapack() -> tuple[Tracer, Tracer, Tracer, Tracer]:  # gelsd, as NumPy's lstsq
        solution, squares, rank, s = call_loop(
            "lstsq", "ddd->ddid", [x, rhs, cut], [(n, k), (k,), (), (minimum(m, n),)],
            error=NO_LSTSQ, cast=dtype)
        solution = where(lax.dim_value(m) == 0, 0, solution)  # NumPy's, for m == 0
        return solution, squares, rank, s

    def lapack_without_columns() -> tuple[Tracer, Tracer, Tracer, Tracer]:
        # LAPACK takes no right-hand side without columns: NumPy gives it one column of
        # zeros, and keeps only the rank and the singular values
        one = DimExpr.const(1)
        _, _, rank, s = call_loop(
            "lstsq", "ddd->ddid", [x, full_from_dims((m, one), 0, dtype), cut],
            [(n, one), (one,), (), (minimum(m, n),)], error=NO_LSTSQ, cast=dtype)
        return full_from_dims((n, k), 0, dtype), full_from_dims((k,), 0, dtype), rank, s

    # LAPACK for large matrices, or any at the top level (.lapack.by_order)
    big = maximum(m, n) if current().parent is not None else DimExpr.const(SMALL + 1)
    no_columns = k.is_const and k.value == 0
    if dtype.kind == "c" or (big.is_const and big.value <= SMALL) or (
            no_columns and not big.is_const):
        solution, squares, rank, s = small()
    elif big.is_const:  # LAPACK whatever the columns: no Jacobi code beside it
        solution, squares, rank, s = (
            (lapack_without_columns() if no_columns else lapack()) if k.is_const else
            lax.cond(lax.dim_value(k) > 0, lapack, lapack_without_columns))
    else:
        solution, squares, rank, s = lax.cond(
            _u(np.logical_and, lax.dim_value(big) > SMALL, lax.dim_value(k) > 0),
            lapack, small)
    full_rank = _u(np.logical_and, rank == lax.dim_value(n),
                   lax.dim_value(m) > lax.dim_value(n))
    residuals = squares[lax.broadcast_to(full_rank, squares.aval.shape)]
    result = solution[:, 0] if vector else solution
    return result, residuals, rank, s


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *,
                rtol: Any = None) -> Tracer:
    x = as_tracer(A)
    if x.ndim < 2:  # NumPy's: 1 unless every element is zero
        return lax.convert(count_nonzero(x) > 0, I64)
    x = _matrix(x, "np.linalg.matrix_rank")
    s = singular_values(x)
    if tol is None:
        tol = _largest(s) * (_default_rtol(x) if rtol is None else rtol)
    return count_nonzero(s > tol)


def cond(x: Any, p: Any = None) -> Tracer:
    a = _matrix(x, "np.linalg.cond")
    m, n = a.aval.shape
    raise_if(lax.dim_value(m * n) == 0, "LinAlgError: cond is not defined on empty arrays",
             LINALG_ERROR)
    if p is None or p in (2, -2):
        s = singular_values(a)
        large, small = max_(s), min_(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = large / small if p != -2 else small / large
    else:
        ratio = matrix_norm(a, p) * matrix_norm(inv(a), p)
    # NumPy's: a NaN from a matrix without NaNs (0 / 0 of a zero matrix) is infinite
    unbounded = apply_ufunc(np.logical_and, apply_ufunc(np.isnan, ratio),
                            apply_ufunc(np.logical_not, any_(apply_ufunc(np.isnan, a))))
    return where(unbounded, np.inf, ratio)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tracer:
    """np.linalg.norm: the matrix norms of a 2-D array (``axis=None`` or a pair of axes,
    and an ``ord`` other than the Frobenius norm) here, the rest in :func:`.linalg.norm`."""
    a = as_tracer(x)
    pair = isinstance(axis, tuple) and len(axis) == 2
    if ord in (None, "fro") or not (pair or (axis is None and a.ndim == 2)):
        return linalg.norm(a, ord, axis, keepdims)
    if a.ndim != 2:
        raise current().error("np.linalg.norm: matrix norms of stacks are not supported yet")
    if pair and tuple(ax % 2 for ax in axis) == (1, 0):
        a = lax.transpose(a, (1, 0))
    return matrix_norm(a, ord, keepdims)


def matrix_norm(a: Tracer, ord: Any, keepdims: bool = False) -> Tracer:
    """NumPy's matrix norms of a 2-D array: ``'fro'``, ``'nuc'``, ``±1``, ``±2``,
    ``±inf``."""
    if a.dtype.kind in "biu":
        a = lax.convert(a, np.dtype(np.float64))
    if ord in (2, -2, "nuc"):
        s = singular_values(_matrix(a, "np.linalg.norm"))
        value = {2: _largest, -2: min_, "nuc": sum_}[ord](s)  # (NumPy's: 0 when empty
    elif ord in (1, -1, np.inf, -np.inf):                   # but for the minima)
        axis = 0 if ord in (1, -1) else 1
        sums = sum_(_u(np.absolute, a), axis=axis)
        value = (_largest if ord > 0 else min_)(sums)
    elif ord in (None, "fro"):
        value = linalg.norm(a)
    else:
        raise current().error(f"Invalid norm order {ord!r} for matrices.")
    return value[None, None] if keepdims else value


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.linalg.svd: svd, np.linalg.pinv: pinv, np.linalg.lstsq: lstsq,
    np.linalg.matrix_rank: matrix_rank, np.linalg.cond: cond, np.linalg.norm: norm,
}
