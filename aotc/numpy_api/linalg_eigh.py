"""``np.linalg.eigh`` and ``eigvalsh``: the cyclic Jacobi eigenvalue algorithm for small
matrices, NumPy's own LAPACK above (:mod:`.lapack`).

NumPy calls LAPACK's ``syevd`` (tridiagonalization, then divide and conquer); so do
kernels on real matrices, but those of order up to :data:`.lapack.SMALL` in a loop or a
stack (:mod:`.lapack`). Jacobi
reaches the same eigenvalues through plane rotations alone, each zeroing one
off-diagonal pair ``(p, q)`` of the symmetric matrix and accumulated into the
eigenvectors, sweeping over every pair until the off-diagonal part is zero. It is a short
program of nested ``fori_loop``s on rows (each rotation rewrites rows and columns ``p``
and ``q``), and it is accurate to high relative precision. The test for an element too
small to rotate is Numerical Recipes' (``|a_pq|`` below the last digit of both diagonal
elements, from the fourth sweep on, is set to zero); the sweeps stop when every
off-diagonal element is zero.

As NumPy, only the triangle ``UPLO`` names is read (the matrix is taken symmetric), the
eigenvalues come in ascending order, a non-finite matrix gives NaN eigenvalues and
vectors, and the eigenvectors are the columns of ``v``, each unique up to sign (and to
rotations within a repeated eigenvalue): they match NumPy's up to those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.reduce import REDUCTIONS
from ..tracing.tracer import Tracer, current
from .creation import eye, iota
from .functions_base import where
from .histograms import raise_if
from .lapack import by_order
from .linalg_solve import _result_dtype, per_matrix, square
from .linalg_svd import each_pair, rotate_rows
from .loops import LINALG_ERROR, call_loop
from .reductions import all_, sum_
from .sorting import argsort
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
#: Sweeps before the eigenvalues are declared not converged (Numerical Recipes' 50).
MAX_SWEEPS = 50
#: Sweeps before elements below the diagonal's last digit are dropped (Numerical Recipes').
EXACT_SWEEPS = 4


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _rotation(sweeps: Tracer) -> Callable[[Any, Any, Any], Any]:
    """The rotation that zeroes ``a[p, q]``, for :func:`.linalg_svd.each_pair`."""
    def step(p: Any, q: Any, state: Any) -> Any:
        a, vt = state
        apq, app, aqq = a[p, q], a[p, p], a[q, q]
        g = 100 * _u(np.absolute, apq)
        negligible = _u(np.logical_and, sweeps >= EXACT_SWEEPS, _u(
            np.logical_and, _u(np.absolute, app) + g == _u(np.absolute, app),
            _u(np.absolute, aqq) + g == _u(np.absolute, aqq)))
        rotate = _u(np.logical_and, _u(np.logical_not, negligible), apq != 0)
        theta = (aqq - app) / (2 * where(rotate, apq, 1))
        t = 1 / (_u(np.absolute, theta) + _u(np.sqrt, 1 + theta * theta))
        t = where(rotate, _u(np.copysign, t, theta), 0)  # theta**2 overflowing: t = 0
        c = 1 / _u(np.sqrt, 1 + t * t)
        s = t * c
        rp, rq = a[p], a[q]
        new_p, new_q = c * rp - s * rq, s * rp + c * rq
        new_p[p], new_p[q] = app - t * apq, 0
        new_q[q], new_q[p] = aqq + t * apq, 0
        a[p], a[q] = new_p, new_q
        a[:, p], a[:, q] = new_p, new_q
        return a, rotate_rows(vt, p, q, c, s)
    return step


def _jacobi(a: Tracer) -> tuple[Tracer, Tracer]:
    """Eigenvalues (unsorted) and eigenvectors (as rows) of a symmetric matrix."""
    n = lax.dim_value(a.aval.shape[0])
    off_diagonal = iota(I64, a.aval.shape, 0) != iota(I64, a.aval.shape, 1)

    def sweep(state: Any) -> Any:
        a, vt, sweeps = state
        a, vt = each_pair(n, _rotation(sweeps), (a, vt))
        return a, vt, sweeps + 1

    def going(state: Any) -> Any:
        return _u(np.logical_and, _u(np.logical_not, all_(where(off_diagonal, state[0], 0)
                                                              == 0)),
                  state[2] < MAX_SWEEPS)

    a, vt, _ = lax.while_loop(going, sweep, (a, eye(n, dtype=a.dtype), np.int64(0)))
    raise_if(_u(np.logical_not, all_(where(off_diagonal, a, 0) == 0)),
             "LinAlgError: Eigenvalues did not converge", LINALG_ERROR)
    return sum_(where(off_diagonal, 0, a), axis=1), vt


def _eigh_one(a: Tracer, vectors: bool, lower: bool) -> tuple[Tracer, ...]:
    """The eigenvalues of one matrix, and with ``vectors`` its eigenvectors (columns)."""
    rows, cols = iota(I64, a.aval.shape, 0), iota(I64, a.aval.shape, 1)
    kept = rows >= cols if lower else rows <= cols
    symmetric = where(kept, a, lax.transpose(a, (1, 0)))
    finite = all_(_u(np.isfinite, symmetric))
    # (a reduction with -inf for 0x0, which NumPy answers with empty results)
    big = lax.reduce(REDUCTIONS["reduce_max"], _u(np.absolute, where(finite, symmetric, 0)),
                     (0, 1))
    scale = where(big > 0, big, 1)
    values, vt = _jacobi(where(finite, symmetric, 0) / scale)
    order = argsort(values, kind="stable")
    nan = np.asarray(np.nan, a.dtype)[()]
    values = where(finite, values[order] * scale, nan)
    if not vectors:
        return (values,)
    return values, where(finite, lax.transpose(vt[order], (1, 0)), nan)


def _eigh(a: Any, UPLO: str, vectors: bool) -> Any:
    if UPLO not in ("L", "U"):
        raise current().error("UPLO argument must be 'L' or 'U'")
    x = square(a)
    x = lax.convert(x, _result_dtype(x))
    n = x.aval.shape[-1]
    lower = UPLO == "L"
    cores = [((n,), x.dtype), ((n, n), x.dtype)][:2 if vectors else 1]
    batch = x.aval.shape[:-2]

    def small() -> tuple[Tracer, ...]:
        return tuple(per_matrix(x, [], lambda m: _eigh_one(m, vectors, lower), cores))

    def lapack() -> tuple[Tracer, ...]:
        name = ("eigh_" if vectors else "eigvalsh_") + ("lo" if lower else "up")
        return tuple(call_loop(name, "d->dd" if vectors else "d->d", [x],
                               [batch + core for core, _ in cores],
                               error="Eigenvalues did not converge", cast=x.dtype))

    results = by_order(x, small, lapack)
    return tuple(results) if vectors else results[0]


def eigh(a: Any, UPLO: str = "L") -> tuple[Tracer, Tracer]:
    return cast(tuple[Tracer, Tracer], _eigh(a, UPLO, True))


def eigvalsh(a: Any, UPLO: str = "L") -> Tracer:
    return cast(Tracer, _eigh(a, UPLO, False))


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.linalg.eigh: eigh, np.linalg.eigvalsh: eigvalsh,
}
