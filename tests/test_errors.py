"""Build errors: each names the kernel, the file:line, shows a caret, and gives a hint."""

from __future__ import annotations

import cmath
import math
import os
from typing import Any

import numpy as np
import pytest

import aotc
from aotc import c128, f64, i64
from aotc.errors import SignatureError, TraceError
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string, signature_from_annotations


def _trace(fn):
    return trace_kernel(fn, signature_from_annotations(fn))


def _line_of(fn, needle: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if needle in text)


def _located(kernel: Any, statement: str, *words: str) -> None:
    """Tracing ``kernel`` is a TraceError at the line of ``statement``, saying ``words``."""
    with pytest.raises(TraceError) as info:
        _trace(kernel)
    text = str(info.value)
    assert f"test_errors.py:{_line_of(kernel, statement)}" in text, text
    assert all(w in text for w in words), text


def test_paths_returning_different_types():
    def relu_branch(x: f64[:]):
        if x[0] > 0:
            return x
        return -x[0]

    _located(relu_branch, "return -x[0]", "in kernel 'relu_branch'",
             "the kernel returns values of different types: f64[x.0] vs f64[]",
             "    return -x[0]", "^", "hint: make every path")


def test_branches_giving_a_variable_different_types():
    def k(x: f64[:]):
        y = x
        if x[0] > 0:
            y = x[0]
        return y

    with pytest.raises(TraceError, match="the two branches of this if give variable 'y' "
                                         "different types: f64\\[x.0\\] vs f64\\[\\]"):
        _trace(k)


def test_a_list_or_a_bool_as_one_value_is_located():
    """``stack and k < n`` kept as a value is the list on one path, a bool on the other:
    no type has both (in a test, where only its truth is read, it compiles)."""
    def k(n: i64):
        stack = [1.0]
        count = 0
        while count < n:
            stack.pop()
            stack.append(2.0)
            going = stack and count < n
            if not going:
                break
            count += 1
        return count

    _located(k, "going = stack", "give different kinds of values: a list, set or dict "
             "grown at run time vs a number or an array", "bool(a) and b")


def test_a_handler_that_would_catch_a_runtime_error_is_located():
    """The compiled kernel raises an index out of bounds while it runs, where nothing
    catches it: ``except IndexError`` there would not run (Python's answer is -1.0), so
    it is a located error; a handler of other errors, or of build-time ones, compiles."""
    def caught(x: f64[:]):
        try:
            v = x[10]
        except IndexError:
            v = -1.0
        return v

    def other(x: f64[:]):
        try:
            v = x[10]
        except (KeyError, TypeError):
            v = -1.0
        return v

    def built(x: f64[:]):
        try:
            import a_module_that_is_missing  # noqa: F401
            scale = 1.0
        except ImportError:
            scale = 2.0
        return x[0] * scale

    _located(caught, "try:",
             "would catch IndexError('index ... is out of bounds for axis 0 with size ...')",
             "hint: test for the case before")
    for fn in (other, built):
        _trace(fn)


def test_a_list_grown_without_bound_used_as_an_array_is_located():
    """A list appended to in a while loop that also pops another list is a box, whose
    length is known only while the kernel runs: np.array of it is a located error saying
    so, with what to do instead (it had come back empty, the loop never running)."""
    def reversed_copy(x: f64[:]):
        stack = [v + 1.0 for v in x]
        popped = []
        while stack:
            popped.append(stack.pop())
        return np.array(popped) * 2.0

    _located(reversed_copy, "np.array(popped)",
             "a list grown while the kernel runs is used as an array",
             "hint: return it (a list comes back as an array)")


def test_a_ragged_list_of_lists_is_located():
    """A comprehension whose items are lists of lengths that differ from item to item
    has no array to be: a located error saying so (it was an internal error in code
    generation, which lost the lengths)."""
    def kept_per_row(x: f64[:, :]):
        return [[v for v in row if v > 0.2] for row in x]

    _located(kept_per_row, "[[v for v", "a ragged list of lists",
             "hint: build one flat list")


def test_views_a_branch_chooses_among_arrays_are_located():
    """A view of one of two arrays, or of one array at windows of different sizes, that
    a runtime branch chooses, or that a loop rebinds to a window of another size
    (cur = cur[1:]; or v = v[1:] where v started as an array another variable still
    holds): a write into it, or a read after its array was written, is a located error
    (the write was silently lost)."""
    def either_row(x: f64[:, :], k: i64):
        y = x.copy()
        if k == 0:
            r = y[0]
        elif k == 1:
            r = y[1]
        else:
            r = y[2:].sum(axis=0)
        r += 10.0
        return y

    def one_of_two(x: f64[:], c: bool):
        y = x.copy()
        z = x * 2
        v = y[1:] if c else z[1:]
        y[0] = 5.0
        return v.sum()

    def shrinking(x: f64[:], k: i64):
        y = x.copy()
        cur = y[1:]
        for _ in range(k):
            cur = cur[1:]
        cur[0] = -1.0
        return y

    def narrowed_alias(x: f64[:]):  # v starts as y itself, read after the loop
        y = x.copy()
        v = y
        while v.shape[0] > 2:
            v = v[1:]
        v[0] = 50.0
        return y

    def narrowed_argument(x: f64[:]):  # the caller holds x
        v = x
        while v.shape[0] > 2:
            v = v[1:]
        v[0] = 50.0
        return v

    for kernel, statement in ((either_row, "r += 10.0"), (one_of_two, "v.sum()"),
                              (shrinking, "cur[0] = -1.0"), (narrowed_alias, "v[0] = 50.0"),
                              (narrowed_argument, "v[0] = 50.0")):
        _located(kernel, statement, "a view that a runtime branch or loop chose",
                 "hint: write into the array itself")


def test_views_swapped_where_two_trips_do_not_repeat_are_located():
    """A loop that swaps views of one array and writes through them compiles two trips
    at a time (views_swapped_in_loops); a rotation of three views, or a swap in a while
    loop, does not repeat every two trips: a located error at the write, never the
    lost write it was."""
    def rotated(x: f64[:], n: i64):
        y = x.copy()
        a, b, c = y[0:2], y[2:4], y[4:6]
        for _ in range(n):
            a[0] = b[1] + c[0]
            a, b, c = b, c, a
        return y

    def swapped_while(x: f64[:, :], n: i64):
        y = x.copy()
        inp, out = y, y.T
        while n > 0:
            out[1:-1, 1:-1] = inp[:-2, 1:-1] * 0.5
            inp, out = out, inp
            n -= 1
        return y

    for kernel, statement in ((rotated, "a[0] = b[1] + c[0]"),
                              (swapped_while, "out[1:-1, 1:-1] = inp")):
        _located(kernel, statement, "rebinds to another view",
                 "hint: write through the array with an index the loop carries")


def test_loops_that_rebind_a_written_array_by_path_or_to_a_view_are_located():
    """A loop that writes an array and rebinds its name to a new array on every path
    compiles (names_of_one_array_in_loops: its first trip writes the array the name
    started as). Rebound on some paths only, or to a view of an outer array, which array
    the name is on a later trip is decided while the kernel runs: a located error at the
    rebinding, never the lost writes both were."""
    def by_path(y: f64[:], n: i64):
        b = y
        for t in range(n):
            b[0] += 1.0
            if t % 2 == 1:
                b = np.zeros(y.shape[0])

    def to_a_view(y: f64[:], n: i64):
        b = y.copy()
        for t in range(n):
            b[0] += t
            b = y[::-1]

    _located(by_path, "b = np.zeros(y.shape[0])", "rebinds it on some paths only",
             "hint: write into")
    _located(to_a_view, "b = y[::-1]", "makes it a view of an array from outside the loop",
             "hint: write into")


def test_writes_into_lists_of_views_grown_at_run_time_are_located():
    """A list of an array's rows that a runtime loop or comprehension builds is laid
    out as an array of its own: a write into its items (Python's reaches the array),
    once a silent loss, is a located error, as is a list of arrays of a size each trip
    decides (an internal error before)."""
    def appended(x: f64[:, :], n: i64):
        rows = []
        for i in range(x.shape[0]):
            rows.append(x[i])  # noqa: PERF401 - the loop is what is tested
        rows[n][0] = 5.0

    def comprehended(x: f64[:, :], n: i64):
        rows = [x[i] for i in range(x.shape[0])]
        for r in rows:
            r[1] = -2.0

    def ragged(x: f64[:], y: f64[:], n: i64):
        items = []
        for i in range(n):
            items.append(x if i % 2 == 0 else y)  # noqa: PERF401
        return len(items)

    _located(appended, "rows[n][0] = 5.0", "a view that a runtime branch or loop chose")
    _located(comprehended, "r[1] = -2.0", "a view that a runtime branch or loop chose")
    _located(ragged, "items.append(x if", "of a size the loop body decides")


def test_functions_chosen_that_read_the_paths_values_are_located():
    """A function a branch defines over values the kernel computed there, chosen by a
    runtime test: which values it reads would depend on the path."""
    def k(x: f64[:], c: bool):
        if c:
            s = x.sum()
            f = lambda v: v * s  # noqa: E731
        else:
            f = abs
        return f(x[0])

    _located(k, "f = abs", "a function chosen at run time reads values the kernel computes")


def test_outputs_numpy_refuses_are_located():
    """``out=`` of a dtype the result does not cast to by ``same_kind`` is NumPy's
    UFuncTypeError, and ``where=`` without ``out=`` leaves elements uninitialized: both
    are located errors when the kernel is built."""
    def into_ints(x: f64[:]):
        o = np.zeros(x.shape, np.int64)
        np.add(x, 1.0, out=o)
        return o

    def where_alone(x: f64[:]):
        return np.sqrt(x, where=x > 0)

    for kernel, statement, message in (
            (into_ints, "np.add(x, 1.0, out=o)", "cannot cast array data from float64 to "
             "int64 according to the rule 'same_kind'"),
            (where_alone, "return np.sqrt(x, where=x > 0)", "where= without out=")):
        _located(kernel, statement, message)


def test_arrays_no_index_can_count_are_located():
    """An array of more bytes than an index counts is NumPy's ValueError, found when the
    kernel is built (a fused np.zeros(2**61).sum() allocates nothing, and ran for
    centuries); np.full of an integer no dtype holds would be an array of objects."""
    def too_big(x: f64[:]):
        return np.zeros((2**31, 2**31)).sum() + x[0]

    def objects(x: f64[:]):
        return np.full(3, 2**64)

    for fn, needle, message in ((too_big, "np.zeros", "array is too big; `arr.size * "
                                 "arr.dtype.itemsize` is larger than the maximum possible"),
                                (objects, "np.full", "makes an array of Python objects")):
        _located(fn, needle, message)


def test_unsupported_function_names_closest_alternatives():
    def k(x: f64[:]):
        return np.amax(x) + np.array_equiv(x, x)

    with pytest.raises(TraceError) as info:
        _trace(k)
    text = str(info.value)
    assert "np.array_equiv is not supported" in text
    assert f":{_line_of(k, 'array_equiv')}:" in text
    assert "closest supported: np.array_equal" in text


def test_unique_rows_say_what_to_write_instead():
    def k(x: f64[:, :]):
        return np.unique(x, axis=0)

    with pytest.raises(TraceError) as info:
        _trace(k)
    text = str(info.value)
    assert "np.unique with axis= is not supported" in text
    assert f":{_line_of(k, 'return np.unique')}:" in text
    assert "hint: compare rows yourself" in text


def test_ordering_complex_values_is_refused_by_name():
    """np.sort and np.argsort order complex values (the catalog's complex_sorted); the
    statistics that sort them are refused by name."""
    def k(x: f64[:]):
        return np.median(x * 1j)

    with pytest.raises(TraceError) as info:
        _trace(k)
    text = str(info.value)
    assert "np.median of complex values is not supported" in text
    assert f":{_line_of(k, 'return np.median')}:" in text


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
    """A write through a reshape of a view (whose layout the call decides), or through
    broadcast_to (read-only in NumPy), is a located error; of an argument itself the
    call's layout decides (test_python_constructs)."""
    def k(x: f64[:, :]):
        y = x[1:].reshape(-1)
        y[0] = 1.0
        return x

    with pytest.raises(TraceError, match="writing through a reshape"):
        _trace(k)

    def stale(x: f64[:, :]):
        y = x[1:].ravel()
        x[1, 0] = 5.0
        return y

    with pytest.raises(TraceError, match="depends on memory layout"):
        _trace(stale)


def test_inplace_ops_follow_same_kind_casting():
    """``ints += 1.5`` is NumPy's TypeError where it runs: after the write before it,
    and not on a path that returns first (a build error refused the whole kernel)."""
    def k(x: aotc.i64[:]):
        x[0] = 7
        if x.shape[0] == 1:
            return x
        x += 1.5
        return x

    compiled = aotc.jit(aotc.export(k))
    one, two = np.array([3]), np.array([3, 4])
    assert compiled(one).tolist() == [7]
    with pytest.raises(TypeError, match=r"^Cannot cast ufunc 'add' output from "
                       r"dtype\('float64'\) to dtype\('int64'\) with casting rule 'same_kind'$"):
        compiled(two)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        k(np.array([3, 4]))  # (the same, from NumPy)
    assert two.tolist() == [7, 4]


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
    (lambda x: x.astype(np.int64, casting="safe"),
     "cannot cast array data from float64 to int64 according to the rule 'safe'"),
    (lambda x: np.concatenate((x, x.astype(np.float32)), dtype=np.float32, casting="no"),
     "np.concatenate: cannot cast array data from float64 to float32 according to the rule 'no'"),
    (lambda x: np.stack((x, x), dtype=np.int8, casting="same_kind"),
     "cannot cast array data from float64 to int8"),
    (lambda x: np.clip(x, 0, 1, dtype=np.float32), "np.clip: the argument(s) dtype"),
    (lambda x: np.sum(x, where=x > 0), "np.sum: the argument(s) where"),
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


def test_numpy_random_generator_objects_are_located_errors():
    """A Generator or RandomState object is refused at the call, not run at build time
    (its numbers would be constants); the np.random module functions compile
    (tests/test_random.py)."""
    state = np.random.RandomState(0)

    def constant(x: f64[:]):
        return x + np.random.default_rng(0).normal(size=3)

    def instance(x: f64[:]):
        return x * state.rand()

    for fn in (constant, instance):
        _located(fn, "return", "Generator and RandomState objects are not compiled",
                 "call the np.random module functions")


@pytest.mark.parametrize("body, message", [
    (lambda x: np.einsum("...i->i", x), "np.einsum with '...' (ellipsis) is not supported yet"),
    (lambda x: np.einsum("i->i", x, optimize=["einsum_path", (0,)]),
     "np.einsum: only optimize=False, True, 'greedy' or 'optimal' are supported"),
    (lambda x: np.einsum("ij->i", x),
     "einstein sum subscripts string contains too many subscripts for operand 0"),
    (lambda x: np.einsum("i->j", x),
     "einstein sum subscripts string included output subscript 'j' which never appeared"),
    (lambda x: np.einsum("i,i", x), "fewer operands provided to einstein sum function"),
    (lambda x: np.einsum("i,i", x, x, dtype=np.float32),
     "Iterator operand 0 dtype could not be cast from dtype('float64') to dtype('float32') "
     "according to the rule 'safe'"),
    (lambda x: np.interp(x, x, x, period=2.0), "np.interp with period= is not supported yet"),
    (lambda x: np.interp(x, x[None], x), "object too deep for desired array"),
    (lambda x: np.bincount(x[x > 0].astype(np.int64)), "np.bincount without minlength="),
    (lambda x: np.bincount(x, minlength=4),
     "Cannot cast array data from dtype('float64') to dtype('int64') according to the rule "
     "'safe'"),
    (lambda x: np.histogram(x, bins="auto"), "picks the number of bins from the data"),
    (lambda x: np.histogram(x, 3, range=(1.0, 0.0)),
     "max must be larger than min in range parameter."),
    (lambda x: np.histogram(x, 3, range=(0.0, np.inf)), "supplied range of [0.0, inf] is not "
                                                         "finite"),
    (lambda x: np.histogram(x, 0), "`bins` must be positive, when an integer"),
    (lambda x: np.histogram(x, 3, range=(1.0, 1.0 + 2e-16)),
     "Too many bins for data range. Cannot create 3 finite-sized bins."),
    (lambda x: np.histogram(x, x, weights=x), "np.histogram with bin edges and weights"),
    (lambda x: np.convolve(x, x, mode="middle"),
     "Use one of 'valid', 'same', or 'full' for convolve/correlate mode"),
    (lambda x: np.convolve(x[None], x), "object too deep for desired array"),
    (lambda x: np.searchsorted(x, 1.0, side="middle"),
     "search side must be 'left' or 'right' (got 'middle')"),
    (lambda x: np.searchsorted(x[None], 1.0), "object too deep for desired array"),
    (lambda x: np.cross(x[0], x), "At least one array has zero dimension"),
    (lambda x: np.round(x, x[0]), "np.round: decimals must be a build-time integer"),
    (lambda x: np.round(x, 1.5), "'float' object cannot be interpreted as an integer"),
    (lambda x: np.round(x > 0), "np.round of a bool array computes in float16"),
    (lambda x: np.round(x > 0, 2), "Cannot cast ufunc 'multiply' output from dtype('float64') "
                                   "to dtype('bool') with casting rule 'same_kind'"),
    (lambda x: np.copyto(x.astype(np.int32), x),
     "Cannot cast array data from dtype('float64') to dtype('int32') according to the rule "
     "'same_kind'"),
    (lambda x: np.copyto(x.astype(np.int32), 1.5),
     "Cannot cast scalar from dtype('float64') to dtype('int32') according to the rule "
     "'same_kind'"),
    (lambda x: np.copyto(x.astype(np.int8), 300), "Python integer 300 out of bounds for int8"),
    (lambda x: np.copyto(x, x, where=x.astype(np.int64)),
     "Cannot cast array data from dtype('int64') to dtype('bool') according to the rule 'safe'"),
    (lambda x: np.copyto(x, x, casting="nope"), "casting must be one of 'no', 'equiv'"),
    (lambda x: np.meshgrid(x, indexing="xx"), "Valid values for `indexing` are 'xy' and 'ij'."),
    (lambda x: np.triu(x[0]), "tri() missing 1 required positional argument: 'N'"),
    (lambda x: np.ptp(x > 0), "numpy boolean subtract, the `-` operator, is not supported"),
    (lambda x: np.polyval(x[0], x), "iteration over a 0-d array"),
    (lambda x: math.sqrt(x), "math.sqrt takes a number, not an array"),
    (lambda x: math.hypot(x[0], x[1], x[2]), "math.hypot takes 2 argument(s) (3 given)"),
])
def test_new_functions_refuse_with_located_errors(body, message):
    """Forms aotc cannot compile, and NumPy's own errors, at the line that calls them."""
    with pytest.raises(TraceError) as info:
        trace_kernel(body, parse_signature_string("(f8[:])"), name="k")
    assert message in str(info.value)
    assert "test_errors.py:" in str(info.value) and "in kernel 'k'" in str(info.value)


def test_build_time_sizes_give_numpys_errors_at_build_time():
    with pytest.raises(TraceError, match="a cannot be empty"):
        trace_kernel(lambda x, y: np.convolve(x, y), parse_signature_string("(f8[0], f8[3])"))
    with pytest.raises(TraceError, match="v cannot be empty"):
        trace_kernel(lambda x, y: np.convolve(x, y), parse_signature_string("(f8[2], f8[0])"))
    with pytest.raises(TraceError, match="incompatible dimensions for cross product"):
        trace_kernel(lambda a, b: np.cross(a, b), parse_signature_string("(f8[:, 4], f8[3])"))
    with pytest.raises(TraceError, match="axisc: axis 2 is out of bounds for array of dimension 2"):
        trace_kernel(lambda a: np.cross(a, a, axisc=2), parse_signature_string("(f8[:, 3])"))
    with pytest.raises(TraceError, match="array of sample points is empty"):
        trace_kernel(lambda x, p: np.interp(x, p, p), parse_signature_string("(f8[:], f8[0])"))
    with pytest.raises(TraceError, match="operands could not be broadcast together: subscript "
                                         "'j' has sizes 3 and 4"):
        trace_kernel(lambda a, b: np.einsum("ij,jk", a, b),
                     parse_signature_string("(f8[2, 3], f8[4, 5])"))


@pytest.mark.parametrize("body, sig, args, error, message", [
    (lambda x, y: np.convolve(x, y), "(f8[:], f8[:])", (np.zeros(0), np.ones(2)), "ValueError",
     "a cannot be empty"),
    (lambda x, y: np.convolve(x, y), "(f8[:], f8[:])", (np.ones(2), np.zeros(0)), "ValueError",
     "v cannot be empty"),
    (lambda i: np.bincount(i[i > 0], minlength=3), "(i8[:])", (np.array([0, 5]),),
     "ValueError", "np.bincount: a value is >= minlength; aotc needs the bins to fit in "
     "minlength"),
    (lambda i: np.bincount(i - 1), "(i8[:])", (np.array([3, 0]),), "ValueError",
     "'list' argument must have no negative elements"),
    (lambda a, m: a[m, 0], "(f8[:, :], b1[:])", (np.ones((4, 3)), np.ones(3, bool)),
     "IndexError", "boolean index did not match indexed array along axis 0; size of axis "
     "is 4 but size of corresponding boolean axis is 3"),
    (lambda i: np.bincount(i, minlength=3), "(i8[:])", (np.array([0, -1]),), "ValueError",
     "'list' argument must have no negative elements"),
    (lambda i, w: np.bincount(i, w, minlength=3), "(i8[:], f8[:])",
     (np.array([0, 1]), np.ones(3)), "ValueError",
     "The weights and list don't have the same length."),
    (lambda x, p, f: np.interp(x, p, f), "(f8[:], f8[:], f8[:])",
     (np.ones(2), np.zeros(0), np.zeros(0)), "ValueError", "array of sample points is empty"),
    (lambda x, p, f: np.interp(x, p, f), "(f8[:], f8[:], f8[:])",
     (np.ones(2), np.zeros(2), np.zeros(3)), "ValueError", "fp and xp are not of the same length."),
    (lambda x: np.histogram(x), "(f8[:])", (np.array([1.0, np.inf]),), "ValueError",
     "autodetected range of [min, max] is not finite"),
    (lambda x, lo, hi: np.histogram(x, 3, range=(lo, hi)), "(f8[:], f8, f8)",
     (np.ones(2), np.float64(1.0), np.float64(0.0)), "ValueError",
     "max must be larger than min in range parameter."),
    (lambda a, v, s: np.searchsorted(a, v, sorter=s), "(f8[:], f8[:], i8[:])",
     (np.ones(2), np.ones(1), np.arange(3)), "ValueError", "sorter.size must equal a.size"),
    (lambda a, b: np.cross(a, b), "(f8[:, :], f8[:, :])", (np.ones((2, 2)), np.ones((2, 2))),
     "ValueError", "np.cross: this kernel was compiled for vectors of length 3"),
    (lambda x, b: np.digitize(x, b), "(f8[:], f8[:])", (np.ones(2), np.array([1.0, 0.0, 2.0])),
     "ValueError", "bins must be monotonically increasing or decreasing"),
    (lambda x: x.item(), "(f8[:])", (np.ones(2),), "ValueError",
     "can only convert an array of size 1 to a Python scalar"),
    (lambda m: np.linalg.matrix_power(m, 2), "(f8[:, :])", (np.ones((2, 3)),), "ValueError",
     "Last 2 dimensions of the array must be square"),
    (lambda x: np.nanargmax(x), "(f8[:])", (np.array([np.nan, np.nan]),), "ValueError",
     "All-NaN slice encountered"),
    (lambda a, b: np.geomspace(a, b, 3), "(f8, f8)", (np.float64(0.0), np.float64(1.0)),
     "ValueError", "Geometric sequence cannot include zero"),
    (lambda m: np.cov(m), "(f8[:, :])", (np.ones((1, 4)),), "ValueError",
     "np.cov of one variable is a scalar in NumPy"),
    (lambda x, i: np.delete(x, i), "(f8[:], i8)", (np.ones(3), np.int64(3)), "IndexError",
     "index 3 is out of bounds for axis 0 with size 3"),
    (lambda x, i: np.insert(x, i, 1.0), "(f8[:], i8)", (np.ones(3), np.int64(-4)),
     "IndexError", "index -4 is out of bounds for axis 0 with size 3"),
    (lambda x, i: np.add.reduceat(x, i), "(f8[:], i8[:])", (np.ones(3), np.array([0, 3])),
     "IndexError", "index 3 out-of-bounds in add.reduceat [0, 3)"),
    (lambda x, i: np.put(x, i, 1.0), "(f8[:], i8[:])", (np.ones(3), np.array([-4])),
     "IndexError", "index -4 is out of bounds for axis 0 with size 3"),
    (lambda x, i: np.choose(i, [x, x]), "(f8[:], i8[:])", (np.ones(2), np.array([0, 2])),
     "ValueError", "invalid entry in choice array"),
])
def test_new_functions_runtime_errors_are_numpys(body, sig, args, error, message):
    """Conditions on runtime sizes or values raise NumPy's exception when the kernel runs."""
    from aotc.interpret import RuntimeCheckError, eval_program

    program = trace_kernel(body, parse_signature_string(sig), name="k").program
    with pytest.raises(RuntimeCheckError) as info:
        eval_program(program, *args)
    assert info.value.error == error
    assert message in str(info.value)
    if not message.startswith(("np.bincount", "np.cross", "np.cov")):  # aotc's own limits
        with pytest.raises({"ValueError": ValueError, "IndexError": IndexError}[error]):
            body(*args)  # NumPy itself raises the same


def test_unsupported_functions_suggest_ones_that_do_the_same_job():
    cases = {"sort_complex": "np.sort, np.argsort",
             "histogramdd": "np.histogram, np.bincount",
             "histogram_bin_edges": "np.histogram, np.linspace"}
    for name, expected in cases.items():
        fn = getattr(np, name)

        def k(x, fn=fn):
            return fn(x)

        with pytest.raises(TraceError) as info:
            trace_kernel(k, parse_signature_string("(f8[:])"), name="k")
        assert f"np.{name} is not supported" in str(info.value)
        assert f"closest supported: {expected};" in str(info.value)


def _countdown(n):
    if n <= 0:
        return 0
    return 1 + _countdown(n - 1)


def _halved(x, y):
    if x.shape[0] == 0:
        return 0.0
    return _halved(x[1:], y[1:]) + x[0] + y[0]


def test_recursion_on_two_views_of_one_array_is_a_located_error():
    """Recursion on arrays compiles (tests/test_recursion.py); on two views of one array
    it cannot (a write through one is seen through the other): refused at the call."""
    def k(x: aotc.f64[:]):
        return _halved(x, x)

    with pytest.raises(TraceError, match="'_halved' calls itself on two views of one "
                                         "array") as info:
        _trace(k)
    assert "return _halved(x[1:], y[1:]) + x[0] + y[0]" in str(info.value)

    def fixed(x: f64):
        return x * _countdown(5)  # recursion on build-time values runs while tracing

    assert _trace(fixed).program is not None


def test_a_list_of_numbers_changed_in_place_in_a_runtime_loop_is_an_array():
    """A list of numbers sorted and written by index in a runtime loop is an array
    (sets, and lists that grow or shrink, are boxes: tests/test_boxes.py)."""
    def sorts_a_list(x: f64[:], n: aotc.i64):
        table = [3.0, 1.0, 2.0]
        for _ in range(n):
            table.sort()
            table[0] = table[0] + x[0]
        return table[0]

    assert _trace(sorts_a_list).program is not None


def test_nonlocal_in_a_nested_function_is_a_located_error():
    def counts(x: f64[:]):
        count = 0

        def bump(v):
            nonlocal count
            if v > 0:
                count += 1
        for v in x:
            bump(v)
        return count

    with pytest.raises(TraceError, match="'nonlocal count': a function in a kernel") as info:
        _trace(counts)
    assert "nonlocal count" in str(info.value) and "^^^^" in str(info.value)


def test_print_is_left_out_with_a_warning_that_says_where():
    def noisy(x: f64[:]):
        s = x.sum()
        print("sum is", s)
        return s

    with pytest.warns(UserWarning, match=r"test_errors.py:\d+: print\(\) is left out"):
        assert _trace(noisy).program is not None


def test_math_functions_aotc_lacks_name_the_ones_it_has():
    def complex_tangent(z: c128):
        return cmath.tan(z) + 1.0

    with pytest.raises(TraceError, match=r"cmath\.tan of a value known only at run time is "
                                         r"not supported") as info:
        _trace(complex_tangent)
    assert "hint: aotc compiles these cmath functions: cos, cosh, exp" in str(info.value)


def test_functions_needing_general_eigenvalues_are_located_errors():
    """np.roots dispatches on the bare array (a tracer is not a sequence): a located
    message, not an internal error."""
    for fn in (np.roots, np.poly, np.linalg.eigvals):
        with pytest.raises(TraceError, match="eigenvalues of a general"):
            trace_kernel(lambda p, fn=fn: fn(p), parse_signature_string("(f8[:, :])"), name="k")


def test_clocks_and_entropy_are_located_errors():
    """datetime.now(), os.urandom(), np.load() and friends would run once, while the
    kernel is built: refused, not made constants or build-time writes (time.time() is
    read at run time instead)."""
    import datetime

    def clock(x: f64[:]):
        return x + datetime.datetime.now().second

    def entropy(x: f64[:]):
        return x + os.urandom(1)[0]

    def weights(x: f64[:]):  # a file read at build time: no internal FileNotFoundError
        return x * np.load("no such weights.npy")

    def log(x: f64[:]):
        np.savetxt("log.txt", x)
        return x

    for fn, where in ((clock, "return"), (entropy, "return"), (weights, "return"),
                      (log, "np.savetxt")):
        _located(fn, where, "would run once, while the kernel is built")
    assert not os.path.exists("log.txt")


def test_misspelled_numpy_names_suggest_the_right_one():
    def typo(x):
        return np.cumsun(x)

    def method_typo(x):
        return x.cumsun()

    for fn, hint in ((typo, "did you mean np.cumsum?"), (method_typo, "did you mean .cumsum?")):
        with pytest.raises(TraceError) as err:
            trace_kernel(fn, parse_signature_string("f8[:](f8[:])"))
        assert hint in str(err.value) and "cumsun" in str(err.value)


def test_a_builtin_walking_a_runtime_sequence_is_a_located_error_not_a_hang():
    """frozenset(range(n)) made Python walk the sequence item by item, forever: the index
    check of a runtime sequence runs only when the kernel does."""
    def k(n: i64):
        return len(frozenset(range(n)))

    with pytest.raises(TraceError, match="iterating a sequence whose length is only known "
                                         "at run time") as info:
        _trace(k)
    assert "frozenset(range(n))" in str(info.value)
