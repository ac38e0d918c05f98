"""The generated extension: one module with many kernels, built once for this file.

Checks what a caller sees: results equal NumPy's, overloads picked in order, argument
checking (TypeError listing the signatures, ValueError on shared dims), keywords,
docstrings, strided and odd inputs, and the header and stub written beside it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from projects import build_project, imported, run_c_caller

from aotc import abi

pytestmark = pytest.mark.usefixtures("c_compiler")  # fails, not skips, without one

PACKAGE = "aotc_wt"
KERNELS = '''
"""Kernels of the wrapper tests."""
import numpy as np

import aotc
from aotc import bool_, f32, f64, i32, i64, u8


@aotc.export
def add1(x: f64[:]) -> f64[:]:
    """Add one to every element.

    A second paragraph, kept verbatim.
    """
    return x + 1.0


@aotc.export("f8[:](f8[:], f8)", "f4[:](f4[:], f4)", "f8[:, :](f8[:, :], f8)")
def scale(x, a):
    return a * x


@aotc.export
def dot(x: f64["n"], y: f64["n"]) -> f64:
    return np.sum(x * y)


@aotc.export
def rowsum(x: i64[:, 3]):
    return np.sum(x, axis=1), np.mean(x)


@aotc.export
def shift(x: i32[:], k: i32) -> i32[:]:
    return x + k


@aotc.export
def invert(x: u8[:]) -> u8[:]:
    return 255 - x


@aotc.export
def ones(n: i64, value: float) -> f64[:]:
    return np.ones(n) * value


@aotc.export
def col_means(a: f32["n", "m"]) -> f32["m"]:
    return np.mean(a, axis=0)


@aotc.export
def count_pos(x: f64[:]) -> i64:
    return np.sum(x > 0)


@aotc.export
def choose(flag: bool_, x: f64[:], y: f64[:]) -> f64[:]:
    return np.where(flag, x, y)


@aotc.export
def lerp(a: f64["n"], b: f64["n"], t: f64, power=2):
    return a + (b - a) * t ** power


@aotc.export
def outer_sum(x: f64["n"], y: f64["m"]) -> f64["n", "m"]:
    return x[:, None] + y[None, :]


@aotc.export
def noop(x: f64[:]):
    np.sum(x)


@aotc.export
def ipow(x: i64[:], k: i64) -> i64[:]:
    return x ** k


@aotc.export
def bump(x: f64[:]) -> None:
    x += 1.0


@aotc.export
def double_rows(m: f64[:, :]) -> None:
    m *= 2.0


@aotc.export
def sorted_twice(x: f64[:]) -> f64[:]:
    return np.sort(x) * 2.0 + np.sort(-x)[::-1]


@aotc.export
def wrapper_names(args: f64[:], _arguments: f64, result: f64, values: f64[:]) -> f64[:]:
    """Parameters named like the wrapper's own locals."""
    return args * _arguments + values * result
'''

EXPORTS = ["add1", "scale", "dot", "rowsum", "shift", "invert", "ones", "col_means",
           "count_pos", "choose", "lerp", "outer_sum", "noop", "ipow", "bump", "double_rows",
           "sorted_twice", "wrapper_names"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project holding the kernels above, built in place with ``python -m aotc build``."""
    return build_project(tmp_path_factory.mktemp("wrapper"), PACKAGE, KERNELS)


@pytest.fixture(scope="module")
def k(project):
    with imported(project, PACKAGE) as module:
        yield module


RNG = np.random.default_rng(42)
X = RNG.standard_normal(7)
Y = RNG.standard_normal(7)


# -- results against NumPy --------------------------------------------------------------------

def test_module_holds_the_exports(k):
    assert k.__all__ == EXPORTS
    assert all(callable(getattr(k, name)) for name in EXPORTS)
    assert k.__doc__ == "Kernels of the wrapper tests."


def test_parameters_may_have_the_wrapper_names(k):
    x, y = np.arange(3.0), np.array([1.0, -1.0, 0.5])
    np.testing.assert_array_equal(k.wrapper_names(x, 2.0, 3.0, y), x * 2.0 + y * 3.0)
    got = k.wrapper_names(values=y, result=3.0, _arguments=2.0, args=x)
    np.testing.assert_array_equal(got, x * 2.0 + y * 3.0)


def test_results_match_numpy(k):
    a32 = RNG.standard_normal((4, 5)).astype(np.float32)
    ints = RNG.integers(-100, 100, size=(6, 3))
    i32 = np.arange(-3, 5, dtype=np.int32)
    u8 = np.array([0, 1, 254, 255], dtype=np.uint8)
    np.testing.assert_array_equal(k.add1(X), X + 1.0)
    np.testing.assert_array_equal(k.scale(X, 2.5), 2.5 * X)
    np.testing.assert_allclose(k.dot(X, Y), np.sum(X * Y), rtol=1e-12)
    sums, mean = k.rowsum(ints)
    np.testing.assert_array_equal(sums, np.sum(ints, axis=1))
    np.testing.assert_allclose(mean, np.mean(ints), rtol=1e-12)
    np.testing.assert_array_equal(k.shift(i32, 7), i32 + np.int32(7))
    np.testing.assert_array_equal(k.invert(u8), 255 - u8)
    np.testing.assert_array_equal(k.ones(4, 0.5), np.ones(4) * 0.5)
    np.testing.assert_allclose(k.col_means(a32), np.mean(a32, axis=0), rtol=1e-6)
    assert k.count_pos(X) == np.sum(X > 0)
    np.testing.assert_array_equal(k.choose(True, X, Y), X)
    np.testing.assert_array_equal(k.choose(False, X, Y), Y)
    np.testing.assert_allclose(k.lerp(X, Y, 0.5), X + (Y - X) * 0.25, rtol=1e-12)
    np.testing.assert_array_equal(k.outer_sum(X[:3], Y[:4]), X[:3, None] + Y[None, :4])


def test_result_types(k):
    out = k.add1(X)
    assert type(out) is np.ndarray and out.dtype == np.float64 and out.flags.c_contiguous
    assert out.flags.owndata and out.flags.writeable
    assert type(k.dot(X, Y)) is np.float64
    assert type(k.count_pos(X)) is np.int64
    sums, mean = k.rowsum(np.ones((2, 3), np.int64))
    assert sums.dtype == np.int64 and type(mean) is np.float64
    assert k.shift(np.arange(3, dtype=np.int32), 1).dtype == np.int32
    assert k.outer_sum(X[:2], Y[:3]).shape == (2, 3)


def test_no_result_is_none(k):
    assert k.noop(X) is None


def test_kernel_error_codes_become_exceptions(k):
    np.testing.assert_array_equal(k.ipow(np.arange(5), 3), np.arange(5) ** 3)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        k.ipow(np.arange(5), -1)


def test_overloads_are_tried_in_order(k):
    x32 = X.astype(np.float32)
    out = k.scale(x32, 2.5)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.float32(2.5) * x32)
    m = RNG.standard_normal((3, 4))
    np.testing.assert_array_equal(k.scale(m, -1.0), -m)


def test_empty_and_single_element(k):
    assert k.add1(np.empty(0)).shape == (0,)
    assert k.dot(np.empty(0), np.empty(0)) == 0.0
    np.testing.assert_array_equal(k.outer_sum(np.empty(0), Y[:3]), np.empty((0, 3)))
    np.testing.assert_array_equal(k.add1(np.array([2.0])), [3.0])
    assert k.ones(0, 1.0).shape == (0,)


def test_large_inputs_from_several_threads(k):
    """Large calls run without the GIL; several threads must still get their own results."""
    big = RNG.standard_normal(200_000)
    results = [None] * 4

    def work(i):
        results[i] = k.add1(big)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, big + 1.0)


def _sorted_twice(x):
    return np.sort(x) * 2.0 + np.sort(-x)[::-1]


def test_scratch_kept_between_calls_and_per_thread(k):
    """Each thread keeps its scratch for its next call: calls of growing and shrinking
    sizes, and threads running at once, each get their own right answer."""
    for n in (300_000, 10, 0, 1_000, 300_001, 50_000):
        x = RNG.standard_normal(n)
        np.testing.assert_array_equal(k.sorted_twice(x), _sorted_twice(x))
    inputs = [RNG.standard_normal(n) for n in (400_000, 200_000, 300_000, 100_000)]
    results = [None] * len(inputs)

    def work(i):
        for _ in range(3):
            results[i] = k.sorted_twice(inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, r in zip(inputs, results, strict=True):
        np.testing.assert_array_equal(r, _sorted_twice(x))


# -- strides and odd arrays -------------------------------------------------------------------

def test_non_contiguous_inputs(k):
    m = RNG.standard_normal((6, 8))
    np.testing.assert_array_equal(k.add1(X[::2]), X[::2] + 1.0)
    np.testing.assert_array_equal(k.add1(X[::-1]), X[::-1] + 1.0)
    np.testing.assert_array_equal(k.add1(m[:, 3]), m[:, 3] + 1.0)
    np.testing.assert_array_equal(k.scale(m.T, 2.0), 2.0 * m.T)
    np.testing.assert_array_equal(k.scale(m[::2, ::-3], 2.0), 2.0 * m[::2, ::-3])
    np.testing.assert_array_equal(k.scale(np.asfortranarray(m), 3.0), 3.0 * m)
    a = RNG.standard_normal((5, 9)).astype(np.float32)[:, ::2]
    np.testing.assert_allclose(k.col_means(a), np.mean(a, axis=0), rtol=1e-6)
    b = np.broadcast_to(np.float64(3.0), (5,))  # stride 0, read-only
    np.testing.assert_array_equal(k.add1(b), np.full(5, 4.0))


def test_byte_swapped_and_unaligned_inputs(k):
    swapped = X.astype(">f8")
    np.testing.assert_array_equal(k.add1(swapped), X + 1.0)
    raw = np.zeros(8 * 7 + 1, np.uint8)[1:].view(np.float64)
    raw[:] = X
    assert not raw.flags.aligned
    np.testing.assert_array_equal(k.add1(raw), X + 1.0)


def test_longlong_arrays_match_int64(k):
    ints = np.ones((2, 3), dtype=np.longlong)
    sums, _ = k.rowsum(ints)
    np.testing.assert_array_equal(sums, [3, 3])


# -- scalars ----------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [2, 2.0, True, np.float32(2), np.int8(2), np.uint64(2),
                                   np.float64(2), np.array(2.0), np.bool_(True)])
def test_float_parameters_accept_bool_int_and_float(k, value):
    np.testing.assert_array_equal(k.scale(X, value), float(value) * X)


@pytest.mark.parametrize("value", [3, np.int64(3), np.uint8(3), np.array(3), True])
def test_int_parameters_accept_integers(k, value):
    x = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(k.shift(x, value), x + np.int32(int(value)))


@pytest.mark.parametrize("value", [2.0, np.float32(2), 1j, "2", None, [2]])
def test_int_parameters_reject_other_kinds(k, value):
    with pytest.raises(TypeError, match="no signature matches"):
        k.shift(np.arange(4, dtype=np.int32), value)


def test_scalar_overflow(k):
    with pytest.raises(OverflowError):
        k.shift(np.arange(4, dtype=np.int32), 2**40)


def test_bool_parameters_take_only_bools(k):
    np.testing.assert_array_equal(k.choose(np.True_, X, Y), X)
    np.testing.assert_array_equal(k.choose(np.array(False), X, Y), Y)
    for value in (1, 0.0, None):
        with pytest.raises(TypeError, match="choose"):
            k.choose(value, X, Y)


def test_complex_value_for_float_parameter_is_rejected(k):
    with pytest.raises(TypeError, match="a: complex"):
        k.scale(X, 1j)


# -- argument errors --------------------------------------------------------------------------

def test_type_error_lists_every_signature_and_what_was_passed(k):
    with pytest.raises(TypeError) as err:
        k.scale(np.arange(3), 2.0)
    assert str(err.value) == textwrap.dedent("""\
        scale(): no signature matches the arguments
        accepted:
            scale(x: f64[:], a: f64) -> f64[:]
            scale(x: f32[:], a: f32) -> f32[:]
            scale(x: f64[:, :], a: f64) -> f64[:, :]
        got:
            scale(x: i64[:] array of shape (3,), a: float)""")


def test_type_error_shows_declared_and_python_types(k):
    with pytest.raises(TypeError) as err:
        k.ones(2.5, 1.0)
    assert "ones(n: i64, value: float) -> f64[:]" in str(err.value)
    assert "ones(n: float, value: float)" in str(err.value)
    with pytest.raises(TypeError) as err:
        k.rowsum(np.zeros((2, 4), np.int64))
    assert "rowsum(x: i64[:, 3]) -> (i64[:], f64)" in str(err.value)
    assert "i64[:, :] array of shape (2, 4)" in str(err.value)


def test_lists_are_taken_for_arrays_the_kernel_only_reads(k):
    """As NumPy's functions take them: the array np.asarray makes, cast 'same_kind'."""
    np.testing.assert_array_equal(k.add1([1.0, 2.0]), [2.0, 3.0])
    np.testing.assert_array_equal(k.add1((1, 2)), [2.0, 3.0])
    np.testing.assert_array_equal(k.add1(range(1, 4)), [2.0, 3.0, 4.0])  # as np.asarray
    with pytest.raises(TypeError, match=r"add1\(\): no signature matches"):
        k.add1([[1.0], [2.0]])  # a list of another rank is still no match


def test_lists_the_kernel_writes_get_the_writes(k):
    """As Numba's reflected lists: the array made of the list is written, then its items
    go back into the list (nested lists row by row); a tuple cannot change: no match."""
    values = [1.0, 2.0, 3.0]
    assert k.bump(values) is None
    assert values == [2.0, 3.0, 4.0] and all(type(v) is float for v in values)
    ints = [1, 2]  # cast 'same_kind' to float64, as the kernel computes floats
    k.bump(ints)
    assert ints == [2.0, 3.0]
    rows = [[1.0, 2.0], [3.0, 4.0]]
    k.double_rows(rows)
    assert rows == [[2.0, 4.0], [6.0, 8.0]]
    with pytest.raises(TypeError, match=r"bump\(\): no signature matches"):
        k.bump((1.0, 2.0))
    kept = [[1.0], [2.0, 3.0]]  # ragged: NumPy makes no 2-D array of it, nothing written
    with pytest.raises(TypeError, match=r"double_rows\(\): no signature matches"):
        k.double_rows(kept)
    assert kept == [[1.0], [2.0, 3.0]]


@pytest.mark.parametrize("args", [
    (None,), ("abc",), (3.0,), (np.float64(1.0),), (np.array(1.0),),
    (np.zeros((2, 2)),), (np.zeros(3, np.float32),), (np.array([1, "a"], dtype=object),),
    (np.zeros(3, dtype="U3"),), (np.zeros(3, dtype=[("a", "f8")]),),
])
def test_garbage_is_a_type_error_not_a_crash(k, args):
    with pytest.raises(TypeError, match=r"add1\(\): no signature matches"):
        k.add1(*args)


def test_subclasses_are_refused_with_what_to_pass(k):
    """A masked array or matrix would lose its meaning: refused, saying what to pass."""
    with pytest.raises(TypeError, match=r"add1\(\): parameter 'x' is a numpy.ma.*MaskedArray"):
        k.add1(np.ma.zeros(3))
    with pytest.raises(TypeError, match=r"np\.asarray\(x\)"):
        k.scale(np.matrix([[1.0, 2.0]]), 2.0)


def test_wrong_argument_count_and_keywords(k):
    with pytest.raises(TypeError):
        k.add1()
    with pytest.raises(TypeError):
        k.add1(X, X)
    with pytest.raises(TypeError):
        k.add1(y=X)
    with pytest.raises(TypeError):
        k.lerp(X, Y, 0.5, 3)  # 'power' is a build-time constant, not a parameter


def test_keyword_arguments(k):
    np.testing.assert_array_equal(k.scale(a=2.0, x=X), 2.0 * X)
    np.testing.assert_array_equal(k.scale(X, a=2.0), 2.0 * X)
    np.testing.assert_allclose(k.lerp(b=Y, t=0.5, a=X), X + (Y - X) * 0.25)


def test_shared_named_dims_are_checked(k):
    with pytest.raises(ValueError, match="'y' axis 0 has size 3 but 'n' is 7"):
        k.dot(X, Y[:3])
    with pytest.raises(ValueError):
        k.lerp(X, Y[:4], 0.5)
    k.outer_sum(X, Y[:2])  # different names: no check


# -- Python face: docstrings, signatures ------------------------------------------------------

def test_docstrings_and_signatures(k):
    import inspect

    assert k.add1.__doc__ == ("Add one to every element.\n\n"
                              "    A second paragraph, kept verbatim.\n    ")
    assert k.scale.__doc__ is None
    assert k.add1.__name__ == "add1"
    assert list(inspect.signature(k.lerp).parameters) == ["a", "b", "t"]


# -- header, stub, object ---------------------------------------------------------------------

def test_pyi_stub(project):
    stub = (project / PACKAGE / "kernels.pyi").read_text()
    ast.parse(stub)
    assert "from numpy.typing import NDArray" in stub
    assert "def add1(x: NDArray[np.float64]) -> NDArray[np.float64]:" in stub
    assert "Add one to every element." in stub
    assert stub.count("@overload") == 2  # f64 1-D and 2-D look the same as NDArray
    assert "def scale(x: NDArray[np.float32], a: _Float) -> NDArray[np.float32]:" in stub
    assert "def dot(x: NDArray[np.float64], y: NDArray[np.float64]) -> np.float64:" in stub
    assert "def rowsum(x: NDArray[np.int64]) -> tuple[NDArray[np.int64], np.float64]:" in stub
    assert "def shift(x: NDArray[np.int32], k: _Int) -> NDArray[np.int32]:" in stub
    assert "def choose(flag: _Bool, x: NDArray[np.float64]" in stub
    assert f"__all__ = {EXPORTS!r}" in stub


def test_stub_takes_numpy_scalars_under_mypy(project, tmp_path):
    """A float32 kernel's scalar takes np.float32 and a Python float for mypy, as the
    call does (NumPy's float32 is no subclass of float: 'No overload variant matches')."""
    (tmp_path / "check.py").write_text(textwrap.dedent(f"""
        import numpy as np
        from {PACKAGE}.kernels import scale, shift

        x = np.zeros(3, dtype=np.float32)
        scale(x, np.float32(2)); scale(x, 2.0); scale(x, 2); scale(x, np.int8(1))
        shift(np.zeros(3, dtype=np.int32), np.int64(1))
    """))
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental",
                           "--ignore-missing-imports", str(tmp_path / "check.py")],
                          cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (tmp_path / "wrong.py").write_text(f"from {PACKAGE}.kernels import shift\n"
                                       "import numpy as np\n"
                                       "shift(np.zeros(3, dtype=np.int32), 1.5)\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental",
                           str(tmp_path / "wrong.py")], cwd=project, capture_output=True,
                          text=True)
    assert done.returncode == 1 and "shift" in done.stdout  # a float for an int is refused


def test_build_dir_contents(project):
    out = project / ".aotc-build" / PACKAGE
    assert {p.name for p in out.iterdir()} >= {"kernels.pyx", "kernels.h", "kernels.c",
                                               "_aotc_kernels.o", "kernels.pyi"}
    pyx = (out / "kernels.pyx").read_text()
    assert "import aotc" not in pyx and "llvmlite" not in pyx
    assert str(project) not in pyx + (out / "kernels.h").read_text()


def test_header_declares_every_entry_point(project):
    header = (project / ".aotc-build" / PACKAGE / "kernels.h").read_text()
    assert "typedef struct {" in header and "} aotc_array;" in header
    for name, count in [("add1", 1), ("scale", 3), ("dot", 1), ("outer_sum", 1)]:
        for n in range(count):
            prefix = abi.symbol_prefix(f"{PACKAGE}.kernels", name, n)
            assert f"int64_t {prefix}_shapes(void *const *argv" in header
            assert f"int64_t {prefix}(void *const *argv, void *const *outv" in header
    assert "check 1: " in header and "ValueError" in header


C_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

int main(void) {
    double x[4] = {1.0, 2.0, 3.0, 4.0}, y[4] = {0.5, 0.5, 0.5, 0.5}, out;
    int64_t shape[1] = {4}, strides[1] = {sizeof(double)}, short_shape[1] = {3};
    int64_t dims[1], info[4];
    aotc_array a = {x, shape, strides}, b = {y, shape, strides}, c = {y, short_shape, strides};
    void *argv[2] = {&a, &b}, *outv[1] = {&out};
    if (P_shapes(argv, dims, info) != 0) return 1;
    void *scratch = info[0] ? aligned_alloc(AOTC_SCRATCH_ALIGN, (info[0] + 63) / 64 * 64) : NULL;
    if (P(argv, outv, dims, scratch, NULL) != 0) return 2;
    free(scratch);
    argv[1] = &c;
    int64_t failed = P_shapes(argv, dims, info);
    printf("%g %lld %lld %lld\n", out, (long long)failed, (long long)info[1],
           (long long)info[2]);
    return 0;
}
"""


def test_object_links_from_c(project, tmp_path):
    prefix = abi.symbol_prefix(f"{PACKAGE}.kernels", "dot", 0)
    words = run_c_caller(project / ".aotc-build" / PACKAGE, prefix, C_MAIN, tmp_path)
    assert words == ["5", "1", "3", "4"]


def test_extension_imports_without_aotc(project):
    code = ("import sys\n"
            "for name in ('aotc', 'llvmlite', 'Cython'): sys.modules[name] = None\n"
            f"import {PACKAGE}.kernels as k, numpy as np\n"
            "print(k.add1(np.zeros(2)).tolist())\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1.0, 1.0]"


# -- rendering alone (no compiler) ------------------------------------------------------------

def _function(source: str, name: str):
    """A wrapper.Function traced from kernel source, as the build makes it."""
    from aotc.packaging import wrapper
    from aotc.tracing.kernel import trace_kernel

    namespace: dict = {}
    exec("import numpy as np\nimport aotc\nfrom aotc import f64, i64\n" + source, namespace)
    fn = namespace[name]
    overloads = []
    for n, sig in enumerate(fn.__aotc_export__.signatures):
        traced = trace_kernel(fn, sig, name=name)
        overloads.append(wrapper.Overload(abi.symbol_prefix("m", name, n), traced.signature,
                                          traced.program, traced.result_kind))
    return wrapper.Function(name, traced.param_names, fn.__doc__, tuple(overloads))


def _render(*functions):
    from aotc.codegen import TargetSpec
    from aotc.packaging import wrapper
    from aotc.packaging.objects import make_targets

    targets = make_targets(["x86-64-v2", "x86-64-v3"],
                           [TargetSpec("x86-64-v2"), TargetSpec("x86-64-v3")])
    return wrapper.render_module("pkg.m", functions, source="pkg/m.py", header="m.h",
                                 object_name="_aotc_m.o", doc="Doc.", targets=targets)


def test_render_is_deterministic_and_path_free():
    fn = _function("@aotc.export\ndef dot(x: f64['n'], y: f64['n']) -> f64:\n"
                   "    return np.sum(x * y)\n", "dot")
    first, second = _render(fn), _render(fn)
    assert first == second
    # The size check's message, in the call tables the module runs at import.
    tables = first.pyx.split('exec(compile(')[1].split(', "<aotc call tables>"')[0]
    assert "_CHECKS = (\n    ((ValueError, \"parameter 'y' axis 0" in ast.literal_eval(tables)
    assert "/tmp" not in first.pyx + first.header + first.pyi
    assert "#ifndef AOTC_PKG_M_H" in first.header


def test_render_rejects_unknown_check_errors():
    import dataclasses

    from aotc.errors import BuildError

    fn = _function("@aotc.export\ndef dot(x: f64['n'], y: f64['n']) -> f64:\n"
                   "    return np.sum(x * y)\n", "dot")
    (ov,) = fn.overloads
    check = dataclasses.replace(ov.program.checks[0], error="print")
    bad = dataclasses.replace(ov, program=ov.program.replace(checks=(check,)))
    with pytest.raises(BuildError, match="'print' is not a builtin exception"):
        _render(dataclasses.replace(fn, overloads=(bad,)))


def test_render_rejects_overloads_with_other_parameters():
    import dataclasses

    from aotc.errors import BuildError

    fn = _function("@aotc.export\ndef inc(x: f64[:]) -> f64[:]:\n    return x + 1\n", "inc")
    with pytest.raises(BuildError, match="1 parameters but the function takes 0"):
        _render(dataclasses.replace(fn, param_names=()))


def test_render_rejects_parameter_names_cython_cannot_take():
    from aotc.errors import BuildError

    fn = _function("@aotc.export\ndef inc(double: f64[:]) -> f64[:]:\n    return double + 1\n",
                   "inc")
    with pytest.raises(BuildError, match="parameter 'double' cannot be a parameter name"):
        _render(fn)


def test_module_holds_exactly_the_exported_functions(k):
    public = {n for n in dir(k) if not n.startswith("_")}
    assert "np" not in public and "cnp" not in public
    assert all(callable(getattr(k, n)) for n in public)


def test_private_kernel_names_are_exported_unless_the_module_uses_them():
    # SciPy's Pythran kernels are private (_lombscargle, _Aij): they export as they are
    # (tests/test_python_constructs.py builds two); a name the module's own code uses
    # would replace it, and is refused with a located message.
    from aotc.packaging.wrapper import _private_template_names

    names = _private_template_names()
    assert {"_dispatch", "_arguments", "_choose_target", "_LOOP_SPEC"} <= names
    assert not {"_Aij", "_lombscargle", "_funm_loops", "_helper"} & names
