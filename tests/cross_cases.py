"""Kernels and checks for a platform the suite cannot run natively (``test_cross.py``
runs them under qemu-user): sorting, matrix products and vector math at the sizes where
their fast paths start, which the small arrays of the differential catalog do not reach.

Each case is a function of the compiled module ``k`` that raises AssertionError when it
does not give that platform's NumPy results; :func:`main` runs them with the protocol of
``hostile_cases.main`` (one JSON line per case, ``start`` first).
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

PACKAGE = "aotc_crossed"

KERNELS = '''
"""Sorting, matrix products and vector math at their fast paths' sizes."""
import numpy as np

import aotc


@aotc.export("f8[:](f8[:])", "f4[:](f4[:])", "i8[:](i8[:])", "i4[:](i4[:])",
             "u8[:](u8[:])", "i2[:](i2[:])")
def sort(x):
    return np.sort(x)


@aotc.export("i8[:](f8[:])", "i8[:](i4[:])")
def argsort(x):
    return np.argsort(x, kind="stable")


@aotc.export("f8[:, :](f8[:, :], f8[:, :])", "f4[:, :](f4[:, :], f4[:, :])",
             "c16[:, :](c16[:, :], c16[:, :])")
def matmul(a, b):
    return a @ b


@aotc.export("f8[:](f8[:, :], f8[:])", "f4[:](f4[:, :], f4[:])")
def matvec(a, x):
    return a @ x


@aotc.export("f8[:](f8[:], i8)", "f4[:](f4[:], i8)")
def transcendental(x, which):
    if which == 0:
        return np.exp(x)
    if which == 1:
        return np.log(np.abs(x))
    if which == 2:
        return np.sin(x)
    if which == 3:
        return np.cos(x)
    if which == 4:
        return np.tanh(x)
    if which == 5:
        return np.expm1(x)
    if which == 6:
        return np.log1p(np.abs(x))
    if which == 7:
        return np.arctan(x)
    return np.cbrt(x)


@aotc.export("f8(f8[:])", "f4(f4[:])")
def total(x):
    return np.sum(x)
'''

#: The functions of ``transcendental``, by its ``which``.
FUNCTIONS = ["exp", "log", "sin", "cos", "tanh", "expm1", "log1p", "arctan", "cbrt"]
#: Worst error against a long double reference (AArch64's is IEEE quad precision): the
#: vector kernels are measured at <= 2.75 ulp on x86-64 (tests/codegen/test_vecmath.py
#: states 4); the same LLVM IR runs here, with FMA contraction as NEON has it.
ULPS = 4

CASES: dict[str, Callable[[Any], None]] = {}


def case(fn: Callable[[Any], None]) -> Callable[[Any], None]:
    CASES[fn.__name__] = fn
    return fn


def _data(dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x = (rng.standard_normal(n) * 1e3).astype(dtype)
    x[rng.integers(0, n, n // 50)] = np.nan
    special = np.array([np.inf, -np.inf, -0.0, 0.0], dtype)[:n]
    x[:special.size] = special
    return x


@case
def sorts_like_numpy(k: Any) -> None:
    rng = np.random.default_rng(3)
    for dtype in ("f8", "f4", "i8", "i4", "u8", "i2"):
        for n in (0, 1, 15, 16, 17, 255, 1000, 100_003):
            x = _data(dtype, n, rng)
            np.testing.assert_array_equal(k.sort(x), np.sort(x), err_msg=f"{dtype} {n}")
            np.testing.assert_array_equal(k.sort(x[::-3]), np.sort(x[::-3]))


@case
def argsorts_stably(k: Any) -> None:
    rng = np.random.default_rng(4)
    for n in (0, 7, 300, 50_000):
        x = rng.integers(-20, 20, n).astype(np.int32)  # many ties: stability shows
        np.testing.assert_array_equal(k.argsort(x), np.argsort(x, kind="stable"))
        y = _data("f8", n, rng)
        np.testing.assert_array_equal(k.argsort(y), np.argsort(y, kind="stable"))


@case
def matrix_products_match(k: Any) -> None:
    """Against NumPy's BLAS, relative to the products' magnitudes (sums reordered)."""
    rng = np.random.default_rng(5)
    with np.errstate(all="ignore"):  # (NumPy's SVE BLAS sets flags under qemu)
        for m, n, p in ((1, 1, 1), (3, 5, 7), (17, 33, 9), (64, 64, 64), (129, 257, 65),
                        (300, 200, 311), (0, 4, 5)):
            for dtype, tol in (("f8", 1e-13), ("f4", 1e-5)):
                a = rng.standard_normal((m, n)).astype(dtype)
                b = rng.standard_normal((n, p)).astype(dtype)
                scale = np.abs(a) @ np.abs(b) + 1e-30
                assert np.all(np.abs(k.matmul(a, b) - a @ b) <= tol * scale), (m, n, p, dtype)
                assert np.all(np.abs(k.matmul(b.T, a.T) - b.T @ a.T) <= tol * scale.T)
                x = rng.standard_normal(n).astype(dtype)
                assert np.allclose(k.matvec(a, x), a @ x, rtol=tol * 10, atol=tol * n)
            if m * n * p > 64 ** 3:
                continue  # (the complex product's loops are the same at every size)
            c = rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))
            d = rng.standard_normal((n, p)) + 1j * rng.standard_normal((n, p))
            assert np.allclose(k.matmul(c, d), c @ d, rtol=1e-12, atol=1e-12 * max(n, 1))


@case
def vector_math_within_4_ulp(k: Any) -> None:
    rng = np.random.default_rng(6)
    for dtype in ("f8", "f4"):
        # 6,000 of each (the reference is computed in long double: software quad
        # precision on AArch64, slow under emulation)
        x = np.concatenate([rng.uniform(-30, 30, 6_000), rng.standard_normal(6_000),
                            np.exp(rng.uniform(-80, 80, 6_000))]).astype(dtype)
        x[rng.random(x.size) < 0.5] *= -1
        for which, name in enumerate(FUNCTIONS):
            got = k.transcendental(x, which)
            arg = np.abs(x) if name in ("log", "log1p") else x
            with np.errstate(all="ignore"):
                want = getattr(np, name)(arg.astype(np.longdouble))
                err = np.abs(got.astype(np.longdouble) - want) / np.spacing(
                    np.abs(want).astype(dtype)).astype(np.longdouble)
            finite = np.isfinite(want) & (np.abs(want) < np.finfo(dtype).max)
            assert np.array_equal(np.isnan(got), np.isnan(want)), name
            worst = float(np.max(err[finite])) if finite.any() else 0.0
            assert worst <= ULPS, f"{name} {dtype}: {worst:.2f} ulp"


@case
def sums_match(k: Any) -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 100, 10_001, 1_000_000):
        x = rng.standard_normal(n)
        assert abs(k.total(x) - np.sum(x)) <= 1e-12 * max(np.sum(np.abs(x)), 1)
        y = x.astype(np.float32)
        assert abs(k.total(y) - np.sum(y)) <= 1e-5 * max(float(np.sum(np.abs(y))), 1)


def main(names: list[str]) -> None:
    """Run the named cases against ``aotc_crossed.kernels``, one JSON line each."""
    k = importlib.import_module(f"{PACKAGE}.kernels")
    assert k.__file__ is not None and k.__file__.endswith(".so"), k.__file__
    for name in names:
        print(json.dumps({"case": name, "status": "start"}), flush=True)
        try:
            CASES[name](k)
            result = {"case": name, "status": "pass"}
        except BaseException:
            result = {"case": name, "status": "fail", "detail": traceback.format_exc()}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(CASES))
