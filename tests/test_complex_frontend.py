"""Complex numbers in the front end: signature names, NumPy 2's promotion rules, the parts
as views, the cast warning, and located build errors for what is refused.

Values are checked by the catalog (``numpy_cases_complex.py``); here only what tracing
decides: dtypes, which equations a kernel becomes, and the messages of the refusals.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from aotc import c64, c128, f32
from aotc.errors import AotcError
from aotc.tracing.kernel import trace_kernel
from aotc.types import ArrayType, annotation_to_type, parse_signature_string

C8, C16 = np.dtype("c8"), np.dtype("c16")


def _trace(fn, signature: str):
    return trace_kernel(fn, parse_signature_string(signature), name=fn.__name__)


def _out_dtypes(fn, signature: str) -> list[np.dtype]:
    return [o.type.dtype for o in _trace(fn, signature).program.outputs]


@pytest.mark.parametrize(("text", "dtype"), [("c8", C8), ("c16", C16), ("complex64", C8),
                                              ("complex128", C16), ("complex", C16)])
def test_signature_names(text, dtype):
    """Numba's c8/c16, NumPy's long names, Pythran's ``complex``; ours are c64/c128."""
    assert parse_signature_string(f"{text}[:]({text}, {text}[:, :])").params[0] == \
        ArrayType(dtype, weak=text == "complex")  # Python's complex is weak (NEP 50)
    assert annotation_to_type(complex) == ArrayType(C16, (), weak=True)
    assert c64.dtype == C8 and c128.dtype == C16


def test_nep50_promotion():
    """Python complex is weak: f32 + 1j is complex64, i64 + 1j complex128, and a complex
    NumPy scalar or array is strong."""
    def k(x, i, z):
        return (x + 1j, 1j * x, i + 1j, x + z, x * np.complex128(1j), x + (1 + 0j),
                np.float32(2) + 1j, z + 1.5)
    assert _out_dtypes(k, "(f4[:], i8[:], c8[:])") == [C8, C8, C16, C8, C16, C8, C8, C8]


def test_abs_angle_and_parts_are_real():
    def k(z):
        return np.abs(z), np.angle(z), z.real, np.imag(z), abs(z), np.abs(z) ** 2
    assert _out_dtypes(k, "(c8[:])") == [np.dtype("f4")] * 6


def test_parts_of_a_real_array():
    """``x.real`` is ``x`` itself (the same values, no conversion), ``x.imag`` zeros."""
    program = _trace(lambda x: (x.real, x.imag, np.real(x)), "(f8[:])").program
    assert program.outputs[0] is program.inputs[0] and program.outputs[2] is program.inputs[0]
    assert program.outputs[1].type.dtype == np.dtype("f8")


def test_writing_a_part_rebuilds_the_complex_value():
    """``z.imag += 1`` writes the new imaginary parts with the old real parts."""
    def k(z):
        z.imag += 1
        return z
    names = [e.prim.name for e in _trace(k, "(c16[:])").program.eqns]
    assert "imag" in names and "real" in names and "complex" in names


def test_complex_to_real_casts_warn_at_build_time():
    """NumPy's ComplexWarning, once, pointing at the cast."""
    def k(z, x):
        x[...] = z
        return z.astype(np.float32)
    with pytest.warns(np.exceptions.ComplexWarning) as record:
        _trace(k, "(c16[:], f8[:])")
    assert len(record) == 2
    assert all("test_complex_frontend.py" in str(w.message) for w in record)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _trace(lambda z: (z.astype(bool), z.astype(np.complex64), z.real.astype(np.float32)),
               "(c16[:])")


@pytest.mark.parametrize(("fn", "message"), [
    (lambda z: np.tan(z), "np.tan of complex values is not supported yet"),
    (lambda z: np.arcsin(z) + 1, "np.arcsin of complex values is not supported yet"),
    (lambda z: np.floor(z), r"np.floor is not defined for \(complex128\)"),
    (lambda z: np.nanmax(z), "np.nanmax of complex values is not supported yet"),
    (lambda z: np.histogram(z), "np.histogram of complex values is not supported"),
    (lambda z: np.interp(z.real, z.real, z), "np.interp with complex fp is not supported"),
    (lambda z: int(z[0]), "int\\(\\) of a complex value"),
    (lambda z: np.remainder(z, 2), r"np.remainder is not defined for \(complex128"),
])
def test_refusals_are_located_and_name_the_function(fn, message):
    with pytest.raises(AotcError, match=message) as info:
        _trace(fn, "(c16[:])")
    assert "test_complex_frontend.py" in str(info.value)


def test_math_module_refuses_complex():
    import math

    def k(z: c128):
        return math.sqrt(z)
    with pytest.raises(AotcError, match="math.sqrt: complex numbers are not supported"):
        trace_kernel(k, parse_signature_string("(c16)"), name="k")


def test_imag_of_a_real_array_cannot_be_set():
    def k(x):
        x.imag = 1.0
        return x
    with pytest.raises(AotcError, match="array does not have imaginary part to set"):
        _trace(k, "(f8[:])")


def test_f32_annotation_stays_real():
    def k(x: f32[:]):
        return x.real
    assert _out_dtypes(k, "(f4[:])") == [np.dtype("f4")]
