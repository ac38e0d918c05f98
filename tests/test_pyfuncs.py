"""np.vectorize and np.apply_along_axis call Python functions: compiled as loops that
call them (converted, so their branches on traced values work), compared with NumPy
(compiled in-process with ``aotc.jit``)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import f32, f64


def piecewise(v, t):
    if v > t:
        return v * 2.0
    return -v


@np.vectorize
def made_outside(v):
    return v * v if v < 0.3 else 1.0


def both(v):
    return v + 1, v > 0.5


@aotc.export
def vectorized(x: f64[:, :], t: f64) -> tuple[f64[:, :], f64[:, :], f64[:, :], f64[:, :]]:
    clip = np.vectorize(lambda v: v if v < 0.7 else 0.7)
    return (np.vectorize(piecewise)(x, t), clip(x), np.vectorize(piecewise)(x, x.T),
            made_outside(x))


@aotc.export
def vectorized_types(x: f32[:]) -> tuple[f64[:], f32[:], f32[:]]:
    plus, big = np.vectorize(both)(x)
    return np.vectorize(piecewise, otypes=[np.float64])(x, 0.5), plus, big.astype(np.float32)


def spread(row, k):
    return np.array([row.min(), row.max() * k, row[0]])


@aotc.export
def along(x: f64[:, :, :], k: f64) -> tuple[f64[:, :], f64[:, :], f64[:, :, :], f64[:, :, :]]:
    return (np.apply_along_axis(np.sum, 0, x), np.apply_along_axis(lambda r: r[-1], -1, x),
            np.apply_along_axis(spread, 1, x, k), np.apply_along_axis(spread, 2, x, k=k))


@pytest.fixture(scope="module")
def jitted():
    return {k.__name__: aotc.jit(k) for k in (vectorized, vectorized_types, along)}


def _same(got, want) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)


def test_vectorize(jitted) -> None:
    rng = np.random.default_rng(5)
    for shape in ((3, 3), (1, 1)):
        x = rng.random(shape)
        _same(jitted["vectorized"](x, 0.4), vectorized(x, 0.4))
    for fn in (jitted["vectorized"], vectorized):
        with pytest.raises(ValueError, match="cannot call `vectorize` on size 0 inputs"):
            fn(np.zeros((0, 0)), 0.4)
    x = rng.random(7).astype(np.float32)
    _same(jitted["vectorized_types"](x), vectorized_types(x))


def test_apply_along_axis(jitted) -> None:
    x = np.random.default_rng(6).standard_normal((2, 3, 4))
    _same(jitted["along"](x, 1.5), along(x, 1.5))
