"""Complex arithmetic and elementary functions against mpmath and NumPy.

Bounds, norm-wise (the error of the worse part in ulps of the element's larger part):

- against mpmath at 40 digits, on points spread over the whole exponent range and near
  ``|z| = 1``: ``sqrt`` 1.5 ulp (glibc's ``csqrt`` bit for bit: 1.1), ``abs``, ``exp``,
  ``log``, ``cos`` 2 ulp, ``sin`` 3 ulp for complex128 (measured 1.75, 1.5, 1.5, 1.8,
  2.4; NumPy's own: 1.75, 1.4, 0.9, 1.9, 2.1); complex64, computed in float64 and
  rounded once, 2 ulp (``abs`` 1.7, the rest 0.5).
- against NumPy: special values (every infinity, NaN and signed zero of C99 Annex G, as
  glibc gives them) exactly, finite values within 4 ulp (``sqrt`` exactly for
  complex128); ``+ - * /``, ``conj``, comparisons bit for bit; ``pow`` with an integer
  exponent bit for bit, otherwise within ``8 * (1 + |b log a|)`` ulp (``exp(b log a)``
  amplifies the rounding of ``b log a`` in NumPy's glibc as here).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from aotc.codegen import TargetSpec, emit_llvm
from aotc.codegen.core.jit import JitLibrary

from .data import assert_same
from .programs import binary, unary

C8, C16 = np.dtype("c8"), np.dtype("c16")
UNARY = ["abs", "exp", "log", "sqrt", "sin", "cos", "sinh", "cosh", "exp2", "log2", "log10",
         "expm1", "log1p", "neg", "conj", "sign", "square", "reciprocal", "rint", "isnan",
         "isinf", "isfinite"]
BINARY = ["add", "sub", "mul", "div", "pow", "max", "min", "fmax", "fmin", "eq", "ne", "lt",
          "le", "gt", "ge"]
UFUNC = {"abs": np.absolute, "neg": np.negative, "conj": np.conjugate, "add": np.add,
         "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
         "max": np.maximum, "min": np.minimum, "eq": np.equal, "ne": np.not_equal,
         "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
MPMATH = {"abs": mpmath.fabs, "exp": mpmath.exp, "log": mpmath.log, "sqrt": mpmath.sqrt,
          "sin": mpmath.sin, "cos": mpmath.cos}
#: ulp bounds against mpmath (see the module docstring)
MPMATH_ULPS = {C16: {"abs": 2, "exp": 2, "log": 2, "sqrt": 1.5, "sin": 3, "cos": 2},
               C8: dict.fromkeys(MPMATH, 2)}
#: ulp bounds against NumPy for finite results; the rest is compared bit for bit
NUMPY_ULPS = {**dict.fromkeys(["exp", "log", "sin", "cos", "sinh", "cosh", "exp2", "log2",
                               "log10", "log1p"], 4), "expm1": 4, "abs": 1, "sqrt": 2}
PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, math.inf, -math.inf, math.nan, 1e300, -1e300,
         1e-310, 700.0, 710.0, -720.0, 1500.0, 3.14159, math.pi / 2, 1e-20, 30.0, 88.0]


def ufunc(name: str) -> np.ufunc:
    return UFUNC.get(name) or getattr(np, name)


def grid(dtype: np.dtype) -> np.ndarray:
    """Every pair of special parts, built exactly (``1j * inf`` would make a NaN)."""
    z = np.zeros(len(PARTS) ** 2, dtype)
    with np.errstate(all="ignore"):
        z.real = np.repeat(PARTS, len(PARTS))
        z.imag = np.tile(PARTS, len(PARTS))
    return z


def spread(dtype: np.dtype, n: int, lo: float, hi: float, seed: int = 0) -> np.ndarray:
    """``n`` values of log-uniform modulus in [e**lo, e**hi] and uniform argument."""
    rng = np.random.default_rng(seed)
    mag, ang = np.exp(rng.uniform(lo, hi, n)), rng.uniform(-np.pi, np.pi, n)
    return (mag * np.cos(ang) + 1j * mag * np.sin(ang)).astype(dtype)


@pytest.fixture(scope="module")
def kernels():
    cases = [(p, d) for d in (C8, C16) for p in UNARY + BINARY]
    programs = [unary(p, d) if p in UNARY else binary(p, d) for p, d in cases]
    return dict(zip(cases, JitLibrary(programs).kernels, strict=True))


def run(kernels, name: str, dtype: np.dtype, *args: np.ndarray) -> np.ndarray:
    kernel = kernels[(name, dtype)]
    if name in UNARY:
        return kernel(args[0], args[0][0])[0]
    return kernel(args[0], args[1], args[0][0], args[1][0])[0]


def normwise_ulps(got: np.ndarray, ref: list, part: np.dtype) -> np.ndarray:
    """The error of each value against mpmath, in ulps of its reference's larger part."""
    errors = []
    for value, exact in zip(got, ref, strict=True):
        exact = mpmath.mpc(exact)
        scale = max(abs(float(exact.real)), abs(float(exact.imag)))
        if scale == 0 or not math.isfinite(scale):
            errors.append(0.0)
            continue
        value = complex(value)
        error = max(abs(mpmath.mpf(value.real) - exact.real),
                    abs(mpmath.mpf(value.imag) - exact.imag))
        errors.append(float(error / float(np.spacing(np.asarray(scale, part)))))
    return np.array(errors)


@pytest.mark.parametrize("dtype", [C8, C16], ids=str)
@pytest.mark.parametrize("name", list(MPMATH))
def test_accuracy_against_mpmath(kernels, name, dtype):
    mpmath.mp.dps = 40
    part = np.dtype(f"f{dtype.itemsize // 2}")
    limit = float(np.log(np.finfo(part).max)) - 1
    lo, hi = (-20.0, math.log(limit)) if name in ("exp", "sin", "cos") else (-limit, limit)
    z = np.concatenate([spread(dtype, 400, lo, hi, 1), spread(dtype, 200, -3, 3, 2),
                        spread(dtype, 100, -1e-6, 1e-6, 3)])  # near |z| = 1 (log's hard spot)
    got = run(kernels, name, dtype, z)
    ref = [MPMATH[name](mpmath.mpc(float(x.real), float(x.imag))) for x in z]
    errors = normwise_ulps(got, ref, part)
    worst = int(np.argmax(errors))
    assert errors[worst] <= MPMATH_ULPS[dtype][name], (
        f"{name}[{dtype}]: {errors[worst]:.2f} ulp at {z[worst]!r}: got {got[worst]!r}, "
        f"mpmath {ref[worst]}")


@pytest.mark.parametrize("dtype", [C8, C16], ids=str)
@pytest.mark.parametrize("name", [p for p in UNARY if p not in ("rint",)])
def test_special_values_match_numpy(kernels, name, dtype):
    """On every pair of special parts (and, for the smooth functions, random values),
    infinities, NaNs and signed zeros are NumPy's exactly."""
    rng = np.random.default_rng(4)
    z = np.concatenate([grid(dtype), (rng.standard_normal(300) * 4
                                      + 4j * rng.standard_normal(300)).astype(dtype)])
    with np.errstate(all="ignore"):
        want = ufunc(name)(z)
    assert_same(run(kernels, name, dtype, z), want, NUMPY_ULPS.get(name, 0), name)


@pytest.mark.parametrize("dtype", [C8, C16], ids=str)
@pytest.mark.parametrize("name", [p for p in BINARY if p != "pow"])
def test_arithmetic_and_comparisons_are_numpys_bit_for_bit(kernels, name, dtype):
    """Every ordered pair of special values: ``1 / (0 + 0j)`` is ``inf + nanj``, Smith's
    division, NumPy's fused product, lexicographic order with NumPy's NaN rules."""
    z = grid(dtype)
    x, y = np.repeat(z, len(z)), np.tile(z, len(z))
    with np.errstate(all="ignore"):
        want = ufunc(name)(x, y)
    got = run(kernels, name, dtype, x, y)
    if want.dtype == bool:
        np.testing.assert_array_equal(got, want)
    else:
        assert_same(got, want, 0, name)


@pytest.mark.parametrize("dtype", [C8, C16], ids=str)
def test_pow_integer_exponents_are_numpys_bit_for_bit(kernels, dtype):
    """npymath's repeated multiplication for |n| < 100 (and its 1, 0 and NaN cases)."""
    z = np.concatenate([grid(dtype), spread(dtype, 200, -3, 3)])
    exponents = np.array([0, 1, 2, 3, 4, 5, 7, 16, 99, -1, -2, -3, -17, -99], dtype)
    x, y = np.repeat(z, len(exponents)), np.tile(exponents, len(z))
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    assert_same(run(kernels, "pow", dtype, x, y), want, 0, "pow")


@pytest.mark.parametrize("dtype", [C8, C16], ids=str)
def test_pow_general_exponents(kernels, dtype):
    """``exp(b log a)``: special values exactly as NumPy (moderate exponents: beyond
    them the sign of an underflowed part is the sign of the cosine of a huge angle, noise
    in both libraries); finite values within 8 (1 + |b log a|) ulp of NumPy's."""
    z = grid(dtype)
    with np.errstate(all="ignore"):
        keep = (np.abs(z) < 1e10) & ~((np.abs(z) < 1e-100) & (z != 0))
    x, y = np.repeat(z, keep.sum()), np.tile(z[keep], len(z))
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    got = run(kernels, "pow", dtype, x, y)
    for g, e in ((got.real, want.real), (got.imag, want.imag)):
        same_nan = np.isnan(g) == np.isnan(e)
        same_inf = (g == e) | ~np.isinf(e)
        same_zero = ((g == 0) & (np.signbit(g) == np.signbit(e))) | (e != 0)
        ok = same_nan & same_inf & same_zero
        assert ok.all(), (x[~ok][:4], y[~ok][:4], got[~ok][:4], want[~ok][:4])
    a, b = spread(dtype, 2000, -4, 4, 5), spread(dtype, 2000, -2, 2, 6)
    with np.errstate(all="ignore"):
        want, w = np.power(a, b), np.abs(b.astype(C16) * np.log(a.astype(C16)))
    got = run(kernels, "pow", dtype, a, b)
    part = np.dtype(f"f{dtype.itemsize // 2}")
    scale = np.maximum(np.abs(want.real), np.abs(want.imag)).astype(part)
    error = np.maximum(np.abs(got.real - want.real), np.abs(got.imag - want.imag))
    ok = error <= 8 * (1 + w) * np.spacing(scale)
    assert ok.all(), (a[~ok][:3], b[~ok][:3], got[~ok][:3], want[~ok][:3])


def test_abs_does_not_overflow_or_lose_tiny_values(kernels):
    z = np.array([1e308 + 1e308j, -1e308 + 0j, 3e-320 + 4e-320j, 1e-310 - 1e-310j,
                  complex(np.inf, np.nan), complex(np.nan, -np.inf), complex(np.nan, 1.0)])
    got = run(kernels, "abs", C16, z)
    assert_same(got, np.abs(z), 1)
    assert np.isfinite(got[0]) and got[0] == pytest.approx(math.sqrt(2) * 1e308)
    assert got[4] == got[5] == np.inf and np.isnan(got[6])


def test_signed_zeros_through_conj_and_negation(kernels):
    z = np.array([complex(a, b) for a in (0.0, -0.0) for b in (0.0, -0.0)])
    for name in ("conj", "neg"):
        got = run(kernels, name, C16, z)
        assert_same(got, ufunc(name)(z), 0, name)
        assert (np.signbit(got.imag) != np.signbit(z.imag)).all()  # both flip it
        assert (np.signbit(got.real) != np.signbit(z.real)).all() == (name == "neg")


@pytest.mark.parametrize("prim", ["add", "mul"])
def test_complex_arithmetic_vectorizes(prim):
    """Complex values are structs only between instructions: the loop over interleaved
    {re, im} pairs becomes vector arithmetic (interleaved loads and shuffles)."""
    text = emit_llvm([("k", binary(prim, C16))], TargetSpec("x86-64-v3"))
    assert f"{'fadd' if prim == 'add' else 'fmul'} <4 x double>" in text \
        or "<4 x double> @llvm.fmuladd" in text or "fmul <2 x double>" in text
    assert "shufflevector" in text
