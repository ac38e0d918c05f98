"""View primitives (broadcast_in_dim, transpose, slice, reshape), used directly as
outputs and as operands of a loop, on inputs of every memory layout."""

from __future__ import annotations

import numpy as np
import pytest

from aotc.codegen.core.jit import JitLibrary
from aotc.codegen.memory.layout import plan_layout
from aotc.interpret import eval_program
from aotc.shapes import DimExpr, ceil_div, relu

from .data import assert_same, layouts
from .programs import ProgramBuilder

N, M = DimExpr.sym("n"), DimExpr.sym("m")


def _twice(pb: ProgramBuilder, v):
    """Outputs ``v`` itself (a view, copied out) and ``v * 2`` (read through the view)."""
    return v, pb.apply("mul", v, np.float64(2.0))


def broadcast_row():  # f64[n] -> (m, n)
    pb = ProgramBuilder("broadcast_row")
    x, _ = pb.array("f8", "n"), pb.scalar("i8", "m")
    return pb.build(*_twice(pb, pb.apply("broadcast_in_dim", x, shape=(M, N),
                                         broadcast_dimensions=(1,))))


def broadcast_stretch():  # f64[n, 1] -> (n, m); f64[1] -> (m,)
    pb = ProgramBuilder("broadcast_stretch")
    x, y, _ = pb.array("f8", "n", 1), pb.array("f8", 1), pb.scalar("i8", "m")
    a = pb.apply("broadcast_in_dim", x, shape=(N, M), broadcast_dimensions=(0, 1))
    b = pb.apply("broadcast_in_dim", y, shape=(M,), broadcast_dimensions=(0,))
    return pb.build(*_twice(pb, a), b)


def broadcast_scalar():  # f64 -> (n, 2), and a rank-0 computed value too
    pb = ProgramBuilder("broadcast_scalar")
    s, _ = pb.scalar("f8"), pb.scalar("i8", "n")
    t = pb.apply("exp", s)
    a = pb.apply("broadcast_in_dim", t, shape=(N, DimExpr.const(2)), broadcast_dimensions=())
    return pb.build(*_twice(pb, a))


def transpose3():
    pb = ProgramBuilder("transpose3")
    x = pb.array("f8", "a", "b", "c")
    return pb.build(*_twice(pb, pb.apply("transpose", x, permutation=(2, 0, 1))))


def slices():
    pb = ProgramBuilder("slices")
    x = pb.array("f8", "n")
    one = DimExpr.const(1)
    tail = pb.apply("slice", x, start=(one,), step=(1,), shape=(relu(N - 1),))  # x[1:]
    rev = pb.apply("slice", x, start=(N - 1,), step=(-1,), shape=(N,))  # x[::-1]
    even = pb.apply("slice", x, start=(DimExpr.const(0),), step=(2,), shape=(ceil_div(N, 2),))
    back3 = pb.apply("slice", x, start=(N - 1,), step=(-3,), shape=(ceil_div(N, 3),))
    return pb.build(*_twice(pb, tail), rev, even, back3)


def slice2d():  # x[::-1, 1::2] of f64[a, b], then its transpose
    pb = ProgramBuilder("slice2d")
    x = pb.array("f8", "a", "b")
    a, b = DimExpr.sym("a"), DimExpr.sym("b")
    s = pb.apply("slice", x, start=(a - 1, DimExpr.const(1)), step=(-1, 2),
                 shape=(a, ceil_div(relu(b - 1), 2)))
    return pb.build(*_twice(pb, s), pb.apply("transpose", s, permutation=(1, 0)))


def reshape_contiguous():  # a temporary is contiguous: reshaping it is a view
    pb = ProgramBuilder("reshape_contiguous")
    x = pb.array("f8", "a", "b")
    t = pb.apply("neg", x)
    r = pb.apply("reshape", t, new_sizes=(DimExpr.sym("a") * DimExpr.sym("b"),))
    return pb.build(*_twice(pb, r))


def reshape_strided():  # a caller's array may be strided: flattening it copies
    pb = ProgramBuilder("reshape_strided")
    x = pb.array("f8", "a", "b")
    r = pb.apply("reshape", x, new_sizes=(DimExpr.sym("a") * DimExpr.sym("b"),))
    return pb.build(*_twice(pb, r))


def reshape_unit_axes():  # only size-1 axes change: a view even of a strided array
    pb = ProgramBuilder("reshape_unit_axes")
    x = pb.array("f8", "a", 1, "b")
    a, b, one = DimExpr.sym("a"), DimExpr.sym("b"), DimExpr.const(1)
    r = pb.apply("reshape", x, new_sizes=(one, a, b, one))
    return pb.build(*_twice(pb, r))


def reshape_rank0():  # (1, 1) -> () and () -> (1, 1, 1)
    pb = ProgramBuilder("reshape_rank0")
    x, s = pb.array("f8", 1, 1), pb.scalar("f8")
    one = DimExpr.const(1)
    return pb.build(pb.apply("reshape", x, new_sizes=()),
                    pb.apply("reshape", s, new_sizes=(one, one, one)))


PROGRAMS = {f.__name__: f for f in (broadcast_row, broadcast_stretch, broadcast_scalar,
                                    transpose3, slices, slice2d, reshape_contiguous,
                                    reshape_strided, reshape_unit_axes, reshape_rank0)}


def _args(name: str, rng: np.random.Generator):
    """Argument tuples for each program, over several sizes (including 0 and 1)."""
    arr = lambda *shape: rng.standard_normal(shape)  # noqa: E731
    for n in (0, 1, 5):
        yield {
            "broadcast_row": (arr(n), 3), "broadcast_stretch": (arr(n, 1), arr(1), 4),
            "broadcast_scalar": (0.5, n), "transpose3": (arr(2, n, 3),),
            "slices": (arr(n),), "slice2d": (arr(n, 7),), "reshape_contiguous": (arr(3, n),),
            "reshape_strided": (arr(n, 4),), "reshape_unit_axes": (arr(3, 1, n),),
            "reshape_rank0": (arr(1, 1), 2.5),
        }[name]


@pytest.fixture(scope="module")
def kernels():
    library = JitLibrary([p() for p in PROGRAMS.values()])
    return dict(zip(PROGRAMS, library.kernels, strict=True))


@pytest.mark.parametrize("name", PROGRAMS)
def test_view_matches_numpy(kernels, name):
    kernel, rng = kernels[name], np.random.default_rng(1)
    for args in _args(name, rng):
        variants = [args]
        for k, a in enumerate(args):
            if isinstance(a, np.ndarray):
                variants += [args[:k] + (v,) + args[k + 1:] for v in layouts(a).values()]
        for variant in variants:
            got, want = kernel(*variant), eval_program(kernel.program, *variant)
            for j, (g, w) in enumerate(zip(got, want, strict=True)):
                assert_same(g, w, what=f"{name} output {j}")


def test_reshape_copies_only_when_needed():
    """The layout gives a scratch slot only to the reshape of a strided operand."""
    contiguous = reshape_contiguous()
    assert contiguous.eqns[1].outs[0] not in plan_layout(contiguous).homes
    strided = reshape_strided()
    assert strided.eqns[0].outs[0] in plan_layout(strided).homes
    unit = reshape_unit_axes()
    assert unit.eqns[0].outs[0] not in plan_layout(unit).homes
