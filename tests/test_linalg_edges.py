"""Empty and degenerate inputs to np.linalg and np.partition behave as NumPy's do: the
same results (exactly: no arithmetic reaches them) or the same exception and message.
Compiled in-process with ``aotc.jit``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import aotc
from aotc import f64, i64


@aotc.export
def eigh(a: f64[:, :]) -> tuple[f64[:], f64[:, :]]:
    w, v = np.linalg.eigh(a)
    return w, v


@aotc.export
def eigvalsh(a: f64[:, :]) -> f64[:]:
    return np.linalg.eigvalsh(a)


@aotc.export
def cond(a: f64[:, :]) -> tuple[f64, f64]:
    return np.linalg.cond(a), np.linalg.cond(a, -2)


@aotc.export
def partitioned(x: f64[:, :], k: i64) -> tuple[f64[:, :], f64[:, :], i64[:, :]]:
    return np.partition(x, 0), np.partition(x, -1, axis=0), np.argpartition(x, k)


@aotc.export
def power(a: f64[:, :], n: i64) -> f64[:, :]:
    return np.linalg.matrix_power(a, n)


#: Each kernel compiled once, on its first call.
JITTED = {fn: aotc.jit(fn) for fn in (eigh, eigvalsh, cond, partitioned, power)}


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        with np.errstate(all="ignore"):
            result = fn(*args)
    except Exception as err:  # noqa: BLE001 - the exception is the outcome compared
        return type(err), str(err)
    return tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else \
        np.asarray(result)


def _same(got: Any, want: Any) -> None:
    if isinstance(want, tuple) and isinstance(want[0], type):
        assert got == want
        return
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fn", [eigh, eigvalsh])
def test_eigh_of_an_empty_matrix_is_empty(fn: Any) -> None:
    a = np.zeros((0, 0))
    _same(_outcome(JITTED[fn], a), _outcome(fn, a))


@pytest.mark.parametrize("a", [np.zeros((0, 0)), np.zeros((0, 3)), np.zeros((2, 0)),
                               np.zeros((1, 1)), np.zeros((3, 3)),
                               np.array([[np.nan, 0.0], [0.0, 0.0]]),
                               np.array([[2.0, 0.0], [0.0, 0.5]])], ids=repr)
def test_cond_of_empty_singular_and_nan_matrices(a: np.ndarray) -> None:
    # empty: LinAlgError; singular without NaNs: inf (not 0/0); with NaNs: NaN
    _same(_outcome(JITTED[cond], a), _outcome(cond, a))


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 3)])
@pytest.mark.parametrize("k", [0, 2, -1, 5])
def test_partition_of_empty_arrays_never_checks_kth(shape: tuple[int, int], k: int) -> None:
    x = np.arange(float(np.prod(shape))).reshape(shape)[:, ::-1]
    _same(_outcome(JITTED[partitioned], x, k), _outcome(partitioned, x, k))


@pytest.mark.parametrize("n", [-2**63, -2**63 + 1, 2**63 - 1, -3])
def test_matrix_powers_at_the_ends_of_int64(n: int) -> None:
    """|n| of -2**63 does not fit int64: the power is the inverse's to 2**63 (NumPy's own
    loop returns None there), never the identity. Powers of 2I and I/2 are exact."""
    a = 2.0 * np.eye(2)
    with np.errstate(all="ignore"):
        want = np.linalg.matrix_power(np.eye(2) * (0.5 if n < 0 else 2.0), abs(n) % 2**64) \
            if n != -2**63 else np.zeros((2, 2))  # 0.5**(2**63) underflows to 0
    got = JITTED[power](a, n)
    np.testing.assert_array_equal(got, want)
