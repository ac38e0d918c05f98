"""Bounds on integers the kernel computes (aotc.value_bounds): the buffers of sizes bound
while the kernel runs are planned from them, so each must hold for every run and be
tight enough to plan. IR only; ``test_python_constructs.py`` runs such kernels."""

from __future__ import annotations

import numpy as np
import pytest

from aotc.errors import TraceError
from aotc.ir import Program, bound_uppers
from aotc.shapes import DimExpr, upper_bound
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


def traced(fn, signature: str) -> Program:
    return trace_kernel(fn, parse_signature_string(signature)).program


def output_upper(fn, signature: str) -> DimExpr:
    """The upper bound of the first output's size, which is bound while the kernel runs,
    in the sizes of the kernel's entry."""
    program = traced(fn, signature)
    uppers = bound_uppers(program)
    (dim,) = program.outputs[0].type.shape
    assert any(s in uppers for s in dim.symbols())
    found = upper_bound(dim, uppers)
    assert found is not None
    return found


def x0(**_: int) -> DimExpr:
    return DimExpr.sym("x.0")


def counted(x, t):
    count = 0
    for i in range(x.shape[0]):
        if x[i] > t:
            count += 1
    return np.empty(count)


def counted_in_nest(x):
    count = 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            count += x[i, j] > 0
    return np.zeros(count)


def capped(x, k):
    c = 0
    for _ in x:
        c = min(c + 2, k)
    return np.zeros(c)


def while_guarded(x):
    i = 0
    while i < x.shape[0] and x[i] < 0.5:
        i += 1
    return np.ones(i)


def while_counting(x):
    i = 0
    count = 0
    while i < x.shape[0]:
        if x[i] > 0:
            count += 1
        i += 1
    return np.empty(count)


def test_a_while_loop_stepping_towards_its_test_bounds_its_trip_count():
    assert output_upper(while_counting, "f8[:](f8[:])") == x0()


def index_length(x):
    out = 0.0
    for i in range(2, x.shape[0]):
        out += np.sum(np.arange(i - 1))
    return np.zeros(3) + out


def test_a_count_kept_in_a_loop_is_at_most_the_trip_count():
    assert output_upper(counted, "f8[:](f8[:], f8)") == x0()


def test_counts_in_a_loop_nest_multiply_the_trip_counts():
    upper = output_upper(counted_in_nest, "f8[:](f8[:, :])")
    env = {"x.0": 3, "x.1": 5}
    assert upper.evaluate(env) == 15


def test_a_minimum_with_an_argument_bounds_a_count_that_grows_without_bound():
    upper = output_upper(capped, "f8[:](f8[:], i8)")
    assert [upper.evaluate({"x.0": 4, "k": k}) for k in (-3, 0, 7)] == [0, 0, 7]


def test_a_while_loops_test_bounds_the_value_it_tests():
    assert output_upper(while_guarded, "f8[:](f8[:])") == x0()


def test_a_loop_index_bounds_a_length_made_from_it():
    program = traced(index_length, "f8[:](f8[:])")
    (upper,) = bound_uppers(program).values()  # of the length less its least value, 1
    assert [upper.evaluate({"x.0": n}) + 1 for n in (3, 4, 10)] == [1, 2, 8]


def unbounded(x):
    i = 0
    while x[0] > 0.5:  # nothing bounds how often this runs
        i += 1
        x = x * 0.5
    return np.ones(i)


def from_contents(x):
    return np.zeros(int(x[0] * 3))


@pytest.mark.parametrize("fn", [unbounded, from_contents])
def test_a_size_only_the_data_gives_is_computed_before_the_kernel(fn):
    """No bound, but the value comes from the arguments alone: the entry points compute
    it first (aotc.tracing.derived), and the array has exactly that size."""
    program = traced(fn, "f8[:](f8[:])")
    (dim,) = program.outputs[0].type.shape
    derived = {src.symbol for src in program.dim_sources if src.program is not None}
    assert dim.symbols() & derived


def inside_a_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.ones(int(x[i] * 3)).sum()  # a size each iteration computes from the data
    return s


def test_a_size_without_a_bound_is_a_located_error_saying_why():
    with pytest.raises(TraceError) as err:
        traced(inside_a_loop, "f8(f8[:])")
    text = str(err.value)
    assert "has no bound known before the kernel runs" in text
    assert "test_value_bounds.py" in text and "a loop index" in text


def falling(n, m):
    k = n
    for _ in range(m):
        k -= 1
    return np.zeros(k)


def test_a_count_that_only_falls_keeps_its_start_as_its_bound():
    upper = output_upper(falling, "f8[:](i8, i8)")
    assert [upper.evaluate({"n": n, "m": 3}) for n in (-4, 0, 9)] == [-4, 0, 9]  # < 0: raises
