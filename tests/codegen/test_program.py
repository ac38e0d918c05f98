"""Whole-program behaviour through the C ABI: argument layouts, outputs, checks, size
expressions, scratch, and writes into arguments."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from aotc.codegen.core.jit import JitLibrary
from aotc.codegen.memory.layout import plan_layout
from aotc.interpret import eval_program
from aotc.ir import AType, Eqn, Params, Program, Var
from aotc.ops.core import Primitive
from aotc.shapes import DimExpr, relu

from .data import assert_same, check_call, layouts
from .programs import ProgramBuilder, lit

N = DimExpr.sym("n")


def affine():  # z = x * y + 1.5 on (a, b): every layout of x and y, empty and size 1
    pb = ProgramBuilder("affine")
    x, y = pb.array("f8", "a", "b"), pb.array("f8", "a", "b")
    return pb.build(pb.apply("add", pb.apply("mul", x, y), np.float64(1.5)))


def mixed_int():  # int32 chain with an int scalar argument broadcast
    pb = ProgramBuilder("mixed_int")
    x, k = pb.array("i4", "n"), pb.scalar("i4")
    return pb.build(pb.apply("floor_divide", pb.apply("mul", x, k), np.int32(-3)))


def outputs():  # an input, a literal, a repeated var, a rank-0 result, a view
    pb = ProgramBuilder("outputs")
    x = pb.array("f4", "n")
    t = pb.apply("neg", x)
    total = pb.apply("reduce_sum", t, axes=(0,))
    rev = pb.apply("slice", x, start=(N - 1,), step=(-1,), shape=(N,))
    return pb.build(x, lit(np.float32(7.0)), t, t, total, rev, t)


def sizes():  # dim_value of floor division with negative numerators, relu, scalar symbols
    pb = ProgramBuilder("sizes")
    pb.array("f8", "n")
    pb.scalar("i8", "k")
    k = DimExpr.sym("k")
    exprs = [(N - 5) // 2, (N - 5) // 3, relu(N - 3), N * k - 2 * k, (N * k - 7) // 4,
             relu(k - N) + 1]
    return pb.build(*(pb.apply("dim_value", expr=e) for e in exprs))


def checked():  # size checks -> the right exception with the formatted message
    pb = ProgramBuilder("checked")
    x, y = pb.array("f8", "n"), pb.array("f8", "m")
    pb.check("==", "n", "m", "ValueError", "operands could not be broadcast: {lhs} vs {rhs}")
    pb.check(">=", "n", 2, "IndexError", "index 1 is out of bounds for axis 0 with size {lhs}")
    pb.check("<", "n", 100, "ValueError", "too big: {lhs} >= {rhs}")
    x2 = pb.apply("refine_shape", y, shape=(N,))
    return pb.build(pb.apply("add", x, x2))


def scratch_chain():  # three temporaries of different dtypes before the output
    pb = ProgramBuilder("scratch_chain")
    x = pb.array("f8", "n", "m")
    a = pb.apply("mul", x, np.float64(2.0))
    b = pb.apply("convert", a, dtype=np.dtype("f4"))
    c = pb.apply("gt", b, np.float32(0.5))
    return pb.build(pb.apply("reduce_or", c, axes=(1,)))


def write_back():  # x[::-1] = x (staged), y[...] = y * 2, outputs read the old values
    pb = ProgramBuilder("write_back")
    x, y = pb.array("f8", "n"), pb.array("i8", "n")
    rev = pb.apply("slice", x, start=(N - 1,), step=(-1,), shape=(N,))
    doubled = pb.apply("mul", y, np.int64(2))
    program = pb.build(x, pb.apply("reduce_sum", y, axes=(0,)))
    return program.replace(writebacks=((0, rev), (1, doubled)))


PROGRAMS = {f.__name__: f for f in (affine, mixed_int, outputs, sizes, checked,
                                    scratch_chain, write_back)}


@pytest.fixture(scope="module")
def kernels():
    library = JitLibrary([p() for p in PROGRAMS.values()])
    return dict(zip(PROGRAMS, library.kernels, strict=True))


def _check(kernel, *args, rtol: float = 0.0):
    return check_call(kernel, *args, rtol=rtol)


@pytest.mark.parametrize("shape", [(3, 4), (0, 4), (4, 0), (1, 1), (1, 5), (17, 3)])
def test_every_layout_of_every_argument(kernels, shape):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    for xl in layouts(x).values():
        for yl in layouts(y).values():
            _check(kernels["affine"], xl, yl)


def test_integer_scalar_argument(kernels):
    x = np.array([-7, -1, 0, 5, 2**31 - 1, -(2**31)], np.int32)
    for k in (3, -1, 0, 2**31 - 1):
        _check(kernels["mixed_int"], x, k)
        _check(kernels["mixed_int"], x[::-2], np.int32(k))


def test_outputs_of_every_kind(kernels):
    for n in (0, 1, 6):
        x = np.arange(n, dtype=np.float32) - 2.5
        got = _check(kernels["outputs"], x)
        assert got[4].shape == () and got[1].shape == ()
        assert got[0] is not x  # inputs are copied into their own output buffer


def test_size_expressions_floor_and_relu(kernels):
    for n in range(0, 9):
        for k in (0, 1, 3):
            _check(kernels["sizes"], np.zeros(n), k)


def test_failing_checks_raise_with_message(kernels):
    kernel = kernels["checked"]
    _check(kernel, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="could not be broadcast: 3 vs 4"):
        kernel(np.ones(3), np.ones(4))
    with pytest.raises(IndexError, match="axis 0 with size 1"):
        kernel(np.ones(1), np.ones(1))
    with pytest.raises(ValueError, match="too big: 100 >= 100"):
        kernel(np.ones(100), np.ones(100))


def test_scratch_size_is_the_planned_layout(kernels):
    kernel = kernels["scratch_chain"]
    n, m = 5, 3
    info = (ctypes.c_int64 * 3)()
    shape, strides = (ctypes.c_int64 * 2)(n, m), (ctypes.c_int64 * 2)(8 * m, 8)
    x = np.ones((n, m))
    from aotc.codegen.core.jit import AotcArray

    arr = AotcArray(x.ctypes.data, shape, strides)
    argv = (ctypes.c_void_p * 1)(ctypes.addressof(arr))
    dims = (ctypes.c_int64 * 1)()
    assert kernel._shapes(ctypes.addressof(argv), ctypes.addressof(dims),
                          ctypes.addressof(info)) == 0
    # f64 temp (120 -> 128 bytes), f32 temp (60 -> 64), bool temp (15 -> 64)
    assert info[0] == 128 + 64 + 64
    assert plan_layout(kernel.program).scratch_bytes.evaluate({"n": n, "m": m}) == info[0]
    assert list(dims) == [n]
    _check(kernel, np.linspace(-1, 1, n * m).reshape(n, m))


def test_writes_into_arguments(kernels):
    kernel = kernels["write_back"]
    for n in (0, 1, 5):
        x, y = np.arange(n, dtype=np.float64), np.arange(n, dtype=np.int64)
        x_ref, y_ref = x.copy(), y.copy()
        got = kernel(x, y)
        want = eval_program(kernel.program, x_ref, y_ref)
        assert_same(got[0], np.arange(n, dtype=np.float64))  # the value before the write
        assert_same(got[1], want[1])
        assert_same(x, x_ref)
        assert_same(y, y_ref)
    base = np.arange(10, dtype=np.int64)
    kernel(np.arange(5.0), base[::2])  # a strided argument is written through its strides
    np.testing.assert_array_equal(base, [0, 1, 4, 3, 8, 5, 12, 7, 16, 9])


def test_unknown_primitive_is_unsupported():
    from aotc.codegen import TargetSpec, build_llvm_module
    from aotc.errors import UnsupportedError

    x = Var(AType(np.dtype("f8"), ()))
    y = Var(AType(np.dtype("f8"), ()))
    eqn = Eqn(Primitive("mystery_op"), (x,), Params.of({}), (y,))
    program = Program((x,), (eqn,), (y,))
    with pytest.raises(UnsupportedError, match="mystery_op"):
        build_llvm_module([("k", program)], TargetSpec())


@pytest.mark.parametrize("dtype", ["f2", "c32"])
def test_dtypes_without_a_register_type_are_refused(dtype):
    """float16 and complex256 (complex64 and complex128 compile)."""
    from aotc.codegen import TargetSpec, build_llvm_module
    from aotc.errors import UnsupportedError

    pb = ProgramBuilder()
    x = pb.array(dtype, "n")
    with pytest.raises(UnsupportedError, match=f"dtype {np.dtype(dtype)} is not supported"):
        build_llvm_module([("k", pb.build(x))], TargetSpec())
