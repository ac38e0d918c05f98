"""Every elementwise primitive on every dtype NumPy has a loop for, against NumPy.

All kernels of this module are compiled into one object and linked once. Each kernel
computes its primitive on (array, array), (array, scalar), (scalar, array) and
(scalar, scalar) operands, so broadcasting of rank-0 operands and rank-0 results are
covered too. Inputs are every pair of edge values (0, ±1, MIN/MAX, shift counts around
the bit width, NaN, ±inf, -0.0, subnormals).
"""

from __future__ import annotations

import numpy as np
import pytest

from aotc.codegen import TargetSpec, build_llvm_module
from aotc.codegen.core.jit import JitLibrary
from aotc.codegen.elementwise.mathlib import LIBM_BINARY, LIBM_UNARY
from aotc.errors import UnsupportedError
from aotc.interpret import eval_program
from aotc.ops.elementwise import (
    BINARY_UFUNCS,
    COMPARISON_UFUNCS,
    NO_COMPLEX_KERNEL,
    PREDICATE_UFUNCS,
    UNARY_UFUNCS,
)

from .data import DTYPES, assert_same, edge_values, has_numpy_loop, pairs
from .programs import ProgramBuilder, binary, unary

UNARY = [*UNARY_UFUNCS, *PREDICATE_UFUNCS]
BINARY = [*BINARY_UFUNCS, *COMPARISON_UFUNCS]

# libm (glibc) and NumPy's own SIMD loops (SVML-derived on AVX-512 hosts) are each
# accurate to a few ulp but not identical, so transcendental results are compared with a
# relative tolerance of about 8 ulp of the dtype. Everything else (+ - * /, sqrt, floor,
# rint, divmod, conversions…) is correctly rounded or exact and compared bit for bit,
# including the sign of zero.
LIBM = set(LIBM_UNARY) | set(LIBM_BINARY)
RTOL = {np.dtype("f4"): 8 * 2.0**-23, np.dtype("f8"): 8 * 2.0**-52,
        np.dtype("c8"): 8 * 2.0**-23, np.dtype("c16"): 8 * 2.0**-52}
# Complex results are compared norm-wise (see ``assert_same``): glibc's complex functions
# against straight-line kernels (tests/codegen/test_complexmath.py has the bounds), and
# pow's exp(b log a) (exponents here are moderate: a**1e30 is noise in both).
COMPLEX_RTOL = set(LIBM) | {"sqrt", "pow"}

# NumPy's own loops disagree on the sign of max(0.0, -0.0) (scalar vs SIMD paths).
ZERO_SIGN_UNSPECIFIED = {"max", "min", "fmax", "fmin"}

def _refused(prim: str, dtype: np.dtype) -> bool:
    """No NumPy loop, or a complex loop aotc does not have yet."""
    return not has_numpy_loop(prim, dtype) or (dtype.kind == "c" and prim in NO_COMPLEX_KERNEL)


CASES = [(p, d) for p in UNARY + BINARY for d in DTYPES if not _refused(p, d)]
UNSUPPORTED = [(p, d) for p in UNARY + BINARY for d in DTYPES if _refused(p, d)]


def _program(prim: str, dtype: np.dtype):
    return unary(prim, dtype) if prim in UNARY else binary(prim, dtype)


@pytest.fixture(scope="module")
def kernels():
    programs = [_program(p, d) for p, d in CASES]
    library = JitLibrary(programs)
    return dict(zip(CASES, library.kernels, strict=True))


def _operands(prim: str, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    x, y = pairs(dtype)
    if prim == "pow" and dtype.kind == "i":
        y = np.where(y < 0, 3, y).astype(dtype)  # negative powers raise (tested elsewhere)
    if prim == "pow" and dtype.kind == "c":
        y = np.where(np.abs(y) < 1e10, y, 2 - 1j).astype(dtype)  # |y| = inf, NaN stay
    return x, y


def _rtol(prim: str, dtype: np.dtype) -> float:
    if dtype.kind == "c":
        return RTOL[dtype] if prim in COMPLEX_RTOL else 0.0
    return RTOL[dtype] if prim in LIBM and dtype.kind == "f" else 0.0


@pytest.mark.parametrize(("prim", "dtype"), CASES, ids=[f"{p}-{d}" for p, d in CASES])
def test_matches_numpy(kernels, prim, dtype):
    kernel = kernels[(prim, dtype)]
    x, y = _operands(prim, dtype)
    picks = [0, 1, len(x) // 2, len(x) - 1]
    rtol = _rtol(prim, dtype)
    signed_zero = prim not in ZERO_SIGN_UNSPECIFIED
    if prim in UNARY:
        x = edge_values(dtype)
        for k in picks[:2] + [len(x) - 1]:
            args = (x, x[k])
            for j, (got, want) in enumerate(zip(kernel(*args), eval_program(kernel.program,
                                                                             *args), strict=True)):
                assert_same(got, want, rtol=rtol, signed_zero=signed_zero,
                            what=f"{prim} output {j}")
        return
    for k in picks:
        args = (x, y, x[k], y[k])
        for j, (got, want) in enumerate(zip(kernel(*args), eval_program(kernel.program, *args),
                                            strict=True)):
            assert_same(got, want, rtol=rtol, signed_zero=signed_zero,
                        what=f"{prim} output {j} scalar {x[k]!r},{y[k]!r}")


def test_unsupported_dtypes_raise():
    """No NumPy loop (sqrt on int, sub on bool…): a clear UnsupportedError, never a crash."""
    for prim, dtype in UNSUPPORTED:
        with pytest.raises(UnsupportedError, match=prim):
            build_llvm_module([("k", _program(prim, dtype))], TargetSpec())


def test_int_pow_negative_exponent_is_value_error():
    pb = ProgramBuilder()
    x, y = pb.array("i4", "n"), pb.array("i4", "n")
    library = JitLibrary([pb.build(pb.apply("pow", x, y))])
    (kernel,) = library.kernels
    base = np.array([2, 3, 4], np.int32)
    np.testing.assert_array_equal(kernel(base, np.array([3, 0, 1], np.int32))[0], [8, 1, 4])
    with pytest.raises(ValueError, match="negative integer powers"):
        kernel(base, np.array([1, -1, 2], np.int32))
