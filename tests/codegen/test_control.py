"""Structured control flow compiled: loops with scalar and array carries, carries that a
body swaps or returns as views, nested loops, branches and scans. Kernels are traced
with ``aotc.lax`` and compared with the reference interpreter (and NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

from aotc import f64, i64, lax, u8
from aotc.codegen.core.jit import JitLibrary
from aotc.codegen.core.runtime import body_work
from aotc.codegen.memory.inplace import plan_buffers
from aotc.ir import AType, Eqn, Lit, Params, Program, Var
from aotc.ops.control import cond_p, for_loop_p, while_loop_p
from aotc.passes import optimize
from aotc.passes.loop_versioning import versioned_loops
from aotc.shapes import DimExpr
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations

from .data import assert_same, before_a_guard_page, check_call, copy_layout, layouts
from .test_inplace import ema


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


# -- views in a loop's or branch's state (NumPy's aliasing across a body) ----------------
# A view of an array (``u = U[1:-1]``) updated in a runtime loop is its base updated: the
# body must read the base's new values every iteration, and the view's slice must never
# be a value of the body's program used after it (that was a codegen ``KeyError: Var#``).
# Each kernel runs as plain NumPy for the expected result, outputs and arguments exact.

def padded_1d(x: f64[:], k: i64):
    """A diffusion step through a view of a padded array; the stencil reads the base."""
    U = np.zeros(x.shape[0] + 2)
    u = U[1:-1]
    u[:] = x
    for _ in range(k):
        u += 0.1 * (U[:-2] - 2 * U[1:-1] + U[2:])
    return U


def padded_2d(x: f64[:, :], k: i64):
    U = np.zeros((x.shape[0] + 2, x.shape[1] + 2))
    u = U[1:-1, 1:-1]
    u[:] = x
    for _ in range(k):
        u += 0.1 * (U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4 * u)
    return U


def several_views(x: f64[:], k: i64):
    """Writes through three overlapping views of one base in the same body."""
    U = np.zeros(x.shape[0] + 2)
    a, b, c = U[1:-1], U[:-2], U[2:]
    a[:] = x
    for _ in range(k):
        a += 1.0
        b *= 0.5
        c -= U[1:-1] * 0.25
    return U


def swapped_views(x: f64[:], k: i64):
    """Double buffering: the arrays and their views swap names every iteration."""
    U, V = np.zeros(x.shape[0] + 2), np.zeros(x.shape[0] + 2)
    u, v = U[1:-1], V[1:-1]
    u[:] = x
    for _ in range(k):
        v[:] = 0.5 * (U[:-2] + U[2:]) + u
        U, V = V, U
        u, v = v, u
    return U, V, u


def view_in_loop_and_if(x: f64[:], k: i64, t: i64):
    U = np.zeros(x.shape[0] + 2)
    u = U[1:-1]
    u[:] = x
    for i in range(k):
        if i < t:
            u += U[:-2]
        else:
            U[2:] -= u * 0.5
    return U


def view_in_nested_loops(x: f64[:], k: i64, m: i64):
    U = np.zeros(x.shape[0] + 2)
    u = U[1:-1]
    u[:] = x
    for _ in range(k):
        for _ in range(m):
            u += U[:-2] * 0.5
        U[0] += 1.0
    return U


def view_in_while(x: f64[:]):
    """The view is read by the loop's test and written by its body."""
    U = np.zeros(x.shape[0] + 2)
    u = U[1:-1]
    u[:] = x
    while u[0] < 10.0:
        u += U[2:] + 1.0
    return U


def stale_view_read_in_loop(x: f64[:], k: i64):
    """The base is written after the view is made; the view is first read in the body."""
    X = np.zeros(x.shape[0] + 2)
    u = X[1:-1]
    X[1:-1] = x
    s = 0.0
    for _ in range(k):
        s += u.sum()
    return u * 2.0 + s


def view_of_argument(x: f64[:], k: i64):
    """Writes into the caller's array through a view; reads it through the base."""
    u = x[1:]
    for _ in range(k):
        u += x[:-1] * 0.5
    return x.sum()


def rebound_views(x: f64[:], k: i64):
    """Views the body rebinds are carried as values: u to a new array, w to a new view."""
    U = np.zeros(x.shape[0] + 2)
    U[1:-1] = x
    u, w = U[1:-1], U[1:]
    for _ in range(k):
        u = u * 2.0
        w = U[:-1]
        w += 1.0
    return U, u, w


def view_written_in_branch(x: f64[:], t: i64):
    U = np.zeros(x.shape[0] + 2)
    u = U[1:-1]
    u[:] = x
    if t > 0:
        u += U[2:]
    return U, u


N = f64["n"]  # the double buffers share their size


def swapped_arguments(a: N, b: N, k: i64):
    """The caller's arrays are double buffers: which holds what depends on k's parity."""
    for _ in range(k):
        b[1:-1] = 0.5 * (a[:-2] + a[2:])
        a, b = b, a
    return a.sum()


def swapped_arguments_while(a: N, b: N, k: i64):
    i = 0
    while i < k:
        b[1:-1] = 0.5 * (a[:-2] + a[2:])
        a, b = b, a
        i += 1
    return a.sum()


def rotated_arguments(a: N, b: N, c: N, k: i64):
    for _ in range(k):
        c[:] = a + 2 * b
        a, b, c = b, c, a
    return a.sum() + 10 * b.sum()


def grayscott(counts, Du, Dv, F, k):
    """numpy-benchmarks' Gray-Scott (n=300 there), with a deterministic start."""
    n = 24
    U = np.zeros((n+2,n+2), dtype=np.float32)
    V = np.zeros((n+2,n+2), dtype=np.float32)
    u, v = U[1:-1,1:-1], V[1:-1,1:-1]
    r = 4
    u[:] = 1.0
    U[n//2-r:n//2+r,n//2-r:n//2+r] = 0.50
    V[n//2-r:n//2+r,n//2-r:n//2+r] = 0.25
    u += 0.15
    v += 0.15
    for _ in range(counts):
        Lu = (                 U[0:-2,1:-1] +
              U[1:-1,0:-2] - 4*U[1:-1,1:-1] + U[1:-1,2:] +
                               U[2:  ,1:-1] )
        Lv = (                 V[0:-2,1:-1] +
              V[1:-1,0:-2] - 4*V[1:-1,1:-1] + V[1:-1,2:] +
                               V[2:  ,1:-1] )
        uvv = u*v*v
        u += Du*Lu - uvv + F*(1 - u)
        v += Dv*Lv + uvv - k*v
    return V


def _grayscott_steps(counts, Du, Dv, F, k, dtype, n):
    U, V = np.zeros((n + 2, n + 2), dtype=dtype), np.zeros((n + 2, n + 2), dtype=dtype)
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    u[:] = 1.0
    U[n // 2 - 2:n // 2 + 2, n // 2 - 2:n // 2 + 2] = 0.50
    V[n // 2 - 2:n // 2 + 2, n // 2 - 2:n // 2 + 2] = 0.25
    for _ in range(counts):
        Lu = U[:-2, 1:-1] + U[1:-1, :-2] - 4 * U[1:-1, 1:-1] + U[1:-1, 2:] + U[2:, 1:-1]
        Lv = V[:-2, 1:-1] + V[1:-1, :-2] - 4 * V[1:-1, 1:-1] + V[1:-1, 2:] + V[2:, 1:-1]
        uvv = u * v * v
        u += Du * Lu - uvv + F * (1 - u)
        v += Dv * Lv + uvv - k * v
    return U, V


def grayscott_f64_small(counts: i64, Du: f64, Dv: f64, F: f64, k: f64):
    """The same in float64 on a small grid, through a helper function."""
    return _grayscott_steps(counts, Du, Dv, F, k, np.float64, 6)


VIEW_KERNELS = [padded_1d, padded_2d, several_views, swapped_views, view_in_loop_and_if,
                view_in_nested_loops, view_in_while, stale_view_read_in_loop, view_of_argument,
                rebound_views, view_written_in_branch, swapped_arguments,
                swapped_arguments_while, rotated_arguments, grayscott_f64_small]


def _traced(fn) -> Program:
    if fn is grayscott:
        from aotc.types import parse_signature_string

        return trace_kernel(fn, parse_signature_string("f4[:,:](i8, f4, f4, f4, f4)")).program
    return trace_kernel(fn, signature_from_annotations(fn)).program


@pytest.fixture(scope="module", params=[False, True], ids=["unfused", "fused"])
def view_kernels(request):
    fns = [*VIEW_KERNELS, grayscott]
    programs = [optimize(_traced(f), verify_each=True, fuse=request.param) for f in fns]
    library = JitLibrary(programs)
    return {f.__name__: k for f, k in zip(fns, library.kernels, strict=True)}


def _against_numpy(kernels, fn, *args):
    """Outputs and every array argument after the call, bit for bit: the compiled loop
    does NumPy's operations in NumPy's order (no fast-math, so nothing is contracted)."""
    kernel = kernels[fn.__name__]
    mine = [copy_layout(a) for a in args]
    theirs = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
    got = kernel(*mine)
    want = fn(*theirs)
    want = list(want) if isinstance(want, tuple) else [want]
    assert len(got) == len(want)
    for j, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_same(g, np.asarray(w), what=f"{fn.__name__}{args[1:]} output {j}")
    for j, (m, t) in enumerate(zip(mine, theirs, strict=True)):
        if isinstance(t, np.ndarray):
            assert_same(np.asarray(m), t, what=f"{fn.__name__}{args[1:]} argument {j}")


X1 = np.linspace(-0.5, 1.0, 6)
X2 = np.arange(20.0).reshape(4, 5) * 0.1


@pytest.mark.parametrize("fn", [padded_1d, several_views, swapped_views, stale_view_read_in_loop,
                                rebound_views], ids=lambda f: f.__name__)
def test_views_of_padded_arrays_in_loops(view_kernels, fn):
    for k in (0, 1, 2, 5):
        for x in layouts(X1).values():
            _against_numpy(view_kernels, fn, x, k)


def test_view_of_a_padded_grid(view_kernels):
    for k in (0, 1, 3):
        for x in layouts(X2).values():
            _against_numpy(view_kernels, padded_2d, x, k)


def test_views_written_in_branches_and_nested_loops(view_kernels):
    for k, t in ((0, 0), (4, 2), (5, 0), (3, 9)):
        _against_numpy(view_kernels, view_in_loop_and_if, X1, k, t)
    for k, m in ((0, 3), (2, 0), (2, 3)):
        _against_numpy(view_kernels, view_in_nested_loops, X1, k, m)
    for t in (-1, 1):
        _against_numpy(view_kernels, view_written_in_branch, X1, t)
    for x in (X1, X1 + 20.0, X1 - 3.0):
        _against_numpy(view_kernels, view_in_while, x)


def test_view_of_an_argument_written_in_a_loop(view_kernels):
    for k in (0, 1, 4):
        for x in layouts(X1).values():
            if 0 not in x.strides:
                _against_numpy(view_kernels, view_of_argument, x, k)


@pytest.mark.parametrize("fn", [swapped_arguments, swapped_arguments_while, rotated_arguments],
                         ids=lambda f: f.__name__)
def test_arrays_swapped_in_a_loop_hold_numpys_values(view_kernels, fn):
    """After ``a, b = b, a`` in a loop that writes them, the caller's arrays hold what
    NumPy's do: which depends on the trip count modulo the cycle's length."""
    arrays = [np.arange(7.0) * (j + 1) for j in range(fn.__code__.co_argcount - 1)]
    for k in range(7):
        _against_numpy(view_kernels, fn, *arrays, k)


def test_grayscott_benchmark_matches_numpy(view_kernels):
    """The numpy-benchmarks kernel that failed with ``KeyError: Var#``: bit for bit."""
    params = tuple(np.float32(p) for p in (0.16, 0.08, 0.035, 0.065))
    for counts in (0, 1, 20):
        _against_numpy(view_kernels, grayscott, counts, *params)
    for counts in (0, 3, 40):
        _against_numpy(view_kernels, grayscott_f64_small, counts, 0.16, 0.08, 0.035, 0.065)


def test_padded_arrays_are_the_loop_carries():
    """The loop carries U and V (updated in place), not copies of the views u and v, and
    the views' slices are all inside the body."""
    program = optimize(_traced(grayscott), verify_each=True)
    (loop,) = [e for e in program.eqns if e.prim is for_loop_p]
    assert [o.type.shape for o in loop.outs] == [(DimExpr.const(26),) * 2] * 2
    body = loop.params["body"]
    assert [e.prim.name for e in body.eqns].count("update_slice") == 2


def test_an_element_written_in_place_is_the_work_of_an_iteration():
    """The loop writes one element of ``y`` per iteration in place: its work between
    polls is a few operations, not ``y``'s size (the runtime was polled every iteration,
    five times slower than Numba on a 10^7 recurrence)."""
    program = optimize(trace_kernel(ema, signature_from_annotations(ema)).program)
    (versioned,) = [e for e in program.eqns if e.prim is cond_p]
    for loop in versioned_loops(versioned) or ():  # with and without index checks
        work = body_work(loop.params["body"], plan=plan_buffers(program))
        assert work.is_const and work.value < 100, work
        assert not body_work(loop.params["body"]).is_const  # unplanned: a copy of y


def neighbour_sums(img: u8[:, :]):
    h, w = img.shape
    out = np.zeros((h, w - 1), dtype=np.uint8)
    for i in range(h):
        for j in range(w - 1):
            out[i, j] = img[i, j] + img[i, j + 1]
    return out


def test_a_nested_loop_writing_in_place_is_not_the_work_of_its_size():
    """The row loop's body is the column loop (versioned, in the checked nest), whose
    result takes over ``out``: a few operations between polls of the row loop, not
    ``out``'s size."""
    program = optimize(trace_kernel(neighbour_sums,
                                    signature_from_annotations(neighbour_sums)).program)
    (versioned,) = [e for e in program.eqns if e.prim is cond_p]
    for rows in versioned_loops(versioned) or ():  # the nest with and without checks
        work = body_work(rows.params["body"], plan=plan_buffers(program))
        assert work.is_const and work.value < 1000, work
        assert not body_work(rows.params["body"]).is_const  # unplanned: all of out


def summed_until_negative(x: f64[:]) -> f64:
    s = x[0]
    while s >= 0.0:
        s = np.sum(x * 0.5) + 1.0
    return s


def test_a_sum_is_the_work_of_what_it_reads():
    """``np.sum(x * 0.5)`` fuses into one loop that makes a single number: its work is
    ``x``'s size, not one element (counted as one, the ``while`` loop polled every
    200,000 sums, and a signal took seconds to stop it under emulation)."""
    program = optimize(trace_kernel(summed_until_negative,
                                    signature_from_annotations(summed_until_negative)).program)
    (loop,) = [e for e in program.eqns if e.prim is while_loop_p]
    work = body_work(loop.params["body"], plan=plan_buffers(program))
    (n,) = program.inputs[0].type.shape
    assert not work.is_const and (work - n).is_const, work


def offset_read(x: f64[:], off: i64[:]) -> f64:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i - off[100]]
    return s


def guarded_offset_read(x: f64[:], off: i64[:], t: i64) -> f64:
    s = 0.0
    for i in range(x.shape[0]):
        if i > t:
            s += x[i - off[100]]
    return s


def test_versioning_reads_no_element_the_loop_would_not():
    """An invariant element read (``off[100]``) stays in the loop: read before it to
    prove its checks, it was read where Python never reads it (a loop that runs no
    time, a branch never taken), past ``off``'s end: with ``off`` just before an
    inaccessible page, the kernel crashed."""
    library = JitLibrary([_program(offset_read), _program(guarded_offset_read)])
    plain, branch = library.kernels
    keep: list = []
    off = before_a_guard_page(np.zeros(1, np.int64), keep)
    assert plain(np.zeros(0), off)[0] == offset_read(np.zeros(0), off) == 0.0
    x = np.arange(5.0)
    assert branch(x, off, np.int64(10))[0] == guarded_offset_read(x, off, 10) == 0.0
    wide = np.arange(200, dtype=np.int64)
    assert plain(np.arange(300.0), wide)[0] == offset_read(np.arange(300.0), wide)
