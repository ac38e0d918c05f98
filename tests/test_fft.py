"""np.fft against NumPy, compiled in-process with ``aotc.jit`` and interpreted.

A compiled transform calls NumPy's own pocketfft loop, the one NumPy's dispatch picks,
with the same scale factor (aotc.numpy_api.fft), so results are compared bit for bit:
values, NaN and inf positions, dtypes and shapes. That covers what an FFT of its own got
wrong before: finite inputs near 1e308 overflowing where pocketfft's are finite, and a
NaN spreading into every output where pocketfft's stays local."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import aotc
from aotc import c64, c128, f32, f64, i64
from aotc.interpret import eval_program
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations


@aotc.export
def transforms(x: f64[:], z: c128[:, :], n: i64) -> tuple[
        c128[:], c128[:], c128[:], f64[:], c128[:, :], c128[:], f64[:], f64[:], c128[:]]:
    """Every one-axis transform, with n= cropping or padding, norms and another axis,
    and the frequencies and shifts."""
    return (np.fft.fft(x), np.fft.ifft(x, n, norm="ortho"), np.fft.rfft(x, n),
            np.fft.irfft(z[0], n, norm="forward"), np.fft.fft(z, axis=0),
            np.fft.fft(x, 8, norm="forward"), np.fft.fftfreq(len(x), 0.5),
            np.fft.fftshift(x), np.fft.rfft(z[0].real, norm="ortho"))


@aotc.export
def single(x: f32[:, :], z: c64[:, :]) -> tuple[
        c64[:, :], c64[:, :], c64[:, :], f32[:, :], c64[:, :], c64[:, :]]:
    """float32 and complex64 at every norm: NumPy's dispatch takes the double-precision
    loop for some and the single-precision one for others."""
    return (np.fft.fft(x), np.fft.rfft(x, norm="ortho"), np.fft.ifft(z, norm="forward"),
            np.fft.irfft(z), np.fft.fft(z, axis=0, norm="ortho"), np.fft.rfft2(x))


@aotc.export
def several_axes(z: c128[:, :, :]) -> tuple[c128[:, :, :], c128[:, :, :], c128[:, :, :],
                                            f64[:, :, :]]:
    return (np.fft.ifft2(z), np.fft.fftn(z, axes=(0, 2)), np.fft.rfftn(z.real, axes=(1, 2)),
            np.fft.irfftn(z, (3, 4), axes=(0, 2)))


JITTED = {fn: aotc.jit(fn) for fn in (transforms, single, several_axes)}


def _same(got: Any, want: Any) -> None:
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.shape == w.shape and g.dtype == w.dtype, k
        np.testing.assert_array_equal(g, w, err_msg=str(k))  # bit for bit, NaN where NaN


@pytest.mark.parametrize("length", [1, 2, 3, 5, 8, 12, 17, 37, 64, 100, 101, 462, 1024])
def test_transforms_match_numpy_bit_for_bit(length: int) -> None:
    rng = np.random.default_rng(length)
    x = rng.standard_normal(length)
    z = rng.standard_normal((3, length)) + 1j * rng.standard_normal((3, length))
    for n in (1, 5, length, 2 * length + 1):
        _same(JITTED[transforms](x, z, n), transforms(x, z, n))
    x32, z32 = x.astype(np.float32)[None], z.astype(np.complex64)
    if length == 1:  # irfft's default length, 2 * (1 - 1), is too few points
        with pytest.raises(ValueError, match=r"^Invalid number of FFT data points \(0\)"):
            single(x32, z32)
        with pytest.raises(ValueError, match=r"^Invalid number of FFT data points \(0\)"):
            JITTED[single](x32, z32)
        return
    _same(JITTED[single](x32, z32), single(x32, z32))


@aotc.export
def rows(z: c128[:, :]) -> tuple[c128[:, :], f64[:, :]]:
    return np.fft.fft(z), np.fft.irfft(z, 6)


JITTED[rows] = aotc.jit(rows)


def test_strided_batched_and_empty_batches() -> None:
    rng = np.random.default_rng(0)
    z = rng.standard_normal((5, 3, 6)) + 1j * rng.standard_normal((5, 3, 6))
    for view in (z, z.transpose(2, 1, 0)[:, ::-1], z[:, :, ::2], z[:, :, :1]):
        _same(JITTED[several_axes](view), several_axes(view))
    for batch in (z[0], z[:0, 0], z[0, :, ::-2], z[:, 0].T):
        _same(JITTED[rows](batch), rows(batch))


@pytest.mark.parametrize("seed", range(6))
def test_huge_values_nan_and_inf_as_pocketfft_has_them(seed: int) -> None:
    rng = np.random.default_rng(seed)
    length = int(rng.integers(2, 40))
    x = rng.choice([1.0, -1.0], length) * 10.0 ** rng.uniform(300, 308, length)
    z = (x + 1j * x[::-1])[None].repeat(3, axis=0)
    x[rng.integers(length)] = [np.nan, np.inf, -np.inf][seed % 3]
    with np.errstate(all="ignore"):
        want = transforms(x, z, length)
    _same(JITTED[transforms](x, z, length), want)


def test_interpreted_program_matches_numpy() -> None:
    program = trace_kernel(several_axes, signature_from_annotations(several_axes)).program
    z = np.random.default_rng(3).standard_normal((3, 4, 5)) + 0.5j
    _same(eval_program(program, z), several_axes(z))


def test_too_few_points_is_numpys_value_error() -> None:
    x, z = np.zeros(4), np.zeros((3, 4), complex)
    for n in (0, -2):
        with pytest.raises(ValueError, match=rf"^Invalid number of FFT data points \({n}\)"):
            JITTED[transforms](x, z, n)
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        JITTED[transforms](np.zeros(0), z, 3)
