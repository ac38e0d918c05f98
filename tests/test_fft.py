"""np.fft against NumPy's pocketfft, compiled in-process with ``aotc.jit``.

Tolerances: both are FFTs with directly computed twiddles, whose error grows as
``eps * log2(N)`` times the input's norm; Bluestein's (lengths with a prime factor above
31: 17, 37 here) runs three transforms of length below ``4N``, so its bound is a few
times that. Mixed radix: 12, 100, 1000 (unrolled radices 2 to 5), 124 and 462 (31, 7 and
11 loop over their terms). Errors are
asserted below ``1e-13 * max|X|`` for double precision (measured: at most 1.5e-15 up to
N = 1024) and ``1e-5 * max|X|`` for complex64. Frequencies and shifts are exact."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import c64, c128, f32, f64
from aotc.codegen.outline import equation_count
from aotc.frontend import trace_kernel
from aotc.interpret import eval_program
from aotc.types import signature_from_annotations


@aotc.export
def spectrum(x: f64[:]) -> c128[:]:
    return np.fft.fft(x)


@aotc.export
def single(x: f32[:]) -> c64[:]:
    return np.fft.fft(x)


@aotc.export
def options(x: f64[:], z: c128[:, :]) -> tuple[f64[:], c128[:], c128[:, :], f64[:], f64[:],
                                                f64[:], c128[:]]:
    """Real transforms, norms, an axis and ``n``: five transforms (each costs seconds of
    LLVM), and the frequencies and shifts."""
    return (np.fft.irfft(np.fft.rfft(x), len(x)), np.fft.ifft(x, norm="ortho"),
            np.fft.fft(z, axis=0), np.fft.fftfreq(len(x), 0.5), np.fft.rfftfreq(x.shape[0]),
            np.fft.fftshift(x), np.fft.fft(x, 8, norm="forward"))


def interpreted(z: c128[:, :]) -> tuple[c128[:, :], c128[:, :], c128[:, :], f64[:, :]]:
    """The transforms over several axes, as the interpreter runs them."""
    return (np.fft.ifft2(z), np.fft.fftn(z, axes=(0,)), np.fft.rfft2(z.real),
            np.fft.irfftn(z, z.shape, axes=(0, 1)))


def reference(x: np.ndarray, z: np.ndarray, small: bool) -> tuple[np.ndarray, ...]:
    return (np.fft.fft(x), *options(x, z), *(interpreted(z) if small else ()))


@pytest.fixture(scope="module")
def jitted():
    program = trace_kernel(interpreted, signature_from_annotations(interpreted)).program
    return (aotc.jit(spectrum), aotc.jit(single), aotc.jit(options),
            lambda z: eval_program(program, z))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 37, 64, 100, 124, 462, 1000,
                               1024])
def test_transforms_match_pocketfft(jitted, n) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    z = rng.standard_normal((3, n)) + 1j * rng.standard_normal((3, n))
    small = n <= 64  # the interpreter runs the butterflies one by one
    got = [jitted[0](x), *jitted[2](x, z), *(jitted[3](z) if small else ())]
    for k, (g, want) in enumerate(zip(got, reference(x, z, small), strict=True)):
        assert g.shape == want.shape and g.dtype == want.dtype, k
        scale = max(np.abs(want).max(), 1.0)
        exact = k in (4, 5, 6)  # frequencies and shifts
        atol = 0 if exact else 1e-13 * scale
        np.testing.assert_allclose(g, want, rtol=0, atol=atol, err_msg=str(k))
    x32 = x.astype(np.float32)
    spectrum = jitted[1](x32)
    assert spectrum.dtype == np.complex64
    want = np.fft.fft(x32)
    np.testing.assert_allclose(spectrum, want, rtol=0, atol=1e-5 * max(np.abs(want).max(), 1))


def hermitian(h: c128[:]) -> tuple[f64[:], f64[:]]:
    return np.fft.irfft(h), np.fft.irfft(h, 5)


def test_irfft_ignores_imaginary_edges() -> None:
    """pocketfft reads only the real parts of the zero and Nyquist terms."""
    program = trace_kernel(hermitian, signature_from_annotations(hermitian)).program
    h = np.array([1 + 2j, 2 - 1j, -1 + 0.5j, 0.5 + 3j])
    for got, want in zip(eval_program(program, h), hermitian(h), strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_empty_input_is_an_error(jitted) -> None:
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        jitted[0](np.zeros(0))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        np.fft.fft(np.zeros(0))


@aotc.export
def real_options(x: f32[:], y: f64[:, :], n: aotc.i64) -> tuple[c64[:], c128[:], c128[:, :]]:
    """rfft's paths: an even length through a half-length complex transform (Bluestein's
    for 74), an odd one through the full one (n = 5 makes every length below run both);
    float32, n= crops or pads, norms, another axis. Three transforms:
    each costs many seconds of LLVM."""
    return (np.fft.rfft(x), np.fft.rfft(y[0], n, norm="ortho"),
            np.fft.rfft(y, axis=0, norm="forward"))


@pytest.fixture(scope="module")
def real_jitted():
    return aotc.jit(real_options)


def test_rfft_traces_one_complex_transform() -> None:
    """rfft chooses the length of its one complex transform (``N/2`` packed samples or
    all ``N``) rather than tracing two: each transform is seconds of LLVM per call."""
    def equations(fn: object) -> int:
        return equation_count(trace_kernel(fn, signature_from_annotations(fn)).program)
    assert equations(spectrum) < equations(real_half) < 1.2 * equations(spectrum)


def real_half(x: f64[:]) -> c128[:]:
    return np.fft.rfft(x)


@pytest.mark.parametrize("length", [1, 2, 7, 12, 74, 100, 101, 1000])
def test_real_transforms_match_pocketfft(real_jitted, length: int) -> None:
    k = real_jitted
    rng = np.random.default_rng(length)
    x = rng.standard_normal(length).astype(np.float32)
    y = rng.standard_normal((3, length))
    for n in (1, 5, length):
        got = k(x, y, n)
        want = real_options(x, y, n)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g.shape == w.shape and g.dtype == w.dtype, (n, i)
            scale = max(np.abs(w).max(), 1.0)
            tol = 1e-5 if w.dtype == np.complex64 else 1e-13
            np.testing.assert_allclose(g, w, rtol=0, atol=tol * scale, err_msg=f"{n} {i}")

