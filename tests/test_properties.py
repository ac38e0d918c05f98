"""Property-based differential tests: random kernels over the supported operations,
with random shapes, dtypes and layouts, compiled and compared with NumPy.

Hypothesis draws an expression tree (ufuncs, comparisons with ``np.where``, casts,
reductions along random axes, slices and transposes of the inputs), then input arrays
with edge values (NaN, ±inf, -0.0, integer extremes), empty and size-1 axes, and
reversed, strided or transposed layouts. The kernel runs as plain NumPy and through
aotc; results must agree exactly, except float sums, which may differ by rounding
order (tolerance below). The number of cases tried is printed at the end of the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from aotc.codegen.jit import JitKernel
from aotc.errors import AotcError
from aotc.interpret import eval_program
from aotc.passes import optimize
from aotc.trace import trace_kernel
from aotc.types import parse_signature_string

CASES: Counter[str] = Counter()

DTYPES = {"f8": np.float64, "f4": np.float32, "i8": np.int64, "i4": np.int32, "i1": np.int8,
          "u1": np.uint8, "b1": np.bool_}
# Ufuncs that are exact in IEEE arithmetic (no libm involved), so results must match
# NumPy bit for bit, and every integer op wraps the same way.
BINARY = [np.add, np.subtract, np.multiply, np.maximum, np.minimum, np.fmax, np.fmin,
          np.copysign]
INT_BINARY = [np.add, np.subtract, np.multiply, np.maximum, np.minimum, np.bitwise_xor,
              np.floor_divide, np.remainder]
UNARY = [np.negative, np.absolute, np.sqrt, np.floor, np.ceil, np.trunc, np.rint, np.square,
         np.sign, np.isnan, np.isfinite, np.logical_not]
COMPARE = [np.less, np.greater_equal, np.equal, np.not_equal]


@dataclass(frozen=True)
class Node:
    """An expression over the kernel's inputs; ``render`` gives its NumPy function."""

    op: str
    args: tuple[Any, ...]

    def build(self) -> Callable[..., Any]:
        kind, args = self.op, self.args
        if kind == "input":
            return lambda *xs, i=args[0]: xs[i]
        if kind == "const":
            return lambda *xs, v=args[0]: v
        parts = [a.build() if isinstance(a, Node) else a for a in args]
        if kind == "ufunc":
            fn, *subs = parts
            return lambda *xs: fn(*(s(*xs) for s in subs))
        if kind == "where":
            cmp, a, b, c, d = parts
            return lambda *xs: np.where(cmp(a(*xs), b(*xs)), c(*xs), d(*xs))
        if kind == "astype":
            sub, dtype = parts
            return lambda *xs: np.asarray(sub(*xs)).astype(dtype)
        raise AssertionError(kind)


def leaves(n_inputs: int) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.integers(0, n_inputs - 1).map(lambda i: Node("input", (i,))),
        st.sampled_from([0, 1, 2, -1, 0.5, -2.5, True]).map(lambda v: Node("const", (v,))),
    )


def expressions(n_inputs: int) -> st.SearchStrategy[Node]:
    def extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
        return st.one_of(
            st.tuples(st.sampled_from(BINARY + INT_BINARY), children, children).map(
                lambda t: Node("ufunc", t)),
            st.tuples(st.sampled_from(UNARY), children).map(lambda t: Node("ufunc", t)),
            st.tuples(st.sampled_from(COMPARE), children, children, children, children).map(
                lambda t: Node("where", t)),
            st.tuples(children, st.sampled_from(list(DTYPES.values()))).map(
                lambda t: Node("astype", t)),
        )
    return st.recursive(leaves(n_inputs), extend, max_leaves=6)


def elements(dtype: np.dtype) -> st.SearchStrategy[Any]:
    if dtype.kind == "f":
        return st.floats(width=dtype.itemsize * 8, allow_nan=True, allow_infinity=True) | \
            st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.5])
    if dtype.kind == "b":
        return st.booleans()
    info = np.iinfo(dtype)
    edges = [0, 1, 2, int(info.max), int(info.min)] + ([-1] if dtype.kind == "i" else [])
    return st.integers(int(info.min), int(info.max)) | st.sampled_from(edges)


LAYOUTS = {
    "contiguous": lambda a: a,
    "reversed": lambda a: a[::-1],
    "strided": lambda a: a[::2],
    "transposed": lambda a: a.T if a.ndim == 2 else a,
}


@st.composite
def kernels(draw: st.DrawFn) -> tuple[Node, list[str], list[np.ndarray], str, Any]:
    n_inputs = draw(st.integers(1, 3))
    codes = [draw(st.sampled_from(list(DTYPES))) for _ in range(n_inputs)]
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(0, 5)) for _ in range(ndim))
    layout = draw(st.sampled_from(list(LAYOUTS)))
    arrays = []
    for code in codes:
        dtype = np.dtype(DTYPES[code])
        base_shape = tuple(2 * s if layout == "strided" and i == 0 else s
                           for i, s in enumerate(shape))
        if layout == "transposed" and ndim == 2:
            base_shape = base_shape[::-1]
        base = draw(hnp.arrays(dtype, base_shape, elements=elements(dtype)))
        arrays.append(LAYOUTS[layout](base))
    tree = draw(expressions(n_inputs))
    reduction = draw(st.sampled_from([None, "sum", "max", "min", "any", "all"]))
    if reduction in ("max", "min") and 0 in shape:
        reduction = "sum"  # NumPy raises for empty max/min; tests/test_trace.py covers that
    axis = draw(st.sampled_from([None] + list(range(ndim))))
    return tree, codes, arrays, layout, (reduction, axis)


def make_kernel(tree: Node, reduction: tuple[Any, Any], n_inputs: int) -> Callable[..., Any]:
    body = tree.build()
    name, axis = reduction

    def kernel(*xs: Any) -> Any:
        value = np.asarray(body(*xs)) + np.zeros(xs[0].shape, np.int8)
        return value if name is None else getattr(np, name)(value, axis=axis)

    # Kernels take named parameters (x0, x1, ...), as signatures require.
    params = ", ".join(f"x{i}" for i in range(n_inputs))
    return eval(f"lambda {params}: kernel({params})", {"kernel": kernel})


def numpy_result(kernel: Callable[..., Any], arrays: list[np.ndarray]) -> Any:
    with np.errstate(all="ignore"):
        try:
            return kernel(*arrays), None
        except (TypeError, ValueError, OverflowError) as err:  # no NumPy loop for this mix
            return None, err


def same(got: np.ndarray, want: np.ndarray, summed: bool) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if summed and want.dtype.kind == "f":
        # Sums may associate differently: bound by the rounding error of n additions.
        scale = np.abs(want) + 1e-300
        tol = 64 * np.finfo(want.dtype).eps * max(got.size, 1) * 8
        ok = np.isclose(got, want, rtol=tol, atol=0, equal_nan=True) | (
            np.isinf(want) & (got == want)) | (np.abs(got - want) <= tol * scale)
        assert ok.all(), (got, want)
    else:
        np.testing.assert_array_equal(got, want, strict=True)


def _check(tree: Node, codes: list[str], arrays: list[np.ndarray], layout: str,
           reduction: tuple[Any, Any], compiled: bool) -> None:
    kernel = make_kernel(tree, reduction, len(arrays))
    want, error = numpy_result(kernel, arrays)
    signature = parse_signature_string(
        "(" + ", ".join(f"{c}[{', '.join(':' * a.ndim)}]" for c, a in zip(codes, arrays)) + ")")
    try:
        program = optimize(trace_kernel(kernel, signature, name="random").program)
    except (AotcError, TypeError, ValueError) as err:
        if error is None:  # NumPy accepts it: only float16 (unsupported) may be refused
            assert "float16" in str(err), f"aotc rejected a kernel NumPy accepts: {err}"
            CASES["refused: float16"] += 1
        else:
            CASES["rejected like NumPy"] += 1
        return
    assume(error is None)  # NumPy itself rejects the kernel: nothing to compare
    run = JitKernel(program) if compiled else (lambda *a: eval_program(program, *a))
    with np.errstate(all="ignore"):
        (got,) = run(*arrays)
    same(np.asarray(got), want, reduction[0] == "sum")
    CASES["compiled" if compiled else "interpreted"] += 1
    CASES[f"layout {layout}"] += 1


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(kernels())
def test_random_kernels_interpreted(drawn: Any) -> None:
    _check(*drawn, compiled=False)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(kernels())
def test_random_kernels_compiled(drawn: Any) -> None:
    _check(*drawn, compiled=True)
