"""Accuracy of the vector math kernels against higher-precision references.

Every kernel is compiled once (one JIT library for the module) through the ordinary
elementwise path, so the code tested is the vectorized loop a wheel ships. References:
mpmath at 40 digits on a few thousand float64 points per function (the arbiter), and
80-bit long double libm (``np.longdouble``, 11 more bits than float64) on 10**5 float64
and 4 * 10**5 float32 points, spread over the whole domain: random magnitudes from the
smallest subnormal to the largest float, both signs, plus each function's hard spots.
Bound: 4 ulp everywhere (the kernels measure <= 2.8). Special values must match NumPy's
ufuncs exactly, including the sign of zero.
"""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest

from aotc.codegen import TargetSpec
from aotc.codegen.core.jit import JitLibrary

from .programs import binary, unary

ULP_BOUND = 4.0
F32, F64 = np.dtype("f4"), np.dtype("f8")
UNARY = ["exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "arctan", "sinh", "cosh",
         "arcsinh", "arccosh", "cbrt", "exp2", "log2", "log10"]
BINARY = ["arctan2", "pow"]
CASES = [(p, d) for p in UNARY + BINARY for d in (F32, F64)]
UFUNC = {"pow": np.power}
MPMATH = {"exp": mpmath.exp, "expm1": mpmath.expm1, "log": mpmath.log,
          "log1p": mpmath.log1p, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
          "tanh": mpmath.tanh, "arctan": mpmath.atan, "arctan2": mpmath.atan2,
          "pow": mpmath.power, "sinh": mpmath.sinh, "cosh": mpmath.cosh,
          "arcsinh": mpmath.asinh, "arccosh": mpmath.acosh, "exp2": lambda v: mpmath.power(2, v),
          "log2": lambda v: mpmath.log(v, 2), "log10": mpmath.log10,
          "cbrt": lambda v: mpmath.sign(v) * mpmath.cbrt(abs(v))}  # (the real root)


def ufunc(prim: str) -> np.ufunc:
    return UFUNC.get(prim) or getattr(np, prim)


@pytest.fixture(scope="module")
def kernels():
    programs = [unary(p, d) if p in UNARY else binary(p, d) for p, d in CASES]
    library = JitLibrary(programs)
    return dict(zip(CASES, library.kernels, strict=True))


def run(kernels, prim: str, dtype: np.dtype, *args: np.ndarray) -> np.ndarray:
    kernel = kernels[(prim, dtype)]
    args = tuple(np.ascontiguousarray(a, dtype) for a in args)
    if prim in UNARY:
        return kernel(args[0], args[0][0])[0]
    return kernel(*args, args[0][0], args[1][0])[0]


def magnitudes(dtype: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """Both signs, log-uniform from the smallest subnormal to the largest float."""
    info = np.finfo(dtype)
    lo, hi = np.log2(float(info.smallest_subnormal)), np.log2(float(info.max))
    with np.errstate(over="ignore"):
        values = np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n)
    return values.astype(dtype)


def domain(prim: str, dtype: np.dtype, n: int, rng: np.random.Generator) -> tuple:
    """Inputs for ``prim``: the whole range plus where the function is interesting."""
    wide = magnitudes(dtype, n // 2, rng)
    near = {"exp": (-750, 720), "expm1": (-50, 720), "log": (0, 4), "log1p": (-1, 4),
            "sin": (-40, 40), "cos": (-40, 40), "tan": (-40, 40), "tanh": (-25, 25),
            "arctan": (-5, 5), "arctan2": (-5, 5), "pow": (0, 4), "sinh": (-712, 712),
            "cosh": (-712, 712), "arcsinh": (-5, 5), "cbrt": (-10, 10), "exp2": (-1080, 1030),
            "log2": (0, 4), "log10": (0, 4), "arccosh": (0.9, 5)}[prim]
    local = rng.uniform(*near, n - n // 2).astype(dtype)
    x = np.concatenate([wide, local])
    if prim == "arctan2":
        return x, rng.permutation(np.concatenate([magnitudes(dtype, n // 2, rng), local]))
    if prim == "pow":
        x = np.abs(x)
        near_one = (1 + rng.standard_normal(n // 4) * 1e-5).astype(dtype)
        y = np.concatenate([rng.uniform(-1, 1, n // 2), rng.uniform(-60, 60, n // 4),
                            rng.standard_normal(n - n // 2 - n // 4) * 1e5]).astype(dtype)
        return np.concatenate([x[: n - n // 4], near_one]), y
    return (x,)


def ulp_error(got: np.ndarray, ref: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``|got - ref|`` in units of the last place of ``ref`` rounded to ``dtype``;
    inf where one side is not finite and they differ."""
    with np.errstate(all="ignore"):
        rounded = ref.astype(dtype)
        spacing = np.spacing(np.abs(rounded)).astype(np.longdouble)
        err = np.abs(got.astype(np.longdouble) - ref) / spacing
    same = (got == rounded) | (np.isnan(got) & np.isnan(rounded))
    err[same] = 0.0
    err[~np.isfinite(err)] = np.inf
    return err


def check(prim: str, dtype: np.dtype, args: tuple, got: np.ndarray, ref: np.ndarray) -> None:
    err = ulp_error(got, ref, dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= ULP_BOUND, (
        f"{prim}[{dtype}]: {float(err[worst]):.2f} ulp at {[a[worst] for a in args]}: "
        f"got {got[worst]!r}, want {ref[worst]!r}")


@pytest.mark.parametrize(("prim", "dtype"), CASES, ids=[f"{p}-{d}" for p, d in CASES])
def test_against_long_double(kernels, prim, dtype):
    rng = np.random.default_rng(7)
    args = domain(prim, dtype, 100_000 if dtype == F64 else 400_000, rng)
    got = run(kernels, prim, dtype, *args)
    with np.errstate(all="ignore"):
        ref = ufunc(prim)(*(a.astype(np.longdouble) for a in args))
    check(prim, dtype, args, got, ref)


@pytest.mark.parametrize("prim", UNARY + BINARY)
def test_against_mpmath(kernels, prim):
    rng = np.random.default_rng(11)
    args = domain(prim, F64, 1500, rng)
    got = run(kernels, prim, F64, *args)
    mpmath.mp.dps = 40
    ref = np.empty(len(got), np.longdouble)
    for k in range(len(got)):
        point = [mpmath.mpf(float(a[k])) for a in args]
        try:
            value = MPMATH[prim](*point)
        except (ValueError, ZeroDivisionError):
            value = mpmath.nan
        if isinstance(value, mpmath.mpc):  # e.g. log of a negative number
            value = mpmath.nan
        ref[k] = np.longdouble(mpmath.nstr(value, 30)) if mpmath.isfinite(value) else (
            np.longdouble(float(value)))
    check(prim, F64, args, got, ref)


def specials(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
                     3.0, -3.0, 2.5, info.tiny, info.smallest_subnormal,
                     -info.smallest_subnormal, info.max, -info.max, 1e-30, 100.0, 800.0,
                     -800.0], dtype)


@pytest.mark.parametrize(("prim", "dtype"), CASES, ids=[f"{p}-{d}" for p, d in CASES])
def test_special_values_match_numpy(kernels, prim, dtype):
    """inf, nan, zeros of both signs, overflow, underflow, subnormals, domain errors."""
    s = specials(dtype)
    args = (s,) if prim in UNARY else tuple(a.ravel() for a in np.meshgrid(s, s))
    got = run(kernels, prim, dtype, *args)
    with np.errstate(all="ignore"):
        want = ufunc(prim)(*args)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    exact = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(got[exact], want[exact])
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]))
    finite = ~exact
    assert np.all(ulp_error(got[finite], want[finite].astype(np.longdouble), dtype) <= 2)


def widest_vector_bits(spec: TargetSpec) -> int:
    """The widest vector register the target's instruction sets give."""
    features = set(spec.cpu_features)
    return 512 if "avx512f" in features else 256 if "avx" in features else 128


def arithmetic_vector_bits(text: str) -> set[int]:
    """Widths in bits of the float vectors the kernel computes with (fadd, fmul...)."""
    ops = re.findall(r"= (?:fadd|fsub|fmul|fdiv|fcmp \w+)(?: \w+)* <(\d+) x (double|float)>",
                     text)
    return {int(n) * (64 if e == "double" else 32) for n, e in ops}


# x86-64-v3 (AVX2) is the common CI host; it runs on AVX-512 machines too, so its
# 256-bit code is checked wherever the tests run.
@pytest.mark.parametrize("target", ["x86-64-v2", "x86-64-v3", "native"])
def test_kernels_vectorize(target):
    """The loop around each kernel is widened to the target's vector registers (128-bit
    SSE, 256-bit AVX2; AVX-512 hosts may prefer 256-bit vectors, as LLVM's tuning for
    some of them does), and calls no scalar libm outside the huge-argument fallback of
    sin/cos/tan."""
    from aotc.codegen import emit_llvm
    spec = TargetSpec.parse(target)
    register = widest_vector_bits(spec)
    assert target != "x86-64-v3" or register == 256
    expected = 256 if register == 512 else register
    for prim, dtype in CASES:
        program = unary(prim, dtype) if prim in UNARY else binary(prim, dtype)
        text = emit_llvm([("k", program)], spec)
        widths = arithmetic_vector_bits(text)
        assert widths and max(widths) >= expected, (prim, dtype, sorted(widths), register)
        for name in ("exp", "log", "atan2", "pow", "tanh", "atan", "expm1", "log1p", "sinh",
                     "cosh", "asinh", "acosh", "cbrt", "exp2", "log2", "log10"):
            assert f"@{name}(" not in text and f"@{name}f(" not in text, (prim, dtype, name)
