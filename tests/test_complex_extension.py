"""Complex numbers through the built extension: scalars in and out of the Cython
wrapper, complex arrays written in place, the C header's C99 types, the ``.pyi`` stub."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy_cases import assert_same
from projects import build_project, imported, run_c_caller

from aotc import abi

pytestmark = pytest.mark.usefixtures("c_compiler")

PACKAGE = "aotc_cx"
KERNELS = '''
"""Complex kernels."""
import numpy as np

import aotc
from aotc import c64, c128, f64


@aotc.export
def rotate(z: c128[:], w: c128) -> c128[:]:
    return z * w


@aotc.export("c8(c8[:], c8)", "complex(complex[:], complex)")
def sum_plus(z, w):
    return np.sum(z * z) + w


@aotc.export
def modulus(z: complex) -> float:
    return abs(z)


@aotc.export
def scalar_ops(a: c128, b: c128):
    return a / b, a.conjugate(), a.real, np.exp(a)


@aotc.export
def from_parts(re: f64[:], im: f64[:]) -> c128[:]:
    return re + 1j * im


@aotc.export
def conj_inplace(z: c64[:]) -> None:
    z.imag *= -1
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("complex"), PACKAGE, KERNELS)


@pytest.fixture(scope="module")
def k(project):
    with imported(project, PACKAGE) as module:
        yield module


Z = np.array([1 + 2j, -0.0 - 3j, complex(np.inf, 1.0), 4 - 0j])


@pytest.mark.parametrize("w", [1j, -2.5 + 0.5j, 3, 2.5, True, np.complex64(1 - 1j),
                               np.float32(0.5), np.int8(-2), np.array(1j)])
def test_complex_parameters_take_any_number(k, w):
    """A complex parameter takes bool, int, float and complex values, Python or NumPy."""
    with np.errstate(invalid="ignore"):  # inf * 0 in NumPy's product too
        assert_same(k.rotate(Z, w), Z * np.complex128(w))


def test_complex_results_are_numpy_complex_scalars(k):
    got = k.sum_plus(Z[:2].astype(np.complex64), 1j)
    assert type(got) is np.complex64
    assert_same(got, np.sum(Z[:2].astype(np.complex64) ** 2) + np.complex64(1j))
    got = k.sum_plus(Z[:2], 0.5)
    assert type(got) is np.complex128 and got == np.sum(Z[:2] * Z[:2]) + 0.5
    assert type(k.modulus(3 + 4j)) is np.float64 and k.modulus(3 + 4j) == 5.0
    assert k.modulus(-5) == 5.0


def test_complex_scalars_in_and_out(k):
    a, b = np.complex128(1.5 - 2j), np.complex128(-0.25 + 3j)
    got = k.scalar_ops(a, b)
    assert [type(v) for v in got] == [np.complex128, np.complex128, np.float64, np.complex128]
    assert_same(got[0], a / b)
    assert_same(got[1], np.conj(a))
    assert_same(got[2], a.real)
    assert_same(got[3], np.exp(a), 8)
    inf_nan = k.scalar_ops(np.complex128(1), np.complex128(0))[0]  # NumPy's inf + nanj
    assert np.isinf(inf_nan.real) and np.isnan(inf_nan.imag)
    with pytest.raises(ZeroDivisionError, match="complex division by zero"):
        k.scalar_ops(1 + 0j, 0j)  # Python's complex numbers: Python's error


def test_complex_arrays_in_out_and_written(k):
    with np.errstate(invalid="ignore"):  # 1j * inf is nan + inf j, in NumPy too
        want = np.array([1.0, -0.0]) + 1j * np.array([np.inf, -0.0])
    assert_same(k.from_parts(np.array([1.0, -0.0]), np.array([np.inf, -0.0])), want)
    z = Z.astype(np.complex64)
    k.conj_inplace(z[::-1])  # through a reversed view, as NumPy writes it
    assert_same(z, np.conj(Z.astype(np.complex64)))


def test_mismatched_complex_dtypes_are_type_errors(k):
    with pytest.raises(TypeError, match=r"rotate\(z: c128\[:\], w: c128\)"):
        k.rotate(Z.astype(np.complex64), 1j)
    with pytest.raises(TypeError, match="no signature matches"):
        k.rotate(Z, "1j")


def test_header_spells_c99_complex_types(project):
    header = (project / ".aotc-build" / PACKAGE / "kernels.h").read_text()
    assert "w: c128  (double _Complex)" in header
    assert "outv[0]  c64  (float _Complex elements)" in header


def test_stub_spells_complex(project):
    stub = (project / ".aotc-build" / PACKAGE / "kernels.pyi").read_text()
    assert "def rotate(z: NDArray[np.complex128], w: _Complex) -> NDArray[np.complex128]:" \
        in stub
    assert "def modulus(z: _Complex) -> np.float64:" in stub
    assert "-> np.complex64:" in stub


C_MAIN = r"""
#include <complex.h>
#include <stdio.h>
#include "kernels.h"

int main(void) {
    double _Complex z[2] = {1.0 + 2.0 * I, 3.0 - 1.0 * I}, w = 2.0 * I, out[2];
    int64_t shape[1] = {2}, strides[1] = {sizeof(double _Complex)}, dims[1], info[4];
    aotc_array a = {z, shape, strides};
    void *argv[2] = {&a, &w}, *outv[1] = {out};
    if (P_shapes(argv, dims, info) != 0 || P(argv, outv, dims, NULL, NULL) != 0) return 1;
    printf("%g %g %g %g\n", creal(out[0]), cimag(out[0]), creal(out[1]), cimag(out[1]));
    return 0;
}
"""


def test_object_links_from_c_with_c99_complex(project, tmp_path):
    prefix = abi.symbol_prefix(f"{PACKAGE}.kernels", "rotate", 0)
    words = run_c_caller(project / ".aotc-build" / PACKAGE, prefix, C_MAIN, tmp_path)
    assert words == ["-4", "2", "2", "6"]  # (1+2i)*2i, (3-i)*2i
