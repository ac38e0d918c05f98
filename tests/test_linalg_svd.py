"""np.linalg.svd, pinv, lstsq, matrix_rank, cond, the matrix norms, eigh, eigvalsh and
slogdet against NumPy (LAPACK), compiled in-process with ``aotc.jit``.

Tolerances: Jacobi and LAPACK's algorithms are both backward stable, so singular values
and eigenvalues differ by about ``n * eps * |A|`` (below ``1e-14 |A|`` for these sizes):
asserted within ``1e-12 |A|``. Singular vectors and eigenvectors are unique only up to
sign, so they are checked by what defines them (``U diag(s) V^T = A``, orthonormal
columns, ``A v = w v``) and against NumPy's through ``|u . u_numpy| = 1`` for the
well-separated values of random matrices (gaps above 1e-3, so within ``eps / gap``:
asserted to 1e-9). pinv and lstsq of full-rank matrices with condition numbers below 1e3
agree to ``1e3 * eps`` relative: asserted to 1e-10. float32 results are asserted to
``1e-4 |A|`` (``n * eps32``)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import c64, c128, f32, f64, i64
from aotc.interpret import eval_program
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations


@aotc.export
def factors(a: f64[:, :]) -> tuple[f64[:, :], f64[:], f64[:, :], f64[:, :], f64[:, :]]:
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    uf, _, vhf = np.linalg.svd(a)
    return u, s, vh, uf, vhf


@aotc.export
def least_squares(a: f64[:, :], b: f64[:]) -> tuple[f64[:], f64[:], i64, f64[:]]:
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return x, residuals, np.int64(rank), s


def solves(a: f64[:, :], b: f64[:]) -> tuple[f64[:, :], i64, f64, f64, f64, f64, f64, f64,
                                              f64[:]]:
    return (np.linalg.pinv(a), np.linalg.matrix_rank(a), np.linalg.cond(a),
            np.linalg.norm(a, 2), np.linalg.norm(a, "nuc"), np.linalg.norm(a, 1),
            np.linalg.norm(a, -np.inf), np.linalg.norm(a, -2, (1, 0)),
            np.linalg.svd(a, compute_uv=False))


@aotc.export
def spectra(a: f64[:, :]) -> tuple[f64[:], f64[:, :], f64, f64]:
    w, v = np.linalg.eigh(a)
    sign, logdet = np.linalg.slogdet(a)
    return w, v, sign, logdet


def spectra32(a: f64[:, :], b: f32[:, :, :]) -> tuple[f64[:], f32[:, :], f32[:, :, :], f32[:]]:
    w32, v32 = np.linalg.eigh(b, UPLO="U")
    return np.linalg.eigvalsh(a), w32, v32, np.linalg.svd(b[0], compute_uv=False)


def _interpreted(fn):
    """``fn`` traced and run by the IR interpreter: the wrappers around the SVD and
    eigh, whose loops the compiled kernels above already run through LLVM."""
    program = trace_kernel(fn, signature_from_annotations(fn)).program
    return lambda *args: eval_program(program, *args)


@pytest.fixture(scope="module")
def jitted():
    return (aotc.jit(factors), aotc.jit(least_squares), aotc.jit(spectra),
            _interpreted(solves), _interpreted(spectra32))


def _matrices(shape: tuple[int, int], seed: int) -> list[np.ndarray]:
    """Random, zero, rank-one and graded matrices of ``shape``."""
    rng = np.random.default_rng(seed)
    m, n = shape
    return [rng.standard_normal(shape), np.zeros(shape),
            np.outer(np.arange(1.0, m + 1), np.ones(n)),
            rng.standard_normal(shape) * np.logspace(0, -8, n), rng.standard_normal(shape) * 1e200]


def _orthonormal_columns(q: np.ndarray) -> None:
    np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (1, 1), (6, 1), (1, 4), (12, 9)])
def test_svd_matches_lapack(jitted, shape) -> None:
    for a in _matrices(shape, sum(shape)):
        scale = max(np.abs(a).max(), 1e-300)
        u, s, vh, uf, vhf = jitted[0](a)
        want = np.linalg.svd(a, compute_uv=False)
        k = min(shape)
        assert u.shape == (shape[0], k) and vh.shape == (k, shape[1]) and s.shape == (k,)
        assert uf.shape == (shape[0],) * 2 and vhf.shape == (shape[1],) * 2
        np.testing.assert_allclose(s, want, rtol=0, atol=1e-12 * scale)
        assert np.all(np.diff(s) <= 0)
        np.testing.assert_allclose((u * s) @ vh, a, rtol=0, atol=1e-12 * scale)
        for q in (u, vh.T, uf, vhf.T):
            _orthonormal_columns(q)
        if a is not None and np.all(np.diff(want) < -1e-3 * scale):  # distinct values
            un = np.linalg.svd(a)[0]
            np.testing.assert_allclose(np.abs(np.sum(u * un[:, :k], axis=0)), 1, atol=1e-9)


def test_svd_errors(jitted) -> None:
    for bad in (np.nan, np.inf):
        with pytest.raises(np.linalg.LinAlgError, match="^SVD did not converge$"):
            jitted[0](np.array([[1.0, bad], [0.0, 1.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        np.linalg.svd(np.array([[1.0, np.nan], [0.0, 1.0]]))


@pytest.mark.parametrize("shape", [(6, 3), (3, 6), (4, 4), (5, 1)])
def test_least_squares_and_norms(jitted, shape) -> None:
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    for a in (rng.standard_normal(shape), np.outer(np.arange(1.0, shape[0] + 1),
                                                  np.ones(shape[1]))):
        b = rng.standard_normal(shape[0])
        x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
        got = [*jitted[1](a, b), *jitted[3](a, b)]
        want = [x, residuals, rank, s, np.linalg.pinv(a), np.linalg.matrix_rank(a),
                np.linalg.cond(a), np.linalg.norm(a, 2), np.linalg.norm(a, "nuc"),
                np.linalg.norm(a, 1), np.linalg.norm(a, -np.inf),
                np.linalg.norm(a, -2, (1, 0)), np.linalg.svd(a, compute_uv=False)]
        singular = rank < min(shape)
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape, k
            if k == 6 and singular:  # cond of a singular matrix: 1/rounding noise or inf
                assert g > 1e15 and w > 1e15
            elif k == 11 and singular:  # the smallest singular value: rounding noise
                assert abs(g) < 1e-14 * np.abs(a).max()
            else:
                np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=str(k))


def test_lstsq_errors(jitted) -> None:
    with pytest.raises(np.linalg.LinAlgError, match="^Incompatible dimensions$"):
        jitted[1](np.ones((3, 2)), np.ones(4))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16])
def test_eigh_and_slogdet(jitted, n) -> None:
    rng = np.random.default_rng(n)
    stack = rng.standard_normal((2, n, n)).astype(np.float32)
    for a in (rng.standard_normal((n, n)), np.ones((n, n)), np.zeros((n, n)),
              np.diag(np.arange(n, 0, -1.0)), rng.standard_normal((n, n)) * 1e200):
        scale = max(np.abs(a).max(), 1e-300)
        w, v, sign, logdet = jitted[2](a)
        wn = np.linalg.eigvalsh(a)
        symmetric = np.tril(a) + np.tril(a, -1).T
        np.testing.assert_allclose(w, wn, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(symmetric @ v, v * w, rtol=0, atol=1e-12 * scale)
        _orthonormal_columns(v)
        if np.all(np.diff(wn) > 1e-3 * scale):
            vn = np.linalg.eigh(a)[1]
            np.testing.assert_allclose(np.abs(np.sum(v * vn, axis=0)), 1, atol=1e-9)
        want_sign, want_log = np.linalg.slogdet(a)
        assert sign == want_sign
        np.testing.assert_allclose(logdet, want_log, rtol=1e-12)
    values, w32, v32, s32 = jitted[4](a, stack)
    np.testing.assert_allclose(values, np.linalg.eigvalsh(a), rtol=0, atol=1e-12 * scale)
    assert w32.dtype == v32.dtype == s32.dtype == np.float32
    np.testing.assert_allclose(w32, np.linalg.eigvalsh(stack, UPLO="U"), rtol=0, atol=1e-4)
    np.testing.assert_allclose(np.abs(v32), np.abs(np.linalg.eigh(stack, UPLO="U")[1]),
                               rtol=0, atol=1e-3)
    np.testing.assert_allclose(s32, np.linalg.svd(stack[0], compute_uv=False), rtol=0,
                               atol=1e-4)


def test_eigh_non_finite_is_nan(jitted) -> None:
    a = np.array([[1.0, np.nan], [np.nan, 2.0]])
    w, v = jitted[2](a)[:2]
    want_w, want_v = np.linalg.eigh(a)
    assert np.isnan(w).all() and np.isnan(v).all()
    assert np.isnan(want_w).all() and np.isnan(want_v).all()


def stacked(a: f64[:, :, :]) -> tuple[f64[:, :, :], f64[:, :], f64[:, :, :], f64[:, :]]:
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u, s, vh, np.linalg.svd(a, compute_uv=False)


@pytest.mark.parametrize("shape", [(3, 3, 3), (2, 4, 2), (2, 2, 5)])
def test_svd_of_stacks(shape) -> None:
    """Every matrix of a stack factored (through the interpreter: the loop around the
    SVD the compiled tests run)."""
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    u, s, vh, values = _interpreted(stacked)(a)
    want = np.linalg.svd(a, compute_uv=False)
    np.testing.assert_allclose(s, want, rtol=0, atol=1e-12 * np.abs(a).max())
    assert np.array_equal(values, s)
    np.testing.assert_allclose(np.einsum("bij,bj,bjk->bik", u, s, vh), a, rtol=0, atol=1e-12)


def complex_systems(a: c128[:, :], b: c128[:], s: c64[:, :, :]) -> tuple[
        c128[:, :], c128, c128, f64, c128[:], c64[:], c64[:], f32[:]]:
    sign, logdet = np.linalg.slogdet(a)
    sign32, logdet32 = np.linalg.slogdet(s)
    return (np.linalg.inv(a), np.linalg.det(a), sign, logdet, np.linalg.solve(a, b),
            np.linalg.det(s), sign32, logdet32)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_complex_solve_inv_det(n) -> None:
    """LU with partial pivoting on |z|; det's sign is the product of the diagonal's
    phases (umath_linalg's). Well-conditioned random matrices: within 1e-12 (complex128)
    and 1e-4 (complex64) of LAPACK."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    b = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    s = (rng.standard_normal((2, n, n)) + 1j * rng.standard_normal((2, n, n))).astype(
        np.complex64)
    got = _interpreted(complex_systems)(a, b, s)
    for g, w in zip(got, complex_systems(a, b, s), strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        tol = 1e-4 if w.dtype in (np.complex64, np.float32) else 1e-12
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    sign, logdet = _interpreted(complex_slogdet)(np.ones((n, n), complex))
    assert (sign, logdet) == ((0j, -np.inf) if n > 1 else (1 + 0j, 0.0))
    assert (sign, logdet) == np.linalg.slogdet(np.ones((n, n), complex))


def complex_slogdet(a: c128[:, :]) -> tuple[c128, f64]:
    return np.linalg.slogdet(a)
