"""np.linalg.solve/inv/det/cholesky against NumPy (LAPACK), and the errors of the newer
functions (singular matrices, out-of-bounds indices), interpreted and compiled.

The exact functions (indices, ufunc methods, stacking, isin, diagonals, gradient) are in
the differential catalog (``numpy_cases_extended.py``). Linear algebra cannot be compared
bit for bit: LAPACK blocks its LU and orders its sums differently. Both results are
backward stable (LU with partial pivoting; the growth factor is small for these
matrices), so each is within about ``n * eps * cond(A)`` of the exact solution, norm-wise;
the test allows ``TOL * n * eps * cond(A)`` between them (``TOL = 10``: measured
differences are well under one unit of ``n * eps * cond``). Elementwise relative error
would not do: a tiny entry of ``x`` carries the absolute error of the large ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from aotc.codegen.core import jit
from aotc.interpret import eval_program
from aotc.ops.index import KernelError
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

TOL = 10

KERNELS: dict[str, tuple[Any, str]] = {
    "solve": (lambda a, b: np.linalg.solve(a, b), "(f8[:, :], f8[:])"),
    "solve_matrix": (lambda a, b: np.linalg.solve(a, b), "(f8[:, :], f8[:, :])"),
    "solve_f32": (lambda a, b: np.linalg.solve(a, b), "(f4[:, :], f4[:, :])"),
    "solve_stack": (lambda a, b: np.linalg.solve(a, b), "(f8[:, :, :], f8[:, :])"),
    "inv": (lambda a: np.linalg.inv(a), "(f8[:, :])"),
    "inv_int": (lambda a: np.linalg.inv(a), "(i8[:, :])"),
    "inv_f32_stack": (lambda a: np.linalg.inv(a), "(f4[:, :, :])"),
    "det": (lambda a: np.linalg.det(a), "(f8[:, :])"),
    "det_f32_stack": (lambda a: np.linalg.det(a), "(f4[:, :, :])"),
    "cholesky": (lambda a: np.linalg.cholesky(a), "(f8[:, :])"),
    "cholesky_upper_stack": (lambda a: np.linalg.cholesky(a, upper=True), "(f8[:, :, :])"),
    "unravel": (lambda i: np.unravel_index(i, (3, 4)), "(i8[:])"),
    "unravel_scalar": (lambda i, n: np.unravel_index(i, (n, 4)), "(i8, i8)"),
    "ravel_multi": (lambda i, j: np.ravel_multi_index((i, j), (3, 4)), "(i8[:], i8[:])"),
    "max_accumulate": (lambda x: (np.maximum.reduce(x), np.subtract.reduce(x)), "(f8[:])"),
    "gradient": (lambda x: np.gradient(x), "(f8[:])"),
}


class Built:
    """Every kernel above: its optimized program, and compiled in one JIT library."""

    def __init__(self) -> None:
        self.programs = {name: optimize(trace_kernel(fn, parse_signature_string(sig),
                                                     name=name).program)
                         for name, (fn, sig) in KERNELS.items()}
        library = jit.JitLibrary(list(self.programs.values()))
        self.compiled = dict(zip(self.programs, library.kernels, strict=True))

    def runners(self, name: str) -> list[Any]:
        program = self.programs[name]
        return [lambda *a: eval_program(program, *a), self.compiled[name]]


@pytest.fixture(scope="module")
def built() -> Built:
    return Built()


def _normwise(got: np.ndarray, expected: np.ndarray, a: np.ndarray) -> None:
    """``got`` is within ``TOL * n * eps * cond(a)`` of ``expected``, relative to the
    largest element (per matrix of a stack)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if not expected.size or not a.size:
        np.testing.assert_array_equal(got, expected)  # empty, or det of a 0 x 0 matrix: 1.0
        return
    n = a.shape[-1]
    eps = np.finfo(expected.dtype).eps
    cond = np.linalg.cond(a.astype(np.float64))
    scale = np.abs(expected).reshape(*a.shape[:-2], -1).max(axis=-1) if a.ndim > 2 and \
        expected.ndim > 0 else np.abs(expected).max()
    diff = np.abs(got.astype(np.float64) - expected).reshape(*a.shape[:-2], -1).max(axis=-1) \
        if a.ndim > 2 and expected.ndim > 0 else np.abs(got.astype(np.float64) - expected).max()
    bound = TOL * n * eps * np.asarray(cond) * np.maximum(scale, np.finfo(np.float64).tiny)
    assert np.all(diff <= bound), f"difference {diff} over the bound {bound}"


def _layouts(a: np.ndarray) -> list[np.ndarray]:
    """Contiguous, transposed (Fortran order) and strided views of the same matrix."""
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    wide[..., ::2] = a
    return [a, np.asfortranarray(a), wide[..., ::2]]


rng = np.random.default_rng(5)


def _spd(n: int) -> np.ndarray:
    r = rng.standard_normal((n, n))
    return r @ r.T + n * np.eye(n)  # symmetric positive definite, well conditioned


def _general(n: int) -> np.ndarray:
    return rng.standard_normal((n, n)) + 2 * np.eye(n)  # needs pivoting, moderately conditioned


SIZES = [1, 2, 5, 17]


@pytest.mark.parametrize("n", SIZES)
def test_solve_matches_lapack(built, n):
    for a in (_spd(n), _general(n)):
        b, bm = rng.standard_normal(n), rng.standard_normal((n, 3))
        for run in built.runners("solve"):
            for layout in _layouts(a):
                _normwise(run(layout, b)[0], np.linalg.solve(a, b), a)
        for run in built.runners("solve_matrix"):
            _normwise(run(a, bm)[0], np.linalg.solve(a, bm), a)
            _normwise(run(a, bm[:, :0])[0], np.linalg.solve(a, bm[:, :0]), a)
        a32, b32 = a.astype(np.float32), bm.astype(np.float32)
        for run in built.runners("solve_f32"):
            _normwise(run(a32, b32)[0], np.linalg.solve(a32, b32), a)


def test_solve_stacks_and_empty(built):
    stack = np.stack([_general(4) for _ in range(3)])
    b = rng.standard_normal((4, 2))
    for run in built.runners("solve_stack"):
        _normwise(run(stack, b)[0], np.linalg.solve(stack, b), stack)
        _normwise(run(stack[:0], b)[0], np.linalg.solve(stack[:0], b), stack[:0])
    for run in built.runners("solve"):
        got = run(np.zeros((0, 0)), np.zeros(0))[0]
        assert got.shape == (0,) and got.dtype == np.float64


def test_pivoting_is_exact_on_a_permutation(built):
    a = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [4.0, 0.0, 0.0]])
    b = np.array([1.0, 2.0, 3.0])
    for run in built.runners("solve"):
        np.testing.assert_array_equal(run(a, b)[0], np.linalg.solve(a, b))
    for run in built.runners("det"):  # NumPy's exp(log|det|): 8 within rounding, as ours
        _normwise(run(a)[0], np.linalg.det(a), a)


@pytest.mark.parametrize("n", SIZES + [0])
def test_inv_det_match_lapack(built, n):
    for a in (_spd(n), _general(n)):
        for run in built.runners("inv"):
            for layout in _layouts(a):
                _normwise(run(layout)[0], np.linalg.inv(a), a)
        for run in built.runners("det"):
            for layout in _layouts(a):
                got = run(layout)[0]
                assert got.dtype == np.float64 and got.shape == ()
                _normwise(got, np.linalg.det(a), a)  # relative: det is a scalar


def test_inv_det_dtypes_and_stacks(built):
    ints = np.array([[2, 1], [1, 3]])
    for run in built.runners("inv_int"):
        _normwise(run(ints)[0], np.linalg.inv(ints), ints.astype(float))
    stack = np.stack([_general(3) for _ in range(4)]).astype(np.float32)
    for run in built.runners("inv_f32_stack"):
        _normwise(run(stack)[0], np.linalg.inv(stack), stack)
    for run in built.runners("det_f32_stack"):
        got = run(stack)[0]
        expected = np.linalg.det(stack)
        assert got.dtype == expected.dtype == np.float32
        bound = TOL * 3 * np.finfo(np.float32).eps * np.linalg.cond(stack.astype(float))
        np.testing.assert_array_less(np.abs(got - expected), bound * np.abs(expected))


@pytest.mark.parametrize("n", SIZES + [0])
def test_cholesky_matches_lapack(built, n):
    a = _spd(n)
    for run in built.runners("cholesky"):
        for layout in _layouts(a):
            got = run(layout)[0]
            _normwise(got, np.linalg.cholesky(a), a)
            assert not np.triu(got, 1).any()  # the upper triangle is zero, as NumPy's
    stack = np.stack([_spd(3), _spd(3)])
    for run in built.runners("cholesky_upper_stack"):
        _normwise(run(stack)[0], np.linalg.cholesky(stack, upper=True), stack)


def test_an_empty_sum_is_zero_whatever_einsum_leaves(built, monkeypatch):
    """The interpreter's product over no terms is zero of its own making. NumPy's einsum
    over an empty axis of a view (``a[i, :0]``, as an LU's first row has) can leave its
    result unwritten: valgrind showed it, and a full run's interpreted float32 inverse
    came back NaN in its first matrix from memory an earlier test had left. Here einsum
    leaves NaN where it would leave garbage."""
    einsum = np.einsum

    def unwritten_when_empty(spec: str, *operands: np.ndarray, **kwargs: Any) -> np.ndarray:
        result = np.asarray(einsum(spec, *operands, **kwargs))
        return np.full_like(result, np.nan) if any(x.size == 0 for x in operands) else result

    monkeypatch.setattr(np, "einsum", unwritten_when_empty)
    stack = np.stack([_general(3) for _ in range(2)]).astype(np.float32)
    got = eval_program(built.programs["inv_f32_stack"], stack)[0]
    _normwise(got, np.linalg.inv(stack), stack)
    program = optimize(trace_kernel(lambda a, b: a @ b, parse_signature_string(
        "(f4[:], f4[:, :])"), name="empty_dot").program)
    got = eval_program(program, np.zeros(0, np.float32), np.ones((0, 3), np.float32))[0]
    np.testing.assert_array_equal(got, np.zeros(3, np.float32))


def test_cholesky_reads_only_the_lower_triangle(built):
    a = _spd(4)
    garbage = a + np.triu(np.full((4, 4), 1e3), 1)
    for run in built.runners("cholesky"):
        _normwise(run(garbage)[0], np.linalg.cholesky(garbage), a)


def _raises(run: Any, args: tuple[Any, ...], error: type, message: str) -> None:
    """The kernel fails as NumPy does: the interpreter's KernelError names the builtin
    class, the compiled kernel raises it."""
    with pytest.raises((error, KernelError), match=message) as info:
        run(*args)
    if isinstance(info.value, KernelError):
        assert info.value.error == error.__name__


def _raises_linalg(run: Any, args: tuple[Any, ...], message: str) -> None:
    """NumPy's LinAlgError: the compiled kernel raises it; the interpreter's KernelError
    names its builtin base with the class's name before the message."""
    with pytest.raises((np.linalg.LinAlgError, KernelError), match=message) as info:
        run(*args)
    if isinstance(info.value, KernelError):
        assert info.value.error == "ValueError" and str(info.value).startswith("LinAlgError: ")
    else:
        assert str(info.value) == message


def test_singular_matrices(built):
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.solve(singular, np.ones(2))
    for run in built.runners("solve"):
        _raises_linalg(run, (singular, np.ones(2)), "Singular matrix")
        _raises_linalg(run, (np.zeros((3, 3)), np.ones(3)), "Singular matrix")
    for run in built.runners("inv"):
        _raises_linalg(run, (singular,), "Singular matrix")
    for run in built.runners("det"):
        got = run(singular)[0]
        assert got == np.linalg.det(singular) == 0.0 and not np.signbit(got)
        assert run(np.zeros((3, 3)))[0] == 0.0


def test_cholesky_of_an_indefinite_matrix(built):
    for bad in (np.array([[1.0, 2.0], [2.0, 1.0]]), -np.eye(3), np.array([[0.0]])):
        with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
            np.linalg.cholesky(bad)
        for run in built.runners("cholesky"):
            _raises_linalg(run, (bad,), "Matrix is not positive definite")
    for run in built.runners("cholesky"):  # NaN is no error, in NumPy either
        assert np.isnan(run(np.array([[np.nan]]))[0]).all()
        assert np.isnan(np.linalg.cholesky(np.array([[np.nan]]))).all()


def test_non_square_and_mismatched_shapes(built):
    for run in built.runners("inv"):
        _raises(run, (np.ones((2, 3)),), ValueError, "must be square")
    for run in built.runners("solve"):
        _raises(run, (np.eye(2), np.ones(3)), ValueError, "mismatch in its core dimension")


def test_index_errors(built):
    for run in built.runners("unravel"):
        _raises(run, (np.array([1, 12, -1]),), ValueError,
                "index 12 is out of bounds for array with size 12")
        _raises(run, (np.array([-1]),), ValueError, "index -1 is out of bounds")
    for run in built.runners("unravel_scalar"):
        _raises(run, (np.int64(8), np.int64(2)), ValueError,
                "index 8 is out of bounds for array with size 8")
        assert [int(v) for v in run(np.int64(7), np.int64(2))] == [1, 3]
    for run in built.runners("ravel_multi"):
        _raises(run, (np.array([0, 3]), np.array([0, 0])), ValueError,
                "invalid entry in coordinates array")
        _raises(run, (np.array([0]), np.array([-1])), ValueError, "invalid entry")


def test_reductions_of_empty_arrays_and_short_gradients(built):
    for run in built.runners("max_accumulate"):
        _raises(run, (np.zeros(0),), ValueError,
                "zero-size array to reduction operation maximum which has no identity")
    for run in built.runners("gradient"):
        _raises(run, (np.zeros(1),), ValueError, "Shape of array too small to calculate a "
                                                 "numerical gradient")
