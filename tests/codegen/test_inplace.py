"""Buffer planning for updates (:mod:`aotc.codegen.memory.inplace`): what the plan decides for
typical programs (no toolchain), and that compiled kernels compute what NumPy computes
whatever it decides: recurrences, loops over carried arrays, branches, writes into
arguments of every layout, and arguments that overlap each other or themselves."""

from __future__ import annotations

import numpy as np
import pytest

from aotc import f64, i64, lax
from aotc.codegen.core.jit import JitLibrary
from aotc.codegen.memory.inplace import Move, Update, covers, plan_buffers
from aotc.codegen.memory.layout import OutputHome, plan_layout
from aotc.interpret import eval_program
from aotc.ir import runs_loops
from aotc.ops.control import cond_p, for_loop_p
from aotc.ops.shape import broadcast_in_dim_p, update_slice_p
from aotc.passes import optimize
from aotc.shapes import DimExpr
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations

from .data import assert_same, copy_layout, layouts
from .programs import ProgramBuilder


def _program(fn, fuse=False):
    return optimize(trace_kernel(fn, signature_from_annotations(fn)).program,
                    verify_each=True, fuse=fuse)


def _eqns(program, prim):
    found = []
    for eqn in program.eqns:
        if eqn.prim is prim:
            found.append(eqn)
        for _, value in eqn.params:
            for nested in value if isinstance(value, tuple) else (value,):
                if hasattr(nested, "eqns"):
                    found.extend(_eqns(nested, prim))
    return found


# -- kernels -----------------------------------------------------------------------------

def ema(x: f64[:], alpha: f64):
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = alpha * x[i] + (1 - alpha) * y[i - 1]
    return y


def running_max_into(x: f64[:]):
    """Writes into its argument from a loop (the caller's array is the carry)."""
    for i in range(1, x.shape[0]):
        x[i] = max(x[i], x[i - 1])
    return x.sum()


def stencil_steps(u: f64[:, :], steps: i64):
    """Jacobi-like in-place stencil on an argument, several steps."""
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def stencil_result(u: f64[:, :], steps: i64):
    """The same stencil, returning a new array made from the final ``u`` (``return u``
    returns the caller's own array)."""
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u * 1.0


def fill_rows(a: i64, b: i64):
    """A nested loop writing a carried array."""
    out = np.zeros((a, b))
    for i in range(a):
        for j in range(b):
            out[i, j] = i * 10 + j
    return out


def halve_until(x: f64[:]):
    """A while loop whose array carry is updated in place, element by element."""
    def cond(state):
        v, k = state
        return (v[0] > 1.0) & (k < 50)

    def body(state):
        v, k = state
        v[0] = v[0] / 2.0
        return v, k + 1
    return lax.while_loop(cond, body, (x * 1.0, 0))


def branch_writes(x: f64[:], k: i64):
    """Both branches update a dying operand: the result takes over its buffer."""
    y = x * 2.0

    def first(v):
        v[0] = -1.0
        return v

    def second(v):
        v[-1] = 5.0
        return v
    return lax.cond(k > 0, first, second, y)


def shift_copy(x: f64[:]):
    """The update reads the very bytes it overwrites: staged."""
    y = x + 0.0
    y[1:] = y[:-1]
    return y


def keep_old(x: f64[:]):
    """The old version is still read after the update: a copy."""
    y = x + 1.0
    z = y.copy()
    z[0] = 100.0
    return y, z


def write_from_other(x: f64[:], y: f64[:]):
    """Writes into ``x`` from ``y``: wrong in place if the caller passes ``f(a, a)``."""
    x[1:] = y[:-1] * 2.0
    x[0] = y[-1]
    return y.sum()


def heat_steps(u: f64[:], steps: i64):
    """Time steps that each build a new array from the last (``u = new``)."""
    n = u.shape[0]
    for _ in range(steps):
        new = u.copy()
        for i in range(1, n - 1):
            new[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1])
        u = new
    return u


def fresh_branches(x: f64[:], k: i64):
    """Each branch makes its results fresh; the second returns one array twice."""
    def first(v):
        return v * 2.0, v + 1.0

    def second(v):
        w = v - 1.0
        return w, w
    return lax.cond(k > 0, first, second, x)


def smooth_steps(u: f64[:], steps: i64):
    """A whole-array time step: each ``u`` is a new array (fused), read by the next."""
    for _ in range(steps):
        u = 0.5 * (u + np.roll(u, 1))
    return u


def halve_array_until(x: f64[:]):
    """A while loop whose array carry is a new array each iteration."""
    def cond(state):
        v, k = state
        return (v[0] > 1.0) & (k < 50)

    def body(state):
        v, k = state
        return v[::-1] * 0.5, k + 1
    return lax.while_loop(cond, body, (x * 1.0, 0))


def nested_steps(u: f64[:, :], outer: i64, inner: i64):
    """Loops in loops, each making its carry anew."""
    for _ in range(outer):
        for _ in range(inner):
            u = u[::-1] + 1.0
        u = u * 2.0
    return u


KERNELS = [ema, running_max_into, stencil_steps, stencil_result, fill_rows, halve_until,
           branch_writes, shift_copy, keep_old, write_from_other, heat_steps, fresh_branches,
           smooth_steps, halve_array_until, nested_steps]


@pytest.fixture(scope="module")
def programs():
    return {f.__name__: _program(f) for f in KERNELS}


@pytest.fixture(scope="module")
def kernels(programs):
    library = JitLibrary(list(programs.values()))
    return dict(zip(programs, library.kernels, strict=True))


# -- plans -------------------------------------------------------------------------------

def test_recurrence_runs_in_the_output_buffer(programs):
    program = programs["ema"]
    layout = plan_layout(program)
    plan = layout.plan
    updates = [e for e in plan.updates if e.prim is update_slice_p]
    assert len(updates) == 2 and {plan.updates[u] for u in updates} == {Update.INPLACE}
    (versioned,) = _eqns(program, cond_p)  # with and without index checks
    assert (versioned, 0) in plan.reuse
    for loop in _eqns(program, for_loop_p):
        assert (loop, 0) in plan.reuse  # the carry takes over y's buffer: no initial copy
        assert plan.moves[(loop,)] == (Move.SKIP,)  # and no copy on the back edge
    assert set(layout.homes.values()) == {OutputHome(0)}  # y is built in the output
    assert layout.scratch_bytes.is_const and layout.scratch_bytes.value == 0


def test_argument_written_in_place_from_a_loop(programs):
    for name in ("running_max_into", "stencil_steps"):
        plan = plan_buffers(programs[name])
        assert plan.moves[("writeback",)] == (Move.SKIP,) * len(programs[name].writebacks)
        assert plan.inplace_args == {0}
        assert set(plan.updates.values()) <= {Update.INPLACE, Update.DIRECT}


def test_update_of_a_value_read_later_copies(programs):
    plan = plan_buffers(programs["keep_old"])
    updates = _eqns(programs["keep_old"], update_slice_p)
    assert updates and all(e not in plan.updates for e in updates)


def test_update_reading_its_own_base_is_staged(programs):
    plan = plan_buffers(programs["shift_copy"])
    assert list(plan.updates.values()) == [Update.STAGED]


def test_branch_result_takes_over_the_dying_operand(programs):
    program = programs["branch_writes"]
    plan = plan_buffers(program)
    (branch,) = _eqns(program, cond_p)
    assert (branch, 0) in plan.reuse
    assert plan.moves[(branch, 0)] == plan.moves[(branch, 1)] == (Move.SKIP,)
    assert all(m is Update.INPLACE for m in plan.updates.values())


def test_branches_build_their_fresh_results_in_the_conds_buffer(programs):
    """The loop versioning ``cond`` s of ``heat_steps`` (around the whole nest, and
    around the inner loop of its checked copy): each version's loop carries its result
    in the ``cond``'s own buffer, so none copies it out; and each copy of the time loop
    trades ``u``'s buffer for ``new``'s on its back edge (the inner loop reads ``u``
    while it writes ``new``, so they are two buffers, but no copy)."""
    program = programs["heat_steps"]
    plan = plan_buffers(program)
    versioned = _eqns(program, cond_p)
    assert len(versioned) == 2
    for cond in versioned:
        assert plan.moves[(cond, 0)] == plan.moves[(cond, 1)] == (Move.SKIP,)
    times = [e for e in _eqns(program, for_loop_p) if runs_loops(e.params["body"])]
    assert len(times) == 2 and all(plan.moves[(e,)] == (Move.SWAP,) for e in times)
    (branch,) = _eqns(programs["fresh_branches"], cond_p)
    moves = plan_buffers(programs["fresh_branches"]).moves
    assert moves[(branch, 1)] == (Move.SKIP, Move.SKIP)  # branches: (false, true)
    assert Move.SKIP not in moves[(branch, 0)]  # one array for two results: copied


@pytest.mark.parametrize("name", ["smooth_steps", "halve_array_until", "nested_steps"])
def test_new_arrays_trade_buffers_with_their_carry(programs, name):
    """No back edge copies an array made anew each iteration: it trades places with
    the carry's buffer (``Move.SWAP``); nested loops each trade their own pair."""
    plan = plan_buffers(programs[name])
    loops = [key[0] for key in plan.moves if len(key) == 1 and key[0] != "writeback"]
    assert loops
    for loop in loops:
        arrays = [m for m, v in zip(plan.moves[(loop,)], loop.outs, strict=True) if v.type.ndim]
        assert arrays == [Move.SWAP] * len(arrays) and arrays, (name, loop.prim)


def test_swapped_carries_are_staged():
    def swap(x: f64[4], y: f64[4], n: i64):
        return lax.fori_loop(0, n, lambda i, s: (s[1], s[0] + 1.0), (x * 1.0, y * 1.0))

    program = _program(swap)
    (loop,) = _eqns(program, for_loop_p)
    assert plan_buffers(program).moves[(loop,)] == (Move.STAGE, Move.COPY)


def test_views_of_the_base_keep_it_alive():
    """``s`` views ``y`` and is read after the update: the update must copy."""
    pb = ProgramBuilder("view_alive")
    x = pb.array("f8", "n")
    y = pb.apply("mul", x, np.float64(2.0))
    s = pb.apply("slice", y, start=(0,), step=(1,), shape=(1,))
    one = pb.apply("reshape", np.float64(7.0), new_sizes=(1,))
    u = pb.apply("update_slice", y, one, start=(0,), step=(1,))
    program = pb.build(u, pb.apply("add", s, np.float64(1.0)))
    assert not plan_buffers(program).updates
    # ...and once nothing reads the view afterwards, it writes in place.
    pb2 = ProgramBuilder("view_dead")
    x = pb2.array("f8", "n")
    y = pb2.apply("mul", x, np.float64(2.0))
    s = pb2.apply("slice", y, start=(0,), step=(1,), shape=(1,))
    t = pb2.apply("add", s, np.float64(1.0))
    one = pb2.apply("reshape", np.float64(7.0), new_sizes=(1,))
    u = pb2.apply("update_slice", y, one, start=(0,), step=(1,))
    assert list(plan_buffers(pb2.build(u, t)).updates.values()) == [Update.INPLACE]


def interior_from_other(x: f64[:]):
    """The block's producer reads nothing of the base: it writes into the block."""
    y = x + 1.0
    y[1:-1] = x[:-2] * 2.0 - x[2:]
    return y


def last_axis_fill(x: f64[:]):
    """``out[:, :, k] = f(x)``: f's (n, n) result is the (n, n, 1) block, computed into
    it (the reshape adding the size-1 axis is no temporary)."""
    out = np.zeros((x.shape[0], x.shape[0], 2))
    out[:, :, 0] = x[:, None] - x[None, :]
    out[:, :, 1] = x[:, None] * x[None, :] + 1.0
    return out


def empty_filled(x: f64[:]):
    """np.empty whose every element is written before any read: never zero-filled."""
    out = np.empty((x.shape[0], 3))
    out[:, 0] = x
    out[:, 2] = 1.0
    out[:, 1] = x * x
    return out


def zeros_partly_written(x: f64[:]):
    """np.zeros with one column left alone: that column must stay zero."""
    out = np.zeros((x.shape[0], 3))
    out[:, 0] = x
    out[:, 2] = x + 1.0
    return out


def read_before_covered(x: f64[:]):
    """A read between the writes: the zeros it sees must be there."""
    out = np.zeros((x.shape[0], 2))
    out[:, 0] = x
    total = out.sum()
    out[:, 1] = total
    return out


def increment(x: f64[:], k: f64):
    """``x += k`` on an argument: computed straight into the caller's array."""
    x += k
    x *= 2.0
    return x.sum()


def shift_subtract(x: f64[:]):
    """``x[1:] -= x[:-1]`` reads what it overwrites: never computed into the block."""
    x[1:] -= x[:-1]
    return x


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
def test_destinations_passed_to_producers(fuse):
    plan = plan_buffers(_program(interior_from_other, fuse))
    assert list(plan.updates.values()) == [Update.DIRECT] and len(plan.direct) == 1
    plan = plan_buffers(_program(increment, fuse))
    assert plan.overwrite and plan.moves[("writeback",)] == (Move.SKIP,)
    plan = plan_buffers(_program(shift_subtract, fuse))
    assert Update.DIRECT not in plan.updates.values() and not plan.direct
    plan = plan_buffers(_program(last_axis_fill, fuse))
    assert list(plan.updates.values()) == [Update.DIRECT] * 2 and len(plan.direct) == 2


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
def test_destination_passing_compiled(fuse):
    fns = [interior_from_other, increment, shift_subtract, last_axis_fill, empty_filled,
           zeros_partly_written, read_before_covered]
    library = JitLibrary([_program(f, fuse) for f in fns])
    x = np.random.default_rng(5).standard_normal(12)
    for fn, kernel in zip(fns, library.kernels, strict=True):
        args = (x, 1.5) if fn is increment else (x,)
        for xl in layouts(x).values():
            if xl.strides[0] != 0:
                _numpy_check(kernel, fn, xl, *args[1:], rtol=1e-15)


# -- compiled, against NumPy -----------------------------------------------------------

def _numpy_check(kernel, fn, *args, rtol=0.0):
    """Kernel on same-layout copies vs the NumPy function on plain copies: outputs and
    every argument after the call."""
    mine = [copy_layout(a) for a in args]
    theirs = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
    got = kernel(*mine)
    want = fn(*theirs)
    want = list(want) if isinstance(want, tuple) else [want]
    for j, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_same(g, np.asarray(w), rtol=rtol, what=f"{fn.__name__} output {j}")
    for k, (m, t) in enumerate(zip(mine, theirs, strict=True)):
        if isinstance(t, np.ndarray):
            assert_same(np.asarray(m), t, rtol=rtol, what=f"{fn.__name__} argument {k}")


def test_recurrence(kernels):
    x = np.random.default_rng(1).standard_normal(37)
    for xl in layouts(x).values():
        _numpy_check(kernels["ema"], ema, xl, 0.3)
    _numpy_check(kernels["ema"], ema, x[:1], 0.3)


def test_loops_writing_into_arguments(kernels):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(23)
    for xl in layouts(x).values():
        if xl.strides[0] == 0:
            continue  # writing into a broadcast: see test_self_overlapping_argument
        _numpy_check(kernels["running_max_into"], running_max_into, xl, rtol=1e-15)
    u = rng.standard_normal((7, 9))
    for ul in layouts(u).values():
        if 0 in ul.strides:
            continue
        for steps in (0, 1, 3):
            _numpy_check(kernels["stencil_steps"], stencil_steps, ul, steps)


def test_nested_and_while_loops_and_branches(kernels):
    for a, b in ((3, 4), (1, 1), (0, 2)):
        _numpy_check(kernels["fill_rows"], fill_rows, a, b)
    x = np.array([100.0, 3.0, -2.0])
    for xl in layouts(x).values():
        want = eval_program(kernels["halve_until"].program, np.array(xl))
        for g, w in zip(kernels["halve_until"](xl), want, strict=True):
            assert_same(g, w, what="halve_until")
        for k in (-1, 0, 1):
            want = eval_program(kernels["branch_writes"].program, np.array(xl), k)
            assert_same(kernels["branch_writes"](xl, k)[0], want[0], what="branch_writes")


def _heat_reference(u, steps):
    u = np.array(u, dtype=float)
    for _ in range(steps):
        new = u.copy()
        new[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2 * u[1:-1] + u[2:])
        u = new
    return u


def test_time_steps_and_fresh_branches(kernels):
    u = np.random.default_rng(7).standard_normal(29)
    for ul in layouts(u).values():
        before = np.array(ul)
        for steps in (0, 1, 4):
            got = kernels["heat_steps"](ul, steps)[0]
            assert_same(got, _heat_reference(before, steps), rtol=1e-15, what="heat_steps")
            assert_same(np.asarray(ul), before, what="heat_steps argument")  # only read
        for k in (-1, 1):
            got = kernels["fresh_branches"](ul, k)
            want = (ul * 2.0, ul + 1.0) if k > 0 else (ul - 1.0, ul - 1.0)
            for g, w in zip(got, want, strict=True):
                assert_same(g, np.asarray(w), what="fresh_branches")


def test_traded_buffers_compute_numpys_values(kernels):
    """Even and odd trip counts (the result ends in either buffer), none at all, and
    every layout of the argument, which is only read."""
    rng = np.random.default_rng(8)
    u = rng.standard_normal(13)
    for ul in layouts(u).values():
        for steps in range(5):
            _numpy_check(kernels["smooth_steps"], smooth_steps, ul, steps, rtol=1e-15)
        x = np.array(ul) * 40.0
        want = eval_program(kernels["halve_array_until"].program, x.copy())
        for g, w in zip(kernels["halve_array_until"](x), want, strict=True):
            assert_same(g, w, what="halve_array_until")
    grid = rng.standard_normal((4, 3))
    for gl in layouts(grid).values():
        for outer, inner in ((0, 2), (1, 1), (2, 3), (3, 0)):
            _numpy_check(kernels["nested_steps"], nested_steps, gl, outer, inner)


def test_staged_and_copied_updates(kernels):
    x = np.arange(6.0)
    for xl in layouts(x).values():
        _numpy_check(kernels["shift_copy"], shift_copy, xl)
        _numpy_check(kernels["keep_old"], keep_old, xl)


def test_arguments_overlapping_each_other_use_scratch(kernels):
    """``f(a, a)`` and overlapping views: the kernel's writes cannot be seen early, so
    the result is the one of the functional program (writes at the end)."""
    kernel, program = kernels["write_from_other"], kernels["write_from_other"].program
    base = np.arange(10.0)
    for x_of, y_of in ((lambda a: a, lambda a: a), (lambda a: a[1:], lambda a: a[:-1]),
                       (lambda a: a[:5], lambda a: a[5:]), (lambda a: a[::2], lambda a: a[1::2])):
        mine, theirs = base.copy(), base.copy()
        got = kernel(x_of(mine), y_of(mine))
        x_ref, y_ref = x_of(theirs).copy(), y_of(theirs).copy()
        want = eval_program(program, x_ref, y_ref)
        assert_same(got[0], want[0], what="output")
        expected = theirs.copy()
        x_of(expected)[...] = x_ref  # the only write is into x
        assert_same(mine, expected, what="memory after the call")


def test_self_overlapping_argument_uses_scratch(kernels):
    """A zero stride makes every row one memory row: in-place updates would be seen by
    reads of the other rows. The kernel must still compute the functional result."""
    kernel = kernels["stencil_result"]
    row = np.random.default_rng(4).standard_normal(6)
    u = np.broadcast_to(row, (5, 6))
    want = eval_program(kernel.program.replace(writebacks=()), np.array(u), 2)
    got = kernel(copy_layout(u), 2)
    assert_same(got[0], want[0], what="stencil on a broadcast argument")


# -- generated code ------------------------------------------------------------------------

def test_recurrence_keeps_scalars_in_registers(programs):
    from aotc.codegen import TargetSpec, emit_llvm

    text = emit_llvm([("ema", programs["ema"])], TargetSpec("x86-64-v3"))
    body = text[text.index("define"):]
    assert "alloca" not in body and "memcpy" not in body and "memmove" not in body


def test_elementwise_and_matmul_on_arguments_vectorize():
    from aotc.codegen import TargetSpec, emit_llvm

    def affine(x: f64[:]):
        return np.sqrt(x) * 2 + 1

    def matmul(a: f64[:, :], b: f64[:, :]):
        return a @ b

    text = emit_llvm([("affine", _program(affine))], TargetSpec("x86-64-v3"))
    assert "@llvm.sqrt.v4f64(<4 x double> %wide.load" in text  # reads x itself, 4 at a time
    text = emit_llvm([("matmul", _program(matmul))], TargetSpec("x86-64-v3"))
    assert "@llvm.fma.v4f64(<4 x double>" in text  # the GEMM micro-kernel's AVX2 vectors


def test_matmul_in_every_layout():
    """A float matmul (the GEMM: blocked, vectorized, fused multiply-adds) sums in its own
    order, so it is held to the order-independent bound ``k u |a| |b|`` (Higham 3.5;
    ``(k + 2) eps`` here, with slack), in every layout of both operands."""
    def matmul(a: f64[:, :], b: f64[:, :]):
        return a @ b

    (kernel,) = JitLibrary([_program(matmul)]).kernels
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((9, 13)) * 1e3, rng.standard_normal((13, 11))
    for al in layouts(a).values():
        for bl in layouts(b).values():
            exact = np.matmul(al.astype(np.longdouble), bl.astype(np.longdouble))
            bound = (13 + 2) * np.finfo(np.float64).eps * (np.abs(al) @ np.abs(bl))
            assert np.all(np.abs(kernel(al, bl)[0] - exact) <= bound)


# -- the differential catalog's writes, compiled -----------------------------------------

def _write_cases():
    from numpy_cases_extended import EXTENDED_CASES

    return [c for c in EXTENDED_CASES if "writes" in c.tags]


def _layout_variants(args):
    """``args`` as given, then each array argument in every other non-broadcast layout."""
    yield args
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.ndim:
            for name, variant in layouts(a).items():
                if name not in ("c", "broadcast"):
                    yield (*args[:k], variant, *args[k + 1:])


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize("case", _write_cases(), ids=lambda c: c.name)
def test_write_cases_compiled(case, fuse):
    """Writes into arguments and fresh arrays, compiled, against NumPy itself: outputs
    (sums may reorder: a few ulps) and every argument after the call (exactly)."""
    from numpy_cases import assert_arguments_after, copy_arguments, outputs_of, snapshot
    from numpy_cases import assert_same as assert_ulps

    from aotc.codegen.core.jit import JitKernel
    from aotc.types import parse_signature_string

    traced = trace_kernel(case.fn, parse_signature_string(case.signature), name=case.name)
    kernel = JitKernel(optimize(traced.program, fuse=fuse))
    for given in case.inputs:
        for args in _layout_variants(given):
            before = snapshot(args)
            mine, theirs = copy_arguments(args), copy_arguments(args)
            with np.errstate(all="ignore"):
                expected = outputs_of(case.fn(*theirs))
            got = kernel(*mine)
            where = f"{case.name}{[getattr(a, 'strides', None) for a in args]}"
            for g, e in zip(got, expected, strict=True):
                assert_ulps(g, np.asarray(e), max(case.ulps, 4), where)
            assert_arguments_after(where, mine, theirs, before)


def test_blocks_cover_the_array():
    n = DimExpr.sym("n")
    zero, one, two, three = (DimExpr.const(k) for k in range(4))
    shape = (n, three)
    column = [((zero, DimExpr.const(k)), (n, one)) for k in range(3)]
    assert covers(shape, column)
    assert not covers(shape, column[:2])
    assert covers(shape, [column[0], ((zero, one), (n, two))])  # spans may be wider
    assert covers(shape, [((zero, zero), (n, three))])
    assert not covers(shape, [((one, zero), (n - 1, three))])  # a row left out
    assert not covers((n, n), [((zero, zero), (n, one))])  # no constant axis to tile


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
def test_an_overwritten_empty_is_a_buffer_never_filled(fuse):
    program = _program(empty_filled, fuse)
    (base,) = [e.outs[0] for e in program.eqns if e.prim is broadcast_in_dim_p
               and not e.inputs[0].type.ndim and e.outs[0].type.ndim == 2]
    assert base in plan_buffers(program).buffer  # a buffer version, not a broadcast view
    for fn in (zeros_partly_written, read_before_covered):
        kept = _program(fn, fuse)
        assert not [e for e in kept.eqns if e.prim is broadcast_in_dim_p
                    and not e.inputs[0].type.ndim
                    and e.outs[0] in plan_buffers(kept).buffer]
