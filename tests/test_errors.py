"""Build errors: each names the kernel, the file:line, shows a caret, and gives a hint."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
from aotc import f64
from aotc.errors import SignatureError, TraceError
from aotc.frontend import trace_kernel
from aotc.types import parse_signature_string, signature_from_annotations


def _trace(fn):
    return trace_kernel(fn, signature_from_annotations(fn))


def _line_of(fn, needle: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if needle in text)


def test_python_if_on_a_traced_value():
    def relu_branch(x: f64[:]):
        if x[0] > 0:
            return x
        return -x

    with pytest.raises(TraceError) as info:
        _trace(relu_branch)
    text = str(info.value)
    assert f"test_errors.py:{_line_of(relu_branch, 'if x[0]')}" in text
    assert "in kernel 'relu_branch'" in text
    assert "        if x[0] > 0:" not in text and "    if x[0] > 0:" in text
    assert "^" in text and "hint: use np.where" in text
    assert "if statement containing return cannot depend on a runtime value" in text


def test_unsupported_function_names_closest_alternatives():
    def k(x: f64[:]):
        return np.amax(x) + np.cumulative_prod(x)

    with pytest.raises(TraceError) as info:
        _trace(k)
    text = str(info.value)
    assert "np.cumulative_prod is not supported" in text
    assert f":{_line_of(k, 'cumulative_prod')}:" in text
    assert "closest supported: np.cumprod" in text


def test_data_dependent_shapes_say_what_to_write_instead():
    def k(x: f64[:]):
        return np.nonzero(x > 0)

    with pytest.raises(TraceError) as info:
        _trace(k)
    text = str(info.value)
    assert "np.nonzero returns an array whose size depends on the data" in text
    assert "np.where(mask, x, fill)" in text

    def masked(x: f64[:]):
        return x[x > 0]

    with pytest.raises(TraceError, match="x\\[mask\\] has a size that depends on the data") as info:
        _trace(masked)
    assert f":{_line_of(masked, 'return x[x > 0]')}:" in str(info.value)


def test_large_array_constants_are_rejected_with_a_hint():
    table = np.arange(1000.0)

    def k(x: f64[1000]):
        return x * table

    with pytest.raises(TraceError, match="array constant of shape \\(1000,\\)") as info:
        _trace(k)
    assert "pass the array as a parameter" in str(info.value)


def test_small_array_constants_and_np_array_are_embedded():
    from aotc.interpret import eval_program

    weights = np.array([0.5, 2.0, -1.0])

    def k(x: f64[3], a: f64):
        return x * weights + np.array([a, 2 * a, 0.0]) + np.asarray(x)

    got = eval_program(_trace(k).program, np.arange(3.0), 1.5)[0]
    np.testing.assert_array_equal(got, np.arange(3.0) * weights + [1.5, 3.0, 0.0] +
                                  np.arange(3.0))


def test_writes_through_layout_dependent_views_are_rejected():
    def k(x: f64[:, :]):
        y = x.reshape(-1)
        y[0] = 1.0
        return x

    with pytest.raises(TraceError, match="writing through a reshape"):
        _trace(k)

    def stale(x: f64[:, :]):
        y = x.ravel()
        x[0, 0] = 5.0
        return y

    with pytest.raises(TraceError, match="depends on memory layout"):
        _trace(stale)


def test_inplace_ops_follow_same_kind_casting():
    def k(x: aotc.i64[:]):
        x += 1.5
        return x

    with pytest.raises(TraceError, match="same_kind"):
        _trace(k)


def test_declared_result_type_is_checked():
    def k(x: f64[:]) -> f64:
        return x * 2

    with pytest.raises(TraceError, match="result 0 is f64\\[x.0\\] but the signature declares f64"):
        _trace(k)


def test_malformed_signature_string_points_at_the_decorator():
    with pytest.raises(SignatureError) as info:
        @aotc.export("f8[:](f8[:], flaot64)")
        def k(x, y):
            return x

    text = str(info.value)
    assert "unknown type 'flaot64'" in text and "in kernel 'k'" in text
    assert "test_errors.py:" in text and "@aotc.export" in text


def test_missing_annotation_is_explained():
    with pytest.raises(SignatureError, match="parameter 'y' has no type"):
        @aotc.export
        def k(x: f64[:], y):
            return x


def test_static_broadcast_mismatch_is_a_build_error():
    def k(x: f64[3], y: f64[4]):
        return x + y

    with pytest.raises(TraceError, match="could not be broadcast"):
        _trace(k)


def test_static_index_out_of_bounds_is_a_build_error():
    with pytest.raises(TraceError, match="index 5 is out of bounds for axis 0 with size 3"):
        trace_kernel(lambda x: x[5], parse_signature_string("(f8[3])"))


def test_squeeze_without_axis_on_runtime_sizes():
    with pytest.raises(TraceError, match="np.squeeze without axis"):
        trace_kernel(lambda x: np.squeeze(x), parse_signature_string("(f8[:, :])"))


def test_integer_literal_out_of_range():
    with pytest.raises(TraceError, match="out of bounds for int8"):
        trace_kernel(lambda x: x + 300, parse_signature_string("(i1[:])"))


def test_build_time_constants_from_defaults():
    def k(x: f64[:], power=3):
        return x ** power

    program = _trace(k).program
    assert len(program.inputs) == 1
    assert "3.0:f64" in str(program)


def test_assigning_an_out_of_range_python_int_is_an_error_as_in_numpy():
    def k(x: aotc.i8[:]):
        x[0] = 300
        return x

    with pytest.raises(TraceError, match="Python integer 300 out of bounds for int8"):
        _trace(k)


@pytest.mark.parametrize("body, message", [
    (lambda x: np.outer(x, x, out=np.zeros((3, 3))), "np.outer: out= is not supported"),
    (lambda x: x.astype(np.int64, casting="safe"),
     "cannot cast array data from float64 to int64 according to the rule 'safe'"),
    (lambda x: np.concatenate((x, x.astype(np.float32)), dtype=np.float32, casting="no"),
     "np.concatenate: cannot cast array data from float64 to float32 according to the rule 'no'"),
    (lambda x: np.stack((x, x), dtype=np.int8, casting="same_kind"),
     "cannot cast array data from float64 to int8"),
    (lambda x: np.clip(x, 0, 1, dtype=np.float32), "np.clip: the argument(s) dtype"),
    (lambda x: np.sum(x, initial=1.0), "np.sum: the argument(s) initial"),
    (lambda x: np.dot(x, x, out=np.zeros(())), "np.dot: out= is not supported"),
])
def test_numpy_arguments_are_implemented_or_refused(body, message):
    """No keyword a kernel passes is silently ignored: NumPy's meaning, or an error."""
    with pytest.raises(TraceError) as info:
        trace_kernel(body, parse_signature_string("(f8[:])"), name="k")
    assert message in str(info.value)
    assert "test_errors.py:" in str(info.value)


def test_numpy_arguments_with_their_meaning():
    """The keywords that are accepted do what NumPy does with them."""
    from aotc.interpret import eval_program

    def kernel(x):
        return (np.array(x, ndmin=3), x.astype(np.float32, casting="same_kind"),
                np.concatenate((x, x), casting="equiv"), np.hstack((x, x), dtype=np.float32))

    x = np.array([1.5, -2.0, 3.25])
    traced = trace_kernel(kernel, parse_signature_string("(f8[:])"), name="k")
    got = eval_program(traced.program, x)
    want = kernel(x)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_numpy_random_is_a_located_error():
    """numpy.random under any name is refused at the call, not run on tracers (it once
    crashed the build) nor run at build time (its numbers would be constants)."""
    from numpy.random import randn

    def bound(x: f64[:]):
        return x + randn(x.shape[0])

    def constant(x: f64[:]):
        return x + np.random.default_rng(0).normal(size=3)

    def method(x: f64[:]):
        return x * np.random.rand()

    for fn in (bound, constant, method):
        with pytest.raises(TraceError) as info:
            _trace(fn)
        text = str(info.value)
        assert "numpy.random is not supported in kernels" in text
        assert "pass them in as an array argument" in text
        assert f"test_errors.py:{_line_of(fn, 'return')}" in text
