"""``np.pad`` in every supported mode against NumPy, for widths known at build time or
only at run time, widths longer than the axis (the pattern repeats), per-axis widths
and constants, and NumPy's errors (compiled in-process with ``aotc.jit``)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aotc
from aotc import f64, i64
from aotc.errors import TraceError

MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


@aotc.export
def pad_1d(x: f64[:], b: i64, a: i64
           ) -> tuple[f64[:], f64[:], f64[:], f64[:], f64[:]]:
    return tuple(np.pad(x, (b, a), mode=m) for m in MODES)


@aotc.export
def pad_2d(m: f64[:, :]) -> tuple[f64[:, :], f64[:, :], f64[:, :], f64[:, :], i64[:, :]]:
    return (np.pad(m, 1, mode="edge"), np.pad(m, ((2, 0), (1, 3)), mode="reflect"),
            np.pad(m, ((1, 2), (3, 1)), constant_values=((1.5, 2), (3, 4))),
            np.pad(m, 2, "wrap"), np.pad(m.astype(np.int64), (1,), constant_values=7.9))


@pytest.fixture(scope="module")
def jitted():
    return aotc.jit(pad_1d), aotc.jit(pad_2d)


def test_one_axis_every_mode_and_width(jitted) -> None:
    for n in (1, 2, 3, 5):
        x = np.arange(1.0, n + 1)
        for b, a in itertools.product((0, 1, 2, 4, 7, 11), repeat=2):
            for mode, got, want in zip(MODES, jitted[0](x, b, a), pad_1d(x, b, a),
                                       strict=True):
                assert np.array_equal(got, want), (mode, n, b, a)


def test_two_axes_pad_in_order(jitted) -> None:
    for shape in ((1, 1), (2, 3), (4, 5)):
        m = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        for got, want in zip(jitted[1](m), pad_2d(m), strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want), shape


def test_numpy_errors(jitted) -> None:
    empty = np.zeros(0)
    assert all(r.size == 0 for r in jitted[0](empty, 0, 0))
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        jitted[0](empty, 1, 0)
    with pytest.raises(ValueError, match="can't contain negative values"):
        jitted[0](np.ones(3), -1, 0)
    with pytest.raises(ValueError, match="can't contain negative values"):
        np.pad(np.ones(3), (-1, 0))


def test_unsupported_modes_are_located_errors() -> None:
    @aotc.export
    def ramp(x: f64[:]) -> f64[:]:
        return np.pad(x, 2, mode="linear_ramp")

    with pytest.raises(TraceError, match="mode 'linear_ramp' is not supported"):
        aotc.trace(ramp)
