"""A copy of an argument is a new array, never the argument itself; np.roll by a shift
known only at run time matches NumPy for every shift and size; copies that move whole
rows (``memmove`` above a row length, a loop below it) match NumPy on every side of that
length, on overlapping memory and on strided rows (compiled in-process)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import f64, i8, i64
from aotc.codegen.memory.rowcopy import MIN_BYTES
from aotc.ir import returned_arguments


@aotc.export
def copied(x: f64[:]) -> f64[:]:
    return x.copy()


@aotc.export
def as_array(x: f64[:]) -> f64[:]:
    return np.array(x)


@aotc.export
def same_dtype(x: f64[:]) -> f64[:]:
    return x.astype(np.float64)


@aotc.export
def itself(x: f64[:]) -> f64[:]:
    x += 1
    return x


@aotc.export
def both(x: f64[:]) -> tuple[f64[:], f64[:]]:
    return x, np.copy(x)


@aotc.export
def roll_1d(x: f64[:], s: i64) -> f64[:]:
    return np.roll(x, s)


@aotc.export
def roll_axes(x: f64[:, :], s: i64) -> tuple[f64[:, :], f64[:, :], f64[:, :]]:
    return np.roll(x, s, axis=1), np.roll(x, s), np.roll(x, (s, 1 - s), axis=(0, 1))


@aotc.export
def tiled(a: f64[:], k: i64) -> f64[:, :]:
    return np.tile(a, (k, 1))


@aotc.export
def joined(a: f64[:, :], b: f64[:, :]) -> f64[:, :]:
    return np.concatenate((a, b), axis=1)


@aotc.export
def shifted_right(a: f64[:, :]) -> f64[:, :]:
    a[:, 1:] = a[:, :-1]
    return a


@aotc.export
def shifted_left(a: i8[:, :]) -> i8[:, :]:
    a[:, :-1] = a[:, 1:]
    return a


@pytest.mark.parametrize("kernel", [copied, as_array, same_dtype])
def test_a_copy_is_a_new_array(kernel) -> None:
    x = np.arange(5.0)
    assert returned_arguments(aotc.trace(kernel).optimize().program) == {}
    got = aotc.jit(kernel)(x)
    assert got is not x and not np.shares_memory(got, x)
    got[0] = 99.0
    assert x[0] == 0.0  # the caller's array is untouched, as with the Python function


def test_the_argument_itself_is_returned_as_itself() -> None:
    x = np.arange(3.0)
    assert aotc.jit(itself)(x) is x and x.tolist() == [1.0, 2.0, 3.0]
    same, copy = aotc.jit(both)(x)
    assert same is x and copy is not x and copy.tolist() == x.tolist()


SHIFTS = [-10**18, -8, -1, 0, 1, 3, 7, 22, 10**18 + 1]


@pytest.mark.parametrize("n", [0, 1, 7])
def test_roll_by_a_runtime_shift(n: int) -> None:
    x = np.arange(n, dtype=np.float64) * 1.5
    kernel = aotc.jit(roll_1d)
    for s in SHIFTS:
        np.testing.assert_array_equal(kernel(x, s), np.roll(x, s), err_msg=f"shift {s}")


def test_roll_along_axes_by_a_runtime_shift() -> None:
    x = np.arange(20.0).reshape(4, 5)
    kernel = aotc.jit(roll_axes)
    for s in SHIFTS:
        got = kernel(x, s)
        want = (np.roll(x, s, axis=1), np.roll(x, s), np.roll(x, (s, 1 - s), axis=(0, 1)))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w, err_msg=f"shift {s}")


def _around_the_row_threshold(itemsize: int) -> list[int]:
    at = MIN_BYTES // itemsize
    return [0, 1, at - 1, at, at + 1, 3 * at + 5]


@pytest.mark.parametrize("n", _around_the_row_threshold(8))
def test_row_copies_match_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n)
    np.testing.assert_array_equal(aotc.jit(tiled)(a, 3), np.tile(a, (3, 1)))
    x, y = rng.standard_normal((4, n)), rng.standard_normal((4, n + 2))
    np.testing.assert_array_equal(aotc.jit(joined)(x, y), np.concatenate((x, y), axis=1))
    # Rows that are not contiguous (a transposed operand, every other column) move by
    # the element loop however long they are.
    xt, ys = rng.standard_normal((n, 4)).T, rng.standard_normal((4, 2 * n + 4))[:, ::2]
    np.testing.assert_array_equal(aotc.jit(joined)(xt, ys), np.concatenate((xt, ys), axis=1))


@pytest.mark.parametrize("n", _around_the_row_threshold(8))
def test_a_row_copy_onto_its_own_memory_matches_numpy(n: int) -> None:
    a = np.arange(3.0 * n).reshape(3, n)
    want = a.copy()
    want[:, 1:] = want[:, :-1]
    got = aotc.jit(shifted_right)(a)
    assert got is a
    np.testing.assert_array_equal(got, want)
    b = np.arange(3 * (8 * n + 1), dtype=np.int8).reshape(3, 8 * n + 1)  # as long in bytes
    want_b = b.copy()
    want_b[:, :-1] = want_b[:, 1:]
    np.testing.assert_array_equal(aotc.jit(shifted_left)(b), want_b)


@aotc.export
def swap_rows(a: f64[:, :], i: i64, j: i64) -> f64[:, :]:
    a = a.copy()
    row = a[i].copy()
    a[i] = a[j]
    a[j] = row
    return a


@aotc.export
def swap_through_a_view(a: f64[:, :], i: i64, j: i64) -> f64[:, :]:
    """Without the copy, ``row`` is a view: it sees the first write (NumPy's answer
    is row ``j`` twice)."""
    a = a.copy()
    row = a[i]
    a[i] = a[j]
    a[j] = row
    return a


@aotc.export
def elimination_det(a: f64[:, :]) -> f64:
    """Gaussian elimination with partial pivoting, as written by hand: row swaps through
    a saved row, a scaled column and a rank-1 update of the trailing block."""
    a = a.copy()
    n = a.shape[0]
    sign = 1.0
    for k in range(n):
        p = k + np.argmax(np.abs(a[k:, k]))
        if p != k:
            row = a[k].copy()
            a[k] = a[p]
            a[p] = row
            sign = -sign
        if a[k, k] == 0.0:
            return 0.0
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return sign * np.prod(np.diag(a))


@pytest.mark.parametrize("i, j", [(0, 3), (3, 0), (2, 2), (-1, 1)])
def test_rows_swapped_through_a_saved_row_match_numpy(i, j):
    """The saved row is copied, not the matrix (passes.snapshots): the values are
    NumPy's either way, with and without ``.copy()``."""
    a = np.arange(20.0).reshape(4, 5) ** 2
    for kernel in (swap_rows, swap_through_a_view):
        np.testing.assert_array_equal(aotc.jit(kernel)(a, i, j), kernel(a, i, j))


def test_hand_written_elimination_matches_numpy():
    """The same algorithm run by NumPy, on matrices that pivot, that do not, and that are
    singular: the eliminations are the same operations in the same order, and only the
    product of the n pivots is taken in another order (NumPy multiplies in SIMD lanes),
    so at most n roundings apart."""
    rng = np.random.default_rng(3)
    kernel = aotc.jit(elimination_det)
    cases = [rng.normal(size=(n, n)) for n in (1, 2, 5, 17, 40)]
    cases += [np.eye(6), np.triu(np.ones((4, 4))), np.ones((3, 3)), np.zeros((2, 2))]
    for a in cases:
        n = a.shape[0]
        np.testing.assert_allclose(kernel(a), elimination_det(a), rtol=n * np.finfo(float).eps)
        np.testing.assert_allclose(kernel(a), np.linalg.det(a), rtol=1e-9, atol=1e-12)
