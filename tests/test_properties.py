"""Property-based differential tests: random kernels over the supported operations,
with random shapes, dtypes and layouts, compiled and compared with NumPy.

Hypothesis draws an expression tree (ufuncs, comparisons with ``np.where``, casts,
reductions along random axes) over inputs that broadcast against each other (different
ranks, size-1 axes that stretch), each sliced inside the kernel by random basic slices
(negative steps, bounds beyond the size, which Python clamps). The kernel returns the
expression or writes it into its first argument (``x[sl] = e``, ``x[sl] += e``,
``x[sl] *= c``). Inputs have edge values (NaN, ±inf, -0.0, integer extremes), empty and
size-1 axes, and reversed, strided or transposed layouts. The kernel runs as plain NumPy
and through aotc; results and the written argument must agree bit for bit (the sign of
zero included), except float sums, which may differ by rounding order within the
summation error bound. The number of cases tried is printed at the end of the run.

Runs are reproducible: the default Hypothesis profile, "ci" (``tests/conftest.py``), is
derandomized. ``HYPOTHESIS_PROFILE=random`` draws new and more examples on every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_cases import assert_same

from aotc.codegen.core.jit import JitKernel
from aotc.errors import AotcError
from aotc.interpret import eval_program
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
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


#: How an argument is laid out in memory: (base shape from the view's shape, the view).
LAYOUTS: dict[str, tuple[Callable[[tuple[int, ...]], tuple[int, ...]],
                         Callable[[np.ndarray], np.ndarray]]] = {
    "contiguous": (lambda s: s, lambda a: a),
    "reversed": (lambda s: s, lambda a: a[::-1]),
    "strided": (lambda s: (2 * s[0], *s[1:]), lambda a: a[::2]),
    "transposed": (lambda s: s[::-1], lambda a: a.T),
}
#: What the kernel does with the expression: return it (or a reduction of it), or write
#: it into argument 0: ``x0[sl] = e``, ``x0[sl] += e``, ``x0[sl] *= c``.
MODES = ["return", "setitem", "iadd", "imul"]
STEPS = [None, 1, 2, 3, -1, -2, -3]
BOUNDS = st.one_of(st.none(), st.integers(-8, 8))  # beyond the sizes: Python clamps


@dataclass(frozen=True)
class Drawn:
    """One generated kernel and its arguments."""

    tree: Node
    codes: list[str]
    bases: list[np.ndarray]  # each argument's memory; LAYOUTS[layout] gives the argument
    layout: str
    slices: list[tuple[slice, ...]]  # applied to each argument inside the kernel
    stretched: list[tuple[bool, ...]]  # size-1 axes that broadcast: declared ``1``
    mode: str
    reduction: tuple[str | None, int | None]
    factor: Any  # the constant of "imul"

    def arguments(self) -> list[np.ndarray]:
        """Fresh arguments (each run writes into its own)."""
        view = LAYOUTS[self.layout][1]
        return [view(base.copy()) for base in self.bases]

    def signature(self) -> str:
        """A size-1 axis that stretches is declared ``1``: aotc never stretches a ``:``
        axis at run time (it checks that symbolic sizes agree instead)."""
        return "(" + ", ".join(f"{c}[{', '.join('1' if s else ':' for s in stretched)}]"
                               for c, stretched in zip(self.codes, self.stretched, strict=True)
                               ) + ")"


def _sliced_size(n: int, sl: slice) -> int:
    return len(range(*sl.indices(n)))


@st.composite
def kernels(draw: st.DrawFn) -> Drawn:
    """Inputs that broadcast (different ranks, size-1 axes that stretch), each sliced in
    the kernel by one random basic slice per axis, and what the kernel does."""
    n_inputs = draw(st.integers(1, 3))
    codes = [draw(st.sampled_from(list(DTYPES))) for _ in range(n_inputs)]
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 5)) for _ in range(ndim))
    per_axis = [slice(None)] * ndim
    if draw(st.booleans()):
        per_axis = [slice(draw(BOUNDS), draw(BOUNDS), draw(st.sampled_from(STEPS)))
                    for _ in range(ndim)]
    # Input 0 has the full shape (it is the one written into); the others drop leading
    # axes and may have size 1 where the result does not, and broadcast.
    shapes, slices, stretched = [shape], [tuple(per_axis)], [(False,) * ndim]
    for _ in range(1, n_inputs):
        rank = draw(st.integers(1, ndim))
        axes = range(ndim - rank, ndim)
        stretch = tuple(shape[k] != 1 and draw(st.booleans()) for k in axes)
        shapes.append(tuple(1 if s else shape[k] for k, s in zip(axes, stretch, strict=True)))
        slices.append(tuple(slice(None) if s else per_axis[k]
                            for k, s in zip(axes, stretch, strict=True)))
        stretched.append(stretch)
    layout = draw(st.sampled_from(list(LAYOUTS)))
    base_shape = LAYOUTS[layout][0]
    bases = [draw(hnp.arrays(np.dtype(DTYPES[c]), base_shape(s), elements=elements(
        np.dtype(DTYPES[c])))) for c, s in zip(codes, shapes, strict=True)]
    tree = draw(expressions(n_inputs))
    mode = draw(st.sampled_from(MODES))
    reduction: tuple[str | None, int | None] = (None, None)
    if mode == "return":
        sizes = [_sliced_size(n, sl) for n, sl in zip(shape, per_axis, strict=True)]
        name = draw(st.sampled_from([None, "sum", "max", "min", "any", "all"]))
        axis = draw(st.sampled_from([None, *range(ndim)]))
        empty = 0 in (sizes if axis is None else [sizes[axis]])
        if name in ("max", "min") and empty:
            name = "sum"  # NumPy raises for empty max/min; tests/test_trace.py covers that
        reduction = (name, axis)
    factor = draw(st.sampled_from([2, -1, 3, 0.5, -0.0, True]))
    return Drawn(tree, codes, bases, layout, slices, stretched, mode, reduction, factor)


def make_kernel(drawn: Drawn, reduce: bool = True) -> Callable[..., Any]:
    body, mode, factor = drawn.tree.build(), drawn.mode, drawn.factor
    name, axis = drawn.reduction if reduce else (None, None)
    target = drawn.slices[0]

    def kernel(*xs: Any) -> Any:
        views = [x[sl] for x, sl in zip(xs, drawn.slices, strict=True)]
        value = np.asarray(body(*views))
        for v in views:  # the full broadcast shape, keeping every value (-0.0 too)
            value = value * np.ones(v.shape, bool)
        x0 = xs[0]
        if mode == "setitem":
            x0[target] = value
        elif mode == "iadd":
            x0[target] += value
        elif mode == "imul":
            x0[target] *= factor
        return value if name is None else getattr(np, name)(value, axis=axis)

    return _named(kernel, len(drawn.codes))


def _named(kernel: Callable[..., Any], n: int) -> Callable[..., Any]:
    """``kernel`` with named parameters (x0, x1, ...), as signatures require."""
    if n == 1:
        def named1(x0: Any) -> Any:
            return kernel(x0)
        return named1
    if n == 2:
        def named2(x0: Any, x1: Any) -> Any:
            return kernel(x0, x1)
        return named2

    def named3(x0: Any, x1: Any, x2: Any) -> Any:
        return kernel(x0, x1, x2)
    return named3


def numpy_result(kernel: Callable[..., Any], arrays: list[np.ndarray]) -> Any:
    with np.errstate(all="ignore"):
        try:
            return kernel(*arrays), None
        except (TypeError, ValueError, OverflowError) as err:  # no NumPy loop for this mix
            return None, err


def _uses(node: Any, ufuncs: set[np.ufunc]) -> bool:
    if not isinstance(node, Node):
        return node in ufuncs
    return any(_uses(a, ufuncs) for a in node.args)


def assert_sum_close(got: Any, want: Any, terms: np.ndarray, axis: int | None,
                     signed_zero: bool = True) -> None:
    """A float sum, which NumPy adds pairwise and aotc in its own order: both are within
    ``n * eps * sum|x|`` of the exact sum, so they are within twice that of each other.
    Where ``sum|x|`` reaches the largest float, the order decides whether a partial sum
    overflows (inf, or NaN from inf - inf): nothing is compared there."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    magnitude = np.sum(np.abs(terms.astype(np.longdouble)), axis=axis)
    n = terms.size if axis is None else terms.shape[axis]
    info = np.finfo(want.dtype)
    bound = 2 * max(n, 1) * np.longdouble(info.eps) * magnitude
    compared = ~(magnitude >= info.max)
    # Exact there: NaN from NaN terms, and the sign of a zero sum of zeros.
    assert_same(np.isnan(got[compared]), np.isnan(want[compared]), what="NaN in sums")
    assert_same(got[magnitude == 0], want[magnitude == 0], what="sums of zeros",
                signed_zero=signed_zero)
    diff = np.abs(got.astype(np.longdouble) - want.astype(np.longdouble))
    bad = compared & ~np.isnan(want) & ~(diff <= bound)
    assert not bad.any(), f"sums differ beyond {bound[bad]}: {got[bad]} vs {want[bad]}"


def _check(drawn: Drawn, compiled: bool) -> None:
    kernel = make_kernel(drawn)
    theirs = drawn.arguments()
    want, error = numpy_result(kernel, theirs)
    try:
        traced = trace_kernel(kernel, parse_signature_string(drawn.signature()), name="random")
        program = optimize(traced.program)
    except (AotcError, TypeError, ValueError) as err:
        if error is None:  # NumPy accepts it: only float16 (unsupported) may be refused
            assert "float16" in str(err), f"aotc rejected a kernel NumPy accepts: {err}"
            CASES["refused: float16"] += 1
        else:
            CASES["rejected like NumPy"] += 1
        return
    assume(error is None)  # NumPy itself rejects the kernel: nothing to compare
    run = JitKernel(program) if compiled else (lambda *a: eval_program(program, *a))
    mine = drawn.arguments()
    with np.errstate(all="ignore"):
        (got,) = run(*mine)
    name, axis = drawn.reduction
    # NumPy's own fmax/fmin loops return either zero for fmax(0.0, -0.0).
    signed_zero = not _uses(drawn.tree, {np.fmax, np.fmin})
    if name == "sum" and np.asarray(want).dtype.kind == "f":
        terms, _ = numpy_result(make_kernel(drawn, reduce=False), drawn.arguments())
        assert_sum_close(got, want, np.asarray(terms), axis, signed_zero)
    else:
        assert_same(got, np.asarray(want), what="result", signed_zero=signed_zero)
    assert_same(mine[0], theirs[0], what="argument 0 after the call", signed_zero=signed_zero)
    CASES["compiled" if compiled else "interpreted"] += 1
    CASES[f"layout {drawn.layout}"] += 1
    CASES[f"mode {drawn.mode}"] += 1
    if any(a.shape != theirs[0].shape for a in theirs):
        CASES["broadcast"] += 1
    if any(sl != slice(None) for sl in drawn.slices[0]):
        CASES["sliced"] += 1


# Example budgets scale with the Hypothesis profile (tests/conftest.py): the "ci"
# default is derandomized, HYPOTHESIS_PROFILE=random draws more, and differently each run.
# Interpreting a kernel is cheap; compiling one costs an LLVM build (a quarter of a
# second), so the compiled test draws half the profile's budget: 150 kernels under "ci".
EXAMPLES = settings().max_examples


@settings(max_examples=4 * EXAMPLES)
@given(kernels())
def test_random_kernels_interpreted(drawn: Drawn) -> None:
    _check(drawn, compiled=False)


@settings(max_examples=EXAMPLES // 2)
@given(kernels())
def test_random_kernels_compiled(drawn: Drawn) -> None:
    _check(drawn, compiled=True)
