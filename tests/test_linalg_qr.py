"""np.linalg.qr (all modes), np.vander and np.polyfit against NumPy (LAPACK), compiled
in-process with ``aotc.jit``.

Tolerances: Householder QR is backward stable, so Q and R differ from LAPACK's (the same
reflections, with LAPACK's signs, summed in another order) by about ``n * eps * |A|``
(``1e-15 |A|`` for these sizes): asserted within ``1e-12 |A|``. polyfit solves the same
least-squares problem through QR where NumPy uses the SVD; the scaled Vandermonde
matrices here have condition numbers below 1e3, so the coefficients agree to about
``1e3 * eps`` relative: asserted within ``1e-10``. vander is exact (NumPy's order of
products)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import f32, f64


@aotc.export
def factor(a: f64[:, :]) -> tuple[f64[:, :], f64[:, :], f64[:, :], f64[:, :]]:
    q, r = np.linalg.qr(a)
    qc, rc = np.linalg.qr(a, mode="complete")
    return q, r, qc, rc


@aotc.export
def factor32(a: f32[:, :]) -> f32[:, :]:
    return np.linalg.qr(a, mode="r")


@aotc.export
def fits(x: f64[:], y: f64[:]) -> tuple[f64[:, :], f64[:, :], f64[:], f64[:, :]]:
    return (np.vander(x), np.vander(x, 3, increasing=True), np.polyfit(x, y, 2),
            np.polyfit(x, np.stack([y, 2 * y], axis=1), 1, w=x + 1))


@pytest.fixture(scope="module")
def jitted():
    return aotc.jit(factor), aotc.jit(factor32), aotc.jit(fits)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (1, 1), (6, 1), (1, 4)])
def test_qr_matches_lapack(jitted, shape) -> None:
    rng = np.random.default_rng(sum(shape))
    for a in (rng.standard_normal(shape), np.triu(rng.standard_normal(shape)),
              np.zeros(shape)):
        scale = max(np.abs(a).max(), 1.0)
        for got, want in zip(jitted[0](a), factor(a), strict=True):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * scale)
    a32 = rng.standard_normal(shape).astype(np.float32)
    got, want = jitted[1](a32), factor32(a32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


@pytest.mark.parametrize("magnitude", [1e-300, 1e-170, 1e-100, 1e100, 1e154, 1e200, 1e300])
def test_qr_of_tiny_and_huge_matrices_matches_lapack(jitted, magnitude) -> None:
    # The column norms of these square to 0 or inf unless scaled (LAPACK's dnrm2 does):
    # unscaled, 1e-170 gave Q = I and 1e154 an all-NaN R. Same bound as above, on the
    # factors scaled back to 1 (rounding is relative; no step here under- or overflows).
    rng = np.random.default_rng(7)
    for shape in ((5, 5), (7, 3), (3, 6)):
        a = rng.standard_normal(shape) * magnitude
        for got, want in zip(jitted[0](a), factor(a), strict=True):  # Q ~ 1, R ~ |A|
            scale = np.abs(want).max()
            assert np.isfinite(got).all()
            np.testing.assert_allclose(got / scale, want / scale, rtol=0, atol=1e-12)


def test_polyfit_matches_numpy(jitted) -> None:
    rng = np.random.default_rng(3)
    for n in (3, 8, 50):
        x = np.sort(rng.random(n)) * 4 - 1
        y = 1 + 2 * x - x ** 2 + rng.standard_normal(n) * 0.01
        got, want = jitted[2](x, y), fits(x, y)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        for g, w in zip(got[2:], want[2:], strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_polyfit_errors(jitted) -> None:
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        jitted[2](np.arange(4.0), np.arange(3.0))
    with pytest.raises(np.linalg.LinAlgError, match="rank-deficient"):  # NumPy warns
        jitted[2](np.ones(5), np.arange(5.0))
