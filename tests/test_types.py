"""Signature parsing: annotations and Numba-style strings give the same Signature."""

import numpy as np
import pytest

import aotc
from aotc import bool_, c64, c128, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64
from aotc.errors import SignatureError
from aotc.types import (
    ArrayType,
    Signature,
    annotation_to_type,
    parse_signature_string,
    parse_type_string,
    signature_from_annotations,
)

F8, F4, I8, B1 = (np.dtype(c) for c in ("f8", "f4", "i8", "?"))


# -- annotation objects ---------------------------------------------------------------------

@pytest.mark.parametrize("annotation, dtype", [
    (bool_, "?"), (i8, "i1"), (i16, "i2"), (i32, "i4"), (i64, "i8"),
    (u8, "u1"), (u16, "u2"), (u32, "u4"), (u64, "u8"),
    (f32, "f4"), (f64, "f8"), (c64, "c8"), (c128, "c16"),
])
def test_scalar_annotations(annotation, dtype):
    t = annotation_to_type(annotation)
    assert t == ArrayType(np.dtype(dtype)) and t.is_scalar and t.ndim == 0 and not t.weak


@pytest.mark.parametrize("annotation, dtype", [
    (float, "f8"), (int, "i8"), (bool, "?"), (complex, "c16"),
])
def test_python_scalar_annotations_are_weak(annotation, dtype):
    # Like a Python scalar in NumPy 2 (NEP 50): x_f32 * a stays float32.
    assert annotation_to_type(annotation) == ArrayType(np.dtype(dtype), (), weak=True)


@pytest.mark.parametrize("annotation, dims", [
    (f64[:], (None,)),
    (f32[:, :], (None, None)),
    (i64[:, 3], (None, 3)),
    (f64["n", "m"], ("n", "m")),
    (f64[::1], (None,)),          # Numba's contiguity marker: layout is not part of the type
    (f64[:, ::1], (None, None)),
    (f64[0], (0,)),
])
def test_array_annotations(annotation, dims):
    assert annotation.dims == dims and annotation.ndim == len(dims)


@pytest.mark.parametrize("make", [
    lambda: f64[-1], lambda: f64[True], lambda: f64[1.5], lambda: f64["not a name"],
    lambda: f64[1:2], lambda: f64[None],
])
def test_bad_dimensions(make):
    with pytest.raises(SignatureError):
        make()


def test_array_type_text():
    assert str(f64[:]) == "f64[:]"
    assert str(i64[:, 3]) == "i64[:, 3]"
    assert str(f32["n", "m"]) == "f32['n', 'm']"
    assert str(annotation_to_type(bool_)) == "bool_"


def test_signature_from_annotations():
    def k(x: f64["n"], y: i64[:, 3], a: float, flag: bool_, c=3) -> f64:  # noqa: F821
        pass

    sig = signature_from_annotations(k)
    assert sig.params == (f64["n"], i64[:, 3], ArrayType(F8, weak=True), ArrayType(B1))
    assert sig.results == (ArrayType(F8),) and not sig.returns_tuple


def test_tuple_and_missing_returns():
    def pair(x: f64[:]) -> (f64, f32[:]):
        pass

    def nothing(x: f64[:]):
        pass

    assert signature_from_annotations(pair) == Signature((f64[:],), (ArrayType(F8), f32[:]), True)
    assert signature_from_annotations(nothing).results is None


def test_string_annotations():
    def k(x: "f8[:, :]", n: "int64") -> "float32[:]":  # noqa: F821, UP037
        pass

    sig = signature_from_annotations(k)
    assert sig.params == (f64[:, :], ArrayType(I8)) and sig.results == (f32[:],)


@pytest.mark.parametrize("source, message", [
    ("def k(x): pass", "has no type"),
    ("def k(*x: f64): pass", "*args"),
    ("def k(**x: f64): pass", "*args"),
    ("def k(x: list): pass", "not a kernel type"),
    ("def k(x: np.float64): pass", "not a kernel type"),
])
def test_annotation_errors(source, message):
    namespace = {"f64": f64, "np": np}
    exec(source, namespace)
    with pytest.raises(SignatureError, match=message.replace("*", r"\*")):
        signature_from_annotations(namespace["k"])


# -- Numba-style strings ----------------------------------------------------------------------

@pytest.mark.parametrize("text, params, results, is_tuple", [
    ("f8[:](f8[:], f8)", (f64[:], ArrayType(F8)), (f64[:],), False),
    ("f4[:](f4[:], f4)", (f32[:], ArrayType(F4)), (f32[:],), False),
    ("f8[:,:](f8[:,:], i8)", (f64[:, :], ArrayType(I8)), (f64[:, :],), False),
    ("float64[:, :](float64[:, :], int64)", (f64[:, :], ArrayType(I8)), (f64[:, :],), False),
    ("f8[::1](f8[::1])", (f64[:],), (f64[:],), False),
    ("f8[:, ::1](f8[:, ::1])", (f64[:, :],), (f64[:, :],), False),
    ("f8[:, 3](i8[:, 3])", (i64[:, 3],), (f64[:, 3],), False),
    ("f8[n, m](f8[n], f8[m])", (f64["n"], f64["m"]), (f64["n", "m"],), False),
    ("void(f8[:])", (f64[:],), (), False),
    ("(f8, i8)(f8[:])", (f64[:],), (ArrayType(F8), ArrayType(I8)), True),
    ("(f8[:])", (f64[:],), None, False),
    ("b1(boolean, bool_)", (ArrayType(B1),) * 2, (ArrayType(B1),), False),
    ("f8(double, f8, single)", (ArrayType(F8), ArrayType(F8), ArrayType(F4)),
     (ArrayType(F8),), False),
    # Python's scalar types are weak in NumPy 2's promotion, as their annotations are
    ("float(float, int, complex, bool)",
     tuple(ArrayType(np.dtype(c), weak=True) for c in ("f8", "i8", "c16", "?")),
     (ArrayType(F8),), False),
    ("c16[:](c8[:], complex128)", (c64[:], ArrayType(np.dtype("c16"))), (c128[:],), False),
    ("u1[:](uint8[:], u8)", (u8[:], ArrayType(np.dtype("u8"))), (u8[:],), False),
    ("f64[:](f32[:])", (f32[:],), (f64[:],), False),  # aotc's own names work too
    ("  f8 ( f8 [ : ] )  ", (f64[:],), (ArrayType(F8),), False),
])
def test_signature_strings(text, params, results, is_tuple):
    sig = parse_signature_string(text)
    assert sig.params == params
    assert sig.results == results
    assert sig.returns_tuple == is_tuple


def test_numba_codes_are_numba_sizes():
    # In strings, "i8" is Numba's int64 (8 bytes); the annotation object aotc.i8 is int8.
    assert parse_type_string("i8").dtype == np.dtype("i8")
    assert aotc.i8.dtype == np.dtype("i1")


@pytest.mark.parametrize("text, message", [
    ("x8(f8)", "unknown type 'x8'"),
    ("f8(f8) junk", "unexpected 'junk'"),
    ("f8[3](f8[:]", "expected more"),
    ("f8[-1](f8)", "cannot read"),
    ("f8[:,](f8)", "bad dimension"),
    ("Tuple(f8, f8)(f8)", "tuple result"),
    ("f8(f8 f8)", "expected ','"),
    ("f8[:}(f8)", "cannot read"),
])
def test_signature_string_errors(text, message):
    with pytest.raises(SignatureError, match=message):
        parse_signature_string(text)


def test_signature_text_round_trips():
    for text in ["f64[:](f64[:], f64)", "(f64, i64)(f64[:])", "f32[:](f32[:], float, int)",
                 "void(f64[:])", "(f64[:])",
                 "f64['n', 'm'](f64['n'], f64['m'])"]:
        sig = parse_signature_string(text.replace("'", ""))
        assert parse_signature_string(str(sig).replace("'", "")) == sig


# -- @aotc.export --------------------------------------------------------------------------------

def test_export_keeps_the_function():
    @aotc.export
    def add(x: f64[:], y: f64[:]) -> f64[:]:
        """Doc."""
        return x + y

    x = np.arange(3.0)
    np.testing.assert_array_equal(add(x, x), 2 * x)
    assert add.__doc__ == "Doc."
    info = add.__aotc_export__
    assert info.signatures == (Signature((f64[:], f64[:]), (f64[:],)),)
    assert info.loc.line > 0 and "export" in info.loc.source_line()


def test_export_with_strings_keeps_sources():
    @aotc.export("f8[:](f8[:], f8)", "f4[:](f4[:], f4)")
    def scale(x, a):
        return a * x

    info = scale.__aotc_export__
    assert info.sources == ("f8[:](f8[:], f8)", "f4[:](f4[:], f4)")
    assert [s.params[0] for s in info.signatures] == [f64[:], f32[:]]


def test_export_errors_are_located():
    with pytest.raises(SignatureError) as err:
        @aotc.export("f8(q8)")
        def bad(x):
            return x
    assert err.value.kernel == "bad" and err.value.loc is not None
    assert "in kernel 'bad'" in str(err.value)
    with pytest.raises(SignatureError, match="signature strings"):
        aotc.export(3)


def test_weak_scalars_get_strong_twins_where_strength_changes_the_program():
    from aotc.packaging.weak_scalars import with_strong_twins
    from aotc.tracing.kernel import trace_kernel

    def kernel(x, a, k, flag):
        return x * a + k, flag

    def trace(sig):
        return str(trace_kernel(kernel, sig).program)

    sig = parse_signature_string("(f4[:], float, int, bool)")  # results not declared
    twins = with_strong_twins([sig], trace)
    # float and int change the program when strong (float32 * float64 is float64); bool
    # does not: three twins, one per combination, and no defer on the bool
    assert [[(p.weak, p.defers_wide) for p in t.params[1:]] for t in twins] == [
        [(True, True), (True, True), (True, False)],
        [(False, False), (True, True), (True, False)],
        [(True, True), (False, False), (True, False)],
        [(False, False), (False, False), (True, False)]]
    f8 = parse_signature_string("(f8[:], float, int, bool)")
    assert with_strong_twins([f8], trace) == [f8]  # float64 arrays: strength changes nothing
    declared = parse_signature_string("(f4[:], b1)(f4[:], float, int, bool)")
    assert with_strong_twins([declared], trace) == [declared]  # float32 results, as declared
