"""Structured control flow (aotc.lax, JAX's signatures) traced and interpreted."""

from __future__ import annotations

import numpy as np
import pytest

from aotc import f64, i64, lax
from aotc.errors import TraceError
from aotc.interpret import eval_program
from aotc.ir import verify
from aotc.passes import optimize
from aotc.passes.loop_versioning import top_loops
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations


def run(fn, *args):
    program = trace_kernel(fn, signature_from_annotations(fn)).program
    verify(program)
    program = optimize(program, verify_each=True)
    return program, eval_program(program, *args)


def test_fori_loop_recurrence_with_captured_array():
    def ema(x: f64[:], alpha: float):
        def body(i, acc):
            return acc * (1 - alpha) + alpha * x[i]
        return lax.fori_loop(0, x.shape[0], body, 0.0)

    x = np.linspace(0, 1, 17)
    program, (got,) = run(ema, x, 0.3)
    expected = 0.0
    for v in x:
        expected = expected * 0.7 + 0.3 * v
    assert got == pytest.approx(expected, rel=1e-15)
    assert len(top_loops(program)) == 1


def test_fori_loop_tuple_state_and_writes_into_carried_array():
    def prefix(x: f64[:]):
        def body(i, state):
            total, out = state
            total = total + x[i]
            out[i] = total
            return total, out
        return lax.fori_loop(0, x.shape[0], body, (0.0, np.zeros(x.shape[0])))

    x = np.arange(1.0, 6.0)
    _, (total, out) = run(prefix, x)
    assert total == 15.0
    np.testing.assert_array_equal(out, np.cumsum(x))


def test_while_loop_newton_sqrt():
    def newton(a: f64):
        def cond(state):
            x, it = state
            return (np.abs(x * x - a) > 1e-12) & (it < 100)

        def body(state):
            x, it = state
            return 0.5 * (x + a / x), it + 1
        return lax.while_loop(cond, body, (a, 0))

    _, (root, iterations) = run(newton, 2.0)
    assert root == pytest.approx(np.sqrt(2.0), rel=1e-15)
    assert 3 <= iterations < 10


def test_cond_selects_branch_at_run_time():
    def k(x: f64[:], flag: i64):
        return lax.cond(flag > 0, lambda v: v * 2, lambda v: v - 1, x)

    x = np.arange(3.0)
    np.testing.assert_array_equal(run(k, x, 1)[1][0], x * 2)
    np.testing.assert_array_equal(run(k, x, 0)[1][0], x - 1)


def test_scan_cumulative_sum_with_stacked_outputs():
    def k(x: f64[:]):
        def step(carry, v):
            carry = carry + v
            return carry, carry * 2
        return lax.scan(step, 0.0, x)

    x = np.arange(1.0, 5.0)
    _, (final, ys) = run(k, x)
    assert final == 10.0
    np.testing.assert_array_equal(ys, 2 * np.cumsum(x))


def test_carry_that_changes_dtype_is_a_located_error():
    def k(x: f64[:]):
        return lax.fori_loop(0, 3, lambda i, acc: acc + x[0], np.zeros(3, np.int64))

    with pytest.raises(TraceError, match=r"state value 0 starts as i64\[3\] but the body "
                                         r"makes it f64\[3\]"):
        trace_kernel(k, signature_from_annotations(k))


def test_writing_into_an_outer_array_inside_a_body_is_carried():
    """A body that writes into an array made outside it updates that array, as NumPy
    does: the loop carries it without being told."""
    def k(x: f64[:]):
        out = np.zeros(3)

        def body(i, acc):
            out[i] = acc * x[0]
            return acc + 1.0
        total = lax.fori_loop(0, 3, body, 0.0)
        return out, total

    program = trace_kernel(k, signature_from_annotations(k)).program
    got = eval_program(optimize(program), np.array([2.0]))
    np.testing.assert_array_equal(got[0], [0.0, 2.0, 4.0])
    assert got[1] == 3.0
