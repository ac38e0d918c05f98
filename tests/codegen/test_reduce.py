"""Reductions over every axis set, on every dtype and memory layout, against NumPy.

Sums and products accumulate sequentially while NumPy sums pairwise, so float sums are
compared with a relative tolerance (the extents here are tiny, so the difference is a few
ulp); max/min are exact, including NaN propagation.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from aotc.codegen.core.jit import JitLibrary
from aotc.interpret import eval_program

from .data import BOOL, DTYPES, assert_same, layouts, random_values
from .programs import ProgramBuilder

ALL_AXES = [axes for r in range(4) for axes in itertools.combinations(range(3), r)]
SOME_AXES = [(1,), (0, 2), (0, 1, 2)]
MAIN = {np.dtype("f8"), np.dtype("i8"), BOOL}
ARITH = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]

CASES = [(r, d, axes) for r in ARITH for d in DTYPES
         for axes in (ALL_AXES if d in MAIN else SOME_AXES)]
CASES += [(r, BOOL, axes) for r in ("reduce_and", "reduce_or") for axes in ALL_AXES]
SHAPES = [(2, 3, 4), (1, 5, 1), (0, 3, 2), (3, 0, 2), (2, 3, 0)]
SUM_RTOL = {np.dtype("f4"): 1e-5, np.dtype("f8"): 1e-13, np.dtype("c8"): 1e-5,
            np.dtype("c16"): 1e-13}


def _program(reduction: str, dtype: np.dtype, axes: tuple[int, ...]):
    pb = ProgramBuilder(reduction)
    x = pb.array(dtype, "a", "b", "c")
    return pb.build(pb.apply(reduction, x, axes=axes))


@pytest.fixture(scope="module")
def kernels():
    library = JitLibrary([_program(*case) for case in CASES])
    return dict(zip(CASES, library.kernels, strict=True))


@pytest.mark.parametrize(("reduction", "dtype", "axes"), CASES,
                         ids=[f"{r}-{d}-{''.join(map(str, a)) or 'none'}" for r, d, a in CASES])
def test_reduction_matches_numpy(kernels, reduction, dtype, axes):
    kernel = kernels[(reduction, dtype, axes)]
    rtol = SUM_RTOL.get(dtype, 0.0) if reduction in ("reduce_sum", "reduce_prod") else 0.0
    for shape in SHAPES:
        base = random_values(dtype, shape, seed=len(axes))
        for layout, x in layouts(base).items():
            empty_extent = any(shape[a] == 0 for a in axes)
            if empty_extent and reduction in ("reduce_max", "reduce_min"):
                kernel(x)  # NumPy raises (the tracer adds a check); we must not crash
                continue
            (got,) = kernel(x)
            (want,) = eval_program(kernel.program, x)
            assert_same(got, want, rtol=rtol,
                        what=f"{reduction} axes={axes} shape={shape} {layout}")


def test_max_min_propagate_nan():
    pb = ProgramBuilder()
    x = pb.array("f8", "n")
    library = JitLibrary([pb.build(pb.apply("reduce_max", x, axes=(0,)),
                                   pb.apply("reduce_min", x, axes=(0,)))])
    (kernel,) = library.kernels
    for values in ([1.0, np.nan, 3.0], [np.nan, 1.0], [1.0, 2.0, np.nan], [-np.inf, np.inf]):
        x = np.array(values)
        got = kernel(x)
        assert_same(got[0], np.max(x), what=str(values))
        assert_same(got[1], np.min(x), what=str(values))
