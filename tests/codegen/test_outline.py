"""Big top-level loops and branches of a big kernel get functions of their own
(:mod:`aotc.codegen.core.outline`): the kernel computes what it computed inlined, its scalar,
array and rank-0 results come back, and an error inside one is raised by the kernel.

The kernel is made big with loops that run at build time (unrolled into the program)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import aotc
from aotc import f64, i64
from aotc.codegen import TargetSpec, emit_llvm
from aotc.codegen.core.outline import KERNEL_EQUATIONS, REGION_EQUATIONS, equation_count
from aotc.ir import nested_programs
from aotc.ops.control import cond_p, for_loop_p, while_loop_p
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations


def big(x: f64[:], n: i64) -> tuple[f64[:], f64, i64, f64[:], f64]:
    y = x.copy()
    total = 0.0
    for i in range(n):  # a runtime loop: outlined, its body unrolled 24 times
        for k in range(24):
            y = y * 0.5 + np.sin(y + k) / (i + 1)
        total += y.sum()
    j = 0
    while j < n:  # a runtime loop that raises
        if x[j % x.shape[0]] < -100:
            raise ValueError("an element below -100")
        for k in range(24):
            total = total * 0.99 + np.cos(total + k)
        j += 1
    if total > 0:  # a branch with an array result
        w = x.copy()
        for k in range(24):
            w = np.sqrt(w * w + k)
    else:
        w = -x
        for k in range(24):
            w = w - np.tanh(w) * k
    last = 0.0
    for k in range(60):  # build-time: more equations at the top level
        last = last + np.float64(k) * x[k % 3]
    return y, total, j, w, last


@pytest.fixture(scope="module")
def program():
    """The program as it is lowered: optimized (fused)."""
    return optimize(trace_kernel(big, signature_from_annotations(big)).program)


def test_the_kernel_is_big_enough(program) -> None:
    """The premise: outlining applies to this kernel and to its three constructs."""
    assert equation_count(program) >= KERNEL_EQUATIONS
    regions = [e for e in program.eqns if e.prim in (for_loop_p, while_loop_p, cond_p)]
    assert len(regions) == 3
    assert all(sum(equation_count(p) for p in nested_programs(e)) >= REGION_EQUATIONS
               for e in regions)


def test_constructs_are_functions_of_their_own(program) -> None:
    text = emit_llvm([("big", program)], TargetSpec.parse("x86-64-v3"), optimized=False)
    outlined = set(re.findall(r'define internal i64 @"?big\.(\w+?)\d+"?\(', text))
    assert {"for_loop", "while_loop", "cond"} <= outlined


def test_outlined_kernel_matches_python() -> None:
    compiled = aotc.jit(aotc.export(big))
    x = np.linspace(-1.0, 2.0, 7)
    for n in (0, 1, 3):
        got, want = compiled(x, n), big(x, n)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    x[2] = -1000.0
    assert compiled(x, 2)[2] == 2  # the bad element is never read
    with pytest.raises(ValueError, match="an element below -100"):
        compiled(x, 3)


def pre_bound(x: f64[:], n: i64) -> tuple[f64[:], f64]:
    """A loop over an array whose size the kernel bound before it (``x[x > 0]``)."""
    p = x[x > 0]
    for i in range(n):
        for k in range(64):
            p = p * 0.5 + np.sin(p + k) / (i + 1)
    last = 0.0
    for k in range(60):
        last = last + np.float64(k) * x[k % 3]
    return p, last


def test_a_size_bound_before_a_construct_is_captured() -> None:
    """Only a size the construct itself binds keeps it inline (rfft's transform of a
    length chosen at run time is outlined)."""
    program = optimize(trace_kernel(pre_bound, signature_from_annotations(pre_bound)).program)
    assert equation_count(program) >= KERNEL_EQUATIONS
    text = emit_llvm([("pre_bound", program)], TargetSpec.parse("x86-64-v3"),
                     optimized=False)
    assert re.search(r'define internal i64 @"?pre_bound\.for_loop\d+"?\(', text)
    compiled = aotc.jit(aotc.export(pre_bound))
    x = np.linspace(-1.0, 2.0, 9)
    for n in (0, 2):
        got, want = compiled(x, n), pre_bound(x, n)
        assert got[0].shape == want[0].shape == (6,)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def alike(x: f64[:], n: i64) -> tuple[f64[:], f64]:
    """A construct of scalars only (the while loop), in a kernel emitted twice: for
    contiguous and for strided arrays (:mod:`aotc.codegen.core.specialize`)."""
    y = x.copy()
    for i in range(n):  # makes the kernel big; reads x, so each copy has its own
        for k in range(64):
            y = y * 0.5 + np.sin(y + k) / (i + 1)
    total, j = 1.0, 0
    while j < n:
        for k in range(24):
            total = total * 0.99 + np.cos(total + k)
        j += 1
    return y, total


def test_identical_constructs_share_one_function() -> None:
    """Constructs that emit the same code call one function (compiled once)."""
    program = optimize(trace_kernel(alike, signature_from_annotations(alike)).program)
    assert equation_count(program) >= KERNEL_EQUATIONS
    text = emit_llvm([("alike", program)], TargetSpec.parse("x86-64-v3"), optimized=False)
    defined = re.findall(r'define internal i64 @"?(alike\S*while_loop\d+)"?\(', text)
    called = re.findall(r'call i64 @"?(alike\S*while_loop\d+)"?\(', text)
    assert len(defined) == 1 and called == defined * 2
    compiled = aotc.jit(aotc.export(alike))
    x = np.linspace(-1.0, 2.0, 7)
    for n in (0, 3):
        for view in (x, x[::2]):
            for g, w in zip(compiled(view, n), alike(view, n), strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
