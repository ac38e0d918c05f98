"""Indexing, joining, creation, index reductions, scans and contractions, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from aotc.codegen.core.jit import JitLibrary
from aotc.interpret import eval_program
from aotc.ops.index import KernelError
from aotc.shapes import DimExpr, ceil_div, relu

from .data import DTYPES, check_call, layouts, random_values
from .programs import ProgramBuilder

A, B, N = DimExpr.sym("a"), DimExpr.sym("b"), DimExpr.sym("n")
ONE = DimExpr.const(1)


def take_axis1(index_dtype: str):
    pb = ProgramBuilder(f"take_{index_dtype}")
    x, i = pb.array("f8", "a", "b"), pb.array(index_dtype, "k")
    s = pb.scalar(index_dtype)
    return pb.build(pb.apply("take", x, i, axis=1), pb.apply("take", x, s, axis=0))


def dynamic_slices():  # x[i:i+2, j:j+b-1] at runtime starts (bound as sizes), and an
    pb = ProgramBuilder("dynamic_slices")  # update of the same block
    x, i, j = pb.array("f4", "a", "b"), pb.scalar("i8"), pb.scalar("i8")
    pb.apply("bind_dim", i, symbol="@i", upper=A - 2)
    pb.apply("bind_dim", j, symbol="@j", upper=ONE)
    start = (DimExpr.sym("@i"), DimExpr.sym("@j"))
    block = pb.apply("slice", x, start=start, step=(1, 1), shape=(DimExpr.const(2), relu(B - 1)))
    upd = pb.apply("update_slice", x, pb.apply("mul", block, np.float32(10.0)), start=start,
                   step=(1, 1))
    return pb.build(block, upd)


def update_slices():  # x[1::2] = y and x[::-1][:m] = z, functionally
    pb = ProgramBuilder("update_slices")
    x, y = pb.array("i2", "n"), pb.array("i2", "m")
    first = pb.apply("update_slice", x, pb.apply("slice", y, start=(DimExpr.const(0),),
                                                 step=(1,), shape=(N // 2,)),
                     start=(ONE,), step=(2,))
    z = pb.apply("slice", y, start=(DimExpr.const(0),), step=(1,), shape=(ceil_div(N, 3),))
    second = pb.apply("update_slice", first, z, start=(N - 1,), step=(-3,))
    return pb.build(first, second)


def concatenate():
    pb = ProgramBuilder("concatenate")
    x, y = pb.array("u1", "a", "b"), pb.array("u1", "a", "c")
    t = pb.apply("transpose", x, permutation=(1, 0))
    return pb.build(pb.apply("concatenate", x, y, x, axis=1),
                    pb.apply("concatenate", t, t, axis=0))


def raise_if():
    pb = ProgramBuilder("raise_if")
    x = pb.array("f8", "n")
    pb.apply("raise_if", pb.apply("isnan", x), error="ZeroDivisionError", message="nan")
    return pb.build(pb.apply("reduce_sum", x, axes=(0,)))


def iota():
    pb = ProgramBuilder("iota")
    pb.array("f8", "a", "b")
    return pb.build(pb.apply("iota", dtype=np.dtype("f4"), shape=(A, B), dimension=1),
                    pb.apply("iota", dtype=np.dtype("i1"), shape=(A, B), dimension=0))


def arg_reductions(dtype: np.dtype):
    pb = ProgramBuilder(f"arg_{dtype}")
    x = pb.array(dtype, "a", "b")
    return pb.build(*(pb.apply(p, x, axis=ax) for p in ("argmax", "argmin") for ax in (0, 1)))


def scans(dtype: np.dtype):
    pb = ProgramBuilder(f"scans_{dtype}")
    x = pb.array(dtype, "a", "b")
    return pb.build(*(pb.apply(p, x, axis=ax) for p in ("cumsum", "cumprod") for ax in (0, 1)))


def dots(dtype: str):
    pb = ProgramBuilder(f"dots_{dtype}")
    m, v = pb.array(dtype, "a", "b"), pb.array(dtype, "b")
    t = pb.array(dtype, "c", "b", "a")
    return pb.build(
        pb.apply("dot_general", m, v, contracting=((1,), (0,)), batch=((), ())),  # m @ v
        pb.apply("dot_general", v, v, contracting=((0,), (0,)), batch=((), ())),  # v . v
        pb.apply("dot_general", m, m, contracting=((1,), (1,)), batch=((), ())),  # m @ m.T
        pb.apply("dot_general", m, v, contracting=((), ()), batch=((), ())),  # outer
        pb.apply("dot_general", t, m, contracting=((1,), (1,)), batch=((2,), (0,))),  # batched
    )


ARG_DTYPES = list(DTYPES)
PROGRAMS = {p.name: p for p in [
    take_axis1("i8"), take_axis1("u4"), take_axis1("i1"), dynamic_slices(), update_slices(),
    concatenate(), raise_if(), iota(),
    *(arg_reductions(d) for d in ARG_DTYPES), *(scans(d) for d in DTYPES),
    dots("f8"), dots("i4"), dots("?"), dots("u1"),
]}


@pytest.fixture(scope="module")
def kernels():
    library = JitLibrary(list(PROGRAMS.values()))
    return dict(zip(PROGRAMS, library.kernels, strict=True))


def _check(kernel, *args, rtol: float = 0.0):
    return check_call(kernel, *args, rtol=rtol)


@pytest.mark.parametrize("index_dtype", ["i8", "u4", "i1"])
def test_take(kernels, index_dtype):
    kernel = kernels[f"take_{index_dtype}"]
    x = np.arange(12.0).reshape(3, 4)
    signed = index_dtype != "u4"
    idx = np.array([0, 3, -1, -4, 2] if signed else [0, 3, 2, 1], index_dtype)
    for xl in layouts(x).values():
        _check(kernel, xl, idx, 2)
        _check(kernel, xl, idx[::-1], -3 if signed else 0)
        _check(kernel, xl, idx[:0], 1)
    for bad in ([4], [-5] if signed else [2**32 - 1], [0, 1, 2, 3, 9]):
        with pytest.raises(IndexError, match="out of bounds"):
            kernel(x, np.array(bad, index_dtype), 0)
        with pytest.raises(KernelError):
            eval_program(kernel.program, x, np.array(bad, index_dtype), 0)
    with pytest.raises(IndexError):
        kernel(x, idx[:1], 3)


def test_dynamic_slice_and_update(kernels):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    for xl in layouts(x).values():
        for i, j in ((0, 0), (2, 1), (1, 0)):
            _check(kernels["dynamic_slices"], xl, i, j)


def test_update_slice_with_steps(kernels):
    for n in (0, 1, 2, 7, 8):
        x = np.arange(n, dtype=np.int16)
        y = -np.arange(1, n + 1, dtype=np.int16)
        for yl in layouts(y).values():
            _check(kernels["update_slices"], x, yl)


def test_concatenate(kernels):
    x = random_values(np.dtype("u1"), (3, 2))
    y = random_values(np.dtype("u1"), (3, 4), seed=1)
    for xl in layouts(x).values():
        _check(kernels["concatenate"], xl, y[:, ::-1])
        _check(kernels["concatenate"], xl[:0], y[:0])


def test_raise_if(kernels):
    kernel = kernels["raise_if"]
    _check(kernel, np.ones(4))
    _check(kernel, np.ones(0))
    with pytest.raises(ZeroDivisionError):
        kernel(np.array([1.0, np.nan, 2.0]))


def test_iota(kernels):
    for shape in ((3, 4), (0, 2), (2, 0), (1, 1)):
        _check(kernels["iota"], np.zeros(shape))


@pytest.mark.parametrize("dtype", ARG_DTYPES, ids=str)
def test_argmax_argmin_first_occurrence_and_nan(kernels, dtype):
    kernel = kernels[f"arg_{dtype}"]
    for shape in ((4, 5), (1, 3), (6, 1)):
        x = random_values(dtype, shape, seed=3)
        for xl in layouts(x).values():
            _check(kernel, xl)
    if dtype.kind == "f":
        x = np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf, -np.inf, 0.0, -0.0]], dtype)
        _check(kernel, x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cumsum_cumprod(kernels, dtype):
    kernel = kernels[f"scans_{dtype}"]
    for shape in ((3, 4), (0, 3), (1, 1), (4, 0)):
        x = random_values(dtype, shape, seed=4)
        for xl in layouts(x).values():
            _check(kernel, xl)  # sequential in NumPy too: exact, -0.0 included


@pytest.mark.parametrize("dtype", ["f8", "i4", "?", "u1"])
def test_dot_general(kernels, dtype):
    kernel = kernels[f"dots_{dtype}"]
    for a, b, c in ((3, 4, 2), (1, 1, 1), (0, 3, 2), (2, 0, 3)):
        m = random_values(np.dtype(dtype), (a, b), seed=5)
        v = random_values(np.dtype(dtype), (b,), seed=6)
        t = random_values(np.dtype(dtype), (c, b, a), seed=7)
        if dtype == "f8":
            m, v, t = (np.nan_to_num(z, posinf=9.0, neginf=-9.0).clip(-1e3, 1e3) for z in (m, v, t))
        for ml in layouts(m).values():
            # einsum may reorder float sums: a few ulp
            _check(kernel, ml, v, t, rtol=1e-12 if dtype == "f8" else 0.0)
