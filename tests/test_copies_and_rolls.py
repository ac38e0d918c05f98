"""A copy of an argument is a new array, never the argument itself; np.roll by a shift
known only at run time matches NumPy for every shift and size; copies that move whole
rows (``memmove`` above a row length, a loop below it) match NumPy on every side of that
length, on overlapping memory and on strided rows (compiled in-process)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import f64, i8, i64
from aotc.codegen.rowcopy import MIN_BYTES
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
