"""np.linalg on matrices above aotc.numpy_api.lapack.SMALL runs NumPy's own LAPACK loops,
as numpy.linalg calls them: results equal NumPy's bit for bit, and LinAlgError comes
exactly where NumPy raises it, with its message (a singular matrix holding NaN, a
matrix that is not positive definite, eigenvalues that do not converge). One matrix at
a kernel's top level always takes LAPACK; in a loop the order, a runtime size, picks aotc's
own loops for small matrices and LAPACK for the others. Compiled in-process with
``aotc.jit``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import aotc
from aotc import f32, f64
from aotc.numpy_api.lapack import SMALL


@aotc.export
def factor(a: f64[:, :], b: f64[:, :], v: f64[:]) -> tuple:
    sign, logdet = np.linalg.slogdet(a)
    w, u = np.linalg.eigh(a, UPLO="U")
    return (np.linalg.solve(a, b), np.linalg.solve(a, v), np.linalg.inv(a),
            np.linalg.det(a), sign, logdet, np.linalg.eigvalsh(a), w, u)


@aotc.export
def positive(a: f64[:, :]) -> tuple:
    return np.linalg.cholesky(a), np.linalg.cholesky(a, upper=True)


@aotc.export
def stacked(a: f32[:, :, :], b: f32[:, :, :]) -> tuple:
    return np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.det(a), np.linalg.eigvalsh(a)


@aotc.export
def decomposed(a: f64[:, :], b: f64[:, :], v: f64[:]) -> tuple:
    """The SVD and what NumPy builds on it (through the same LAPACK calls)."""
    u, s, vh = np.linalg.svd(a)
    u2, s2, vh2 = np.linalg.svd(a, full_matrices=False)
    x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    x1, residuals1, _, _ = np.linalg.lstsq(a, v, rcond=1e-3)
    return (u, s, vh, u2, s2, vh2, np.linalg.svd(a, compute_uv=False), x, residuals, rank,
            sv, x1, residuals1, np.linalg.pinv(a), np.linalg.matrix_rank(a),
            np.linalg.norm(a, 2), np.linalg.cond(a))


JITTED = {fn: aotc.jit(fn) for fn in (factor, positive, stacked, decomposed)}


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        with np.errstate(all="ignore"):
            result = fn(*args)
    except ValueError as err:  # LinAlgError among them
        return type(err).__name__, str(err)
    return [np.asarray(r) for r in result]


def _same(got: Any, want: Any, close: tuple[int, ...] = ()) -> None:
    """Bit for bit, but results ``close`` (a matrix product of LAPACK's results, summed
    in another order than NumPy's BLAS sums it: within 1e-14 of their scale)."""
    if isinstance(want, tuple):
        assert got == want
        return
    assert not isinstance(got, tuple), got
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype and g.shape == w.shape, k
        if k in close and w.size:
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-14 * np.abs(w).max(),
                                       err_msg=str(k))
        else:
            np.testing.assert_array_equal(g, w, err_msg=str(k))


@pytest.mark.parametrize("n", [1, 3, SMALL + 1, 40, 130])
@pytest.mark.parametrize("magnitude", [1e-300, 1.0, 1e300])
def test_large_matrices_match_lapack_bit_for_bit(n: int, magnitude: float) -> None:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) * magnitude
    a = a + a.T  # symmetric: eigh reads one triangle, the others the whole
    b, v = rng.standard_normal((n, 3)), rng.standard_normal(n)
    _same(_outcome(JITTED[factor], a, b, v), _outcome(factor, a, b, v))
    spd = rng.standard_normal((n, n))
    spd = spd @ spd.T + n * np.eye(n)
    _same(_outcome(JITTED[positive], spd), _outcome(positive, spd))


@pytest.mark.parametrize("shape", [(3, 2), (30, 20), (20, 30), (200, 8), (8, 200), (0, 20),
                                   (40, 40)])
def test_svd_and_least_squares_match_lapack_bit_for_bit(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape)
    b, v = rng.standard_normal((shape[0], 2)), rng.standard_normal(shape[0])
    pinv = (13,)
    _same(_outcome(JITTED[decomposed], a, b, v), _outcome(decomposed, a, b, v), pinv)
    a[:, 0] = a[:, 1]  # rank-deficient: no residuals, rank one less
    _same(_outcome(JITTED[decomposed], a, b, v), _outcome(decomposed, a, b, v), pinv)
    if a.size:
        a[0, 0] = np.nan  # LinAlgError("SVD did not converge")
    _same(_outcome(JITTED[decomposed], a, b, v), _outcome(decomposed, a, b, v), pinv)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (0, 3)])
def test_least_squares_of_no_columns_is_numpys(shape: tuple[int, int]) -> None:
    """A right-hand side with no columns: NumPy gives LAPACK a column of zeros and keeps
    the rank and the singular values; so does the compiled kernel, bit for bit."""
    a = np.random.default_rng(shape[0]).standard_normal(shape)
    b, v = np.empty((shape[0], 0)), np.ones(shape[0])
    _same(_outcome(JITTED[decomposed], a, b, v), _outcome(decomposed, a, b, v), (13,))


@aotc.export
def in_a_loop(a: f64[:, :, :], b: f64[:, :]) -> tuple[f64[:, :], f64[:], f64[:, :]]:
    """Small matrices in a loop keep aotc's own code; large ones call LAPACK each time."""
    x, d, w = np.empty_like(b), np.empty(a.shape[0]), np.empty_like(b)
    for i in range(a.shape[0]):
        x[i] = np.linalg.solve(a[i], b[i])
        d[i] = np.linalg.det(a[i])
        w[i] = np.linalg.eigvalsh(a[i])
    return x, d, w


JITTED[in_a_loop] = aotc.jit(in_a_loop)


@pytest.mark.parametrize("n", [1, 4, SMALL, SMALL + 1, 50])
def test_small_and_large_orders_in_a_loop(n: int) -> None:
    # aotc's loops round differently from LAPACK's: within 1e-12 of the result's scale
    # (measured below 1e-14 here); LAPACK's calls match exactly
    rng = np.random.default_rng(n)
    a = rng.standard_normal((3, n, n)) + n * np.eye(n)
    a = a + a.transpose(0, 2, 1)
    b = rng.standard_normal((3, n))
    for g, w in zip(JITTED[in_a_loop](a, b), in_a_loop(a, b), strict=True):
        if n > SMALL:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-12 * np.abs(w).max())


def test_stacks_of_float32_matrices() -> None:
    # NumPy computes in double precision and casts: so do the loops called here
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 20, 20)).astype(np.float32)
    b = rng.standard_normal((3, 20, 2)).astype(np.float32)
    for x, y in ((a, b), (a[:, ::-1, :], b[::-1]), (a[:0], b[:0])):
        _same(_outcome(JITTED[stacked], x, y), _outcome(stacked, x, y))


@pytest.mark.parametrize("case", ["zero", "nan_singular", "nan", "inf_diagonal", "rank_one"])
def test_failures_raise_where_numpy_raises(case: str) -> None:
    n = 3
    a = {"zero": np.zeros((n, n)),
         "nan_singular": np.diag([np.nan] + [0.0] * (n - 1)),
         "nan": np.full((n, n), np.nan),
         "inf_diagonal": np.diag([np.inf] + [1.0] * (n - 1)),
         "rank_one": np.outer(np.arange(1.0, n + 1), np.arange(1.0, n + 1))}[case]
    b, v = np.ones((n, 1)), np.ones(n)
    _same(_outcome(JITTED[factor], a, b, v), _outcome(factor, a, b, v))
    _same(_outcome(JITTED[positive], a), _outcome(positive, a))
