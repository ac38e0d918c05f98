"""Which argument pairs the wrapper must check for shared memory (IR only)."""

from __future__ import annotations

import numpy as np

from aotc import f64
from aotc.packaging.argument_order import order_conflicts
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations


def _conflicts(fn) -> list[tuple[int, int]]:
    return order_conflicts(trace_kernel(fn, signature_from_annotations(fn)).program)


def test_elementwise_updates_read_before_they_write():
    def add_into(x: f64[:], y: f64[:]) -> None:
        x += y

    def scaled_copy(a: f64[:], out: f64[:]) -> None:
        out[...] = a * 2.0

    assert _conflicts(add_into) == [] and _conflicts(scaled_copy) == []


def test_reads_after_a_write_are_conflicts():
    def copy_then_sum(a: f64[:], out: f64[:]) -> f64:
        out[...] = a * 2.0
        return a.sum()  # reads a after out was written

    def loop(src: f64[:], dst: f64[:]) -> None:
        for i in range(1, src.shape[0]):
            dst[i] = src[i - 1]  # the loop writes dst and reads src

    def returns_other(a: f64[:], out: f64[:]) -> f64[:]:
        out += 1.0
        return a[::-1]  # a view of a, read after the write

    assert _conflicts(copy_then_sum) == [(1, 0)]
    assert _conflicts(loop) == [(1, 0)]
    assert _conflicts(returns_other) == [(1, 0)]


def test_only_array_arguments_and_written_ones_count():
    def reads_only(a: f64[:], b: f64[:], k: f64) -> f64:
        return float(np.sum(a * b)) * k

    assert _conflicts(reads_only) == []


def test_the_pairs_are_those_of_the_statements_not_of_the_fused_loops():
    """Fusion makes ``y += a * x`` one loop that reads ``x`` and writes ``y``; the
    statement still reads all of ``x`` before it writes (NumPy's ufuncs do too), while
    a second statement reading ``x`` comes after the first write."""
    from aotc.passes import optimize

    def axpy(a: f64, x: f64[:], y: f64[:]) -> None:
        y += a * x

    def twice(a: f64, x: f64[:], y: f64[:]) -> None:
        y += a * x
        y += x

    for fn, expected in ((axpy, []), (twice, [(2, 1)])):
        fused = optimize(trace_kernel(fn, signature_from_annotations(fn)).program)
        assert any(e.prim.name == "fusion" for e in fused.eqns)
        assert order_conflicts(fused) == expected
