"""Structured control flow compiled: loops with scalar and array carries, carries that a
body swaps or returns as views, nested loops, branches and scans. Kernels are traced
with ``aotc.lax`` and compared with the reference interpreter (and NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

from aotc import f64, i64, lax
from aotc.codegen.jit import JitLibrary
from aotc.frontend import trace_kernel
from aotc.ir import AType, Eqn, Lit, Params, Program, Var
from aotc.ops.control import for_loop_p
from aotc.passes import optimize
from aotc.types import signature_from_annotations

from .data import check_call, layouts


def swap_carries(x: f64[5], y: f64[5], n: i64):
    """Array carries exchanged every iteration (staging), plus a scalar carry."""
    def body(i, state):
        a, b, t = state
        return b, a * 2.0, t + i
    return lax.fori_loop(0, n, body, (x, y, 0))


def reverse_carry(x: f64[:], n: i64):
    """The body returns a reversed view of its own carry (copied in place: staged)."""
    return lax.fori_loop(0, n, lambda i, v: v[::-1], x)


def view_of_carry(x: f64[4, 4], y: f64[4], n: i64):
    """Transposed and crossed views of the carries, and a carry passed through."""
    def body(i, state):
        a, b, c = state
        return a.T, c[::-1], b
    return lax.fori_loop(0, n, body, (x, y, y * 2))


def nested_fill(a: i64, b: i64):
    """Writes into a carried array from a nested loop."""
    def outer(i, out):
        def inner(j, out):
            out[i, j] = i * 10 + j
            return out
        return lax.fori_loop(0, b, inner, out)
    return lax.fori_loop(0, a, outer, np.zeros((a, b)))


def halve_until_small(x: f64[:]):
    """A while loop over an array carry and a counter."""
    def cond(state):
        v, k = state
        return (np.max(np.abs(v)) > 1.0) & (k < 60)

    def body(state):
        v, k = state
        return v / 2.0, k + 1
    return lax.while_loop(cond, body, (x, 0))


def branches(x: f64[:], k: i64):
    """A switch with array and scalar results; out-of-range indices clamp."""
    return lax.switch(k, [lambda v: (v + 1.0, np.sum(v)), lambda v: (v * v, np.max(v)),
                          lambda v: (v[::-1], v[0])], x)


def cumulative(xs: f64[:, :], reverse=False):
    """A scan over rows with an array carry and two stacked outputs."""
    def step(carry, row):
        new = carry + row
        return new, (new * 2.0, np.sum(row))
    final, (doubled, sums) = lax.scan(step, np.zeros(xs.shape[1]), xs, reverse=reverse)
    return final, doubled, sums


def cumulative_reverse(xs: f64[:, :]):
    return cumulative(xs, reverse=True)


KERNELS = [swap_carries, reverse_carry, view_of_carry, nested_fill, halve_until_small,
           branches, cumulative, cumulative_reverse]


def _program(fn) -> Program:
    traced = trace_kernel(fn, signature_from_annotations(fn))
    return optimize(traced.program, verify_each=True)


def stepped_loop(step: int) -> Program:
    """``for i in range(lo, hi, step): acc = acc * 3 + i`` (a step the tracer never makes)."""
    i64_t = AType(np.dtype(np.int64), ())
    i, acc, new = Var(i64_t), Var(i64_t), Var(i64_t)
    tmp = Var(i64_t)
    mul, add = (Primitive_named(n) for n in ("mul", "add"))
    body = Program((i, acc), (Eqn(mul, (acc, Lit(3, np.dtype(np.int64))), Params.of({}), (tmp,)),
                              Eqn(add, (tmp, i), Params.of({}), (new,))), (new,))
    lo, hi, out = Var(i64_t), Var(i64_t), Var(i64_t)
    loop = Eqn(for_loop_p, (lo, hi, Lit(1, np.dtype(np.int64))),
               Params.of({"body": body, "n_consts": 0, "step": step}), (out,))
    return Program((lo, hi), (loop,), (out,), name=f"step{step}")


def Primitive_named(name: str):  # noqa: N802
    from aotc.ops.core import ALL_PRIMITIVES

    return ALL_PRIMITIVES[name]


@pytest.fixture(scope="module")
def kernels():
    programs = {f.__name__: _program(f) for f in KERNELS}
    programs.update({f"step{s}": stepped_loop(s) for s in (1, 3, -1, -2)})
    library = JitLibrary(list(programs.values()))
    return dict(zip(programs, library.kernels, strict=True))


def _check(kernel, *args, rtol: float = 0.0):
    return check_call(kernel, *args, rtol=rtol)


def test_swapped_array_carries(kernels):
    x, y = np.arange(5.0), -np.arange(5.0)
    for n in (0, 1, 2, 5):
        for xl in layouts(x).values():
            got = _check(kernels["swap_carries"], xl, y, n)
            assert got[2] == n * (n - 1) // 2


def test_body_returning_a_view_of_its_carry(kernels):
    x, m = np.arange(6.0), np.arange(16.0).reshape(4, 4)
    for n in (0, 1, 2, 3, 7):
        for xl in layouts(x).values():
            got = _check(kernels["reverse_carry"], xl, n)
            np.testing.assert_array_equal(got[0], xl[::-1] if n % 2 else xl)
        for ml in layouts(m).values():
            got = _check(kernels["view_of_carry"], ml, x[:4], n)
            np.testing.assert_array_equal(got[0], ml.T if n % 2 else ml)


def test_nested_loops_writing_a_carried_array(kernels):
    for a, b in ((0, 3), (3, 0), (1, 1), (3, 4)):
        got = _check(kernels["nested_fill"], a, b)
        np.testing.assert_array_equal(got[0], np.add.outer(np.arange(a) * 10, np.arange(b)))


def test_while_loop_with_array_carry(kernels):
    for x in (np.array([0.5, -0.25]), np.array([100.0, -3.0, 7.0]), np.array([np.inf])):
        _check(kernels["halve_until_small"], x)


def test_switch_clamps_and_returns_arrays(kernels):
    x = np.array([3.0, -1.0, 2.0])
    for k in (-5, 0, 1, 2, 9):
        for xl in layouts(x).values():
            _check(kernels["branches"], xl, k)


@pytest.mark.parametrize("name", ["cumulative", "cumulative_reverse"])
def test_scan_stacks_outputs(kernels, name):
    for shape in ((4, 3), (1, 2), (0, 3), (3, 1)):
        xs = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) - 2
        for xl in layouts(xs).values():
            _check(kernels[name], xl)


@pytest.mark.parametrize("step", [1, 3, -1, -2])
def test_for_loop_steps(kernels, step):
    for lo, hi in ((0, 5), (5, 0), (2, 2), (-3, 4), (7, -4)):
        _check(kernels[f"step{step}"], lo, hi)
