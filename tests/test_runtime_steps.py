"""Slices whose step is known only at run time (``sieve[i * i::i] = False``, ``x[::k]``):
reads, writes, in-place operators and views written through, for every sign and size
of step, compared with NumPy (compiled in-process with ``aotc.jit``)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aotc
from aotc import f64, i64

BIG = 2**62


@aotc.export
def read_all(x: f64[:], a: i64, b: i64, k: i64
             ) -> tuple[f64[:], f64[:], f64[:], f64[:]]:
    return x[a:b:k], x[::k], x[a::k], x[:b:k]


@aotc.export
def write_scalar(x: f64[:], a: i64, b: i64, k: i64) -> f64[:]:
    y = x.copy()
    y[a:b:k] = -1.0
    return y


@aotc.export
def write_values(x: f64[:], a: i64, k: i64) -> f64[:]:
    y = x.copy()
    y[a::k] = x[a::k] * 2.0 + 1.0
    return y


@aotc.export
def add_in_place(x: f64[:], a: i64, b: i64, k: i64) -> f64[:]:
    y = x.copy()
    y[a:b:k] += 10.0
    return y


@aotc.export
def through_a_view(x: f64[:], k: i64) -> f64[:]:
    y = x.copy()
    v = y[::k]
    v *= 3.0  # a view: the write reaches y, as in NumPy
    return y


@aotc.export
def into_the_argument(x: f64[:], k: i64) -> None:
    x[1::k] = 0.0


@aotc.export
def strided_sum(x: f64[:], k: i64) -> float:
    return float(np.sum(x[::k]))


@aotc.export
def rows_and_columns(m: f64[:, :], k: i64, j: i64) -> tuple[f64[:, :], f64[:, :]]:
    out = m.copy()
    out[::k, 1::j] = 0.0
    return m[::k, ::j], out


@aotc.export
def count_primes(n: i64) -> int:
    sieve = np.ones(n + 1, dtype=np.bool_)
    sieve[:2] = False
    i = 2
    while i * i <= n:
        if sieve[i]:
            sieve[i * i::i] = False
        i += 1
    return int(sieve.sum())


def _python(kernel):
    return kernel.__wrapped__ if hasattr(kernel, "__wrapped__") else kernel


@pytest.fixture(scope="module")
def jitted():
    kernels = [read_all, write_scalar, write_values, add_in_place, through_a_view,
               into_the_argument, strided_sum, rows_and_columns, count_primes]
    return {k.__name__: aotc.jit(k) for k in kernels}


STEPS = [1, 2, 3, 7, -1, -2, -3, 100, -100, BIG, -BIG, -2**63]
BOUNDS = [0, 1, 3, 6, -1, -3, -100, 100]


@pytest.mark.parametrize("n", [0, 1, 7])
def test_reads_and_writes_match_numpy(jitted, n: int) -> None:
    x = np.arange(1.0, n + 1.0)
    for k, a, b in itertools.product(STEPS, BOUNDS, BOUNDS):
        for name in ("read_all", "write_scalar", "add_in_place"):
            got, want = jitted[name](x, a, b, k), _python(globals()[name])(x, a, b, k)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,), strict=True):
                assert g.shape == w.shape and np.array_equal(g, w), (name, n, a, b, k)
        got, want = jitted["write_values"](x, a, k), write_values(x, a, k)
        assert np.array_equal(got, want), ("write_values", n, a, k)
    for k in STEPS:
        assert np.array_equal(jitted["through_a_view"](x, k), through_a_view(x, k)), k
        assert jitted["strided_sum"](x, k) == strided_sum(x, k), k
        mine, theirs = x.copy(), x.copy()
        assert jitted["into_the_argument"](mine, k) is None
        into_the_argument(theirs, k)
        assert np.array_equal(mine, theirs), k


def test_two_axes(jitted) -> None:
    m = np.arange(35.0).reshape(5, 7)
    for k, j in itertools.product([1, 2, 3, -1, -2, 9, -9], repeat=2):
        for g, w in zip(jitted["rows_and_columns"](m, k, j), rows_and_columns(m, k, j),
                        strict=True):
            assert np.array_equal(g, w), (k, j)


def test_the_sieve(jitted) -> None:
    for n in (0, 1, 2, 10, 100, 1000):
        assert jitted["count_primes"](n) == count_primes(n) == \
            sum(all(p % d for d in range(2, p)) for p in range(2, n + 1))


def test_a_zero_step_raises_as_in_python(jitted) -> None:
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    for name, args in (("read_all", (x, 0, 4, 0)), ("write_scalar", (x, 0, 4, 0)),
                       ("strided_sum", (x, 0)), ("into_the_argument", (x.copy(), 0))):
        with pytest.raises(ValueError, match="slice step cannot be zero"):
            jitted[name](*args)


@aotc.export
def strided_loss(x: f64[:], k: i64) -> float:
    return float(np.sum(x[1::k] ** 2))


def test_gradients_and_batches_through_a_runtime_step() -> None:
    """grad scatters back through the same slice, vmap keeps it per row; both compiled
    with aotc.jit, which binds the calls to the wrapped kernel's parameters."""
    x = np.arange(1.0, 8.0)
    grad = aotc.jit(aotc.export(aotc.grad(strided_loss), name="strided_loss_grad"))
    batched = aotc.jit(aotc.export(aotc.vmap(strided_loss, in_axes=(0, None)),
                                   name="strided_loss_rows"))
    rows = np.arange(21.0).reshape(3, 7)
    for k in (1, 2, 3, -2, 9):
        want = np.zeros_like(x)
        want[1::k] = 2 * x[1::k]
        assert np.array_equal(grad(x, k), want), k
        assert np.array_equal(grad(x=x, k=k), want), k
        assert np.array_equal(batched(rows, k), [strided_loss(r, k) for r in rows]), k
