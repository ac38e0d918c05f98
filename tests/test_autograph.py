"""Python control flow on traced values: converted, traced, and compared with running
the very same kernel as plain Python on NumPy inputs."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from aotc import f64, i64
from aotc.autograph.hoisting import hoist_changing_calls
from aotc.errors import TraceError
from aotc.interpret import eval_program
from aotc.ir import verify
from aotc.ops.index import KernelError
from aotc.passes import optimize
from aotc.passes.loop_versioning import top_loops
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations


def compiled(fn):
    program = trace_kernel(fn, signature_from_annotations(fn)).program
    verify(program)
    return optimize(program, verify_each=True)


def check(fn, *args, rtol=0.0):
    program = compiled(fn)
    expected = fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
    got = eval_program(program, *args)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=rtol)
        assert g.dtype == np.asarray(e).dtype
    return program


def prims(program):
    return [e.prim.name for e in program.eqns]


def ema(x: f64[:], alpha: float):
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = alpha * x[i] + (1 - alpha) * y[i - 1]
    return y


def test_recurrence_over_runtime_range_becomes_one_loop():
    program = check(ema, np.random.default_rng(0).standard_normal(50), 0.25)
    assert len(top_loops(program)) == 1


def newton_sqrt(a: f64):
    x = a
    steps = 0
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


def test_while_until_convergence():
    program = check(newton_sqrt, 10.0)
    assert "while_loop" in prims(program)


def piecewise(x: f64, k: i64):
    if x > 1.0:
        y = x * 2
    elif x < -1.0:
        y = -x
    else:
        y = x + k
    return y


@pytest.mark.parametrize("x", [2.0, -3.0, 0.5])
def test_if_elif_else_on_traced_scalars(x):
    program = check(piecewise, x, 3)
    assert "cond" in prims(program)


def row_norms(m: f64[:, :]):
    out = np.zeros(m.shape[0])
    for i, row in enumerate(m):
        out[i] = np.sqrt(np.sum(row * row))
    total = 0.0
    for row in m:
        total += row[0]
    return out, total


def test_enumerate_and_rows():
    check(row_norms, np.arange(12.0).reshape(4, 3), rtol=1e-15)


def unrolled(x: f64[:]):
    acc = 0.0
    for k in range(3):
        acc = acc + x[k] * k
    return acc


def test_build_time_bounds_unroll():
    program = check(unrolled, np.arange(5.0))
    assert "for_loop" not in prims(program)


def long_static(x: f64[:]):
    acc = 0.0
    for k in range(1000):
        acc = acc + x[k % 4]
    return acc


def test_long_build_time_loops_stay_loops():
    program = check(long_static, np.arange(4.0))
    assert prims(program).count("for_loop") == 1


def escape_count(c_re: f64, c_im: f64, limit: i64):
    zr, zi = 0.0, 0.0
    n = 0
    while (zr * zr + zi * zi < 4.0) & (n < limit):
        zr, zi = zr * zr - zi * zi + c_re, 2 * zr * zi + c_im
        n += 1
    return n


@pytest.mark.parametrize("c", [(0.0, 0.0), (0.3, 0.5), (2.0, 2.0), (-0.75, 0.1)])
def test_mandelbrot_escape(c):
    check(escape_count, c[0], c[1], 50)


def _helper_sum(v):
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    return s


def calls_helper(x: f64[:]):
    return _helper_sum(x) * 2


def test_helpers_from_the_module_are_converted():
    program = check(calls_helper, np.arange(6.0))
    assert top_loops(program)


def _add_item(items, v):
    items.append(v)


def appends_through_a_helper(n: i64):
    items = [0]
    for k in range(n):
        items.append(k + 1)  # noqa: PERF401 - the list a loop grows is the case
    _add_item(items, 5)  # the same list object: the caller sees the item
    return len(items), sum(items)


@pytest.mark.parametrize("n", [0, 3])
def test_a_helper_appending_to_a_list_appends_to_the_callers_list(n):
    check(appends_through_a_helper, n)


def _keep_positive(items, v):
    if v > 0:
        items.append(v)


def _keep_all_positive(items, x):
    for v in x:
        if v > 0:
            items.append(v)


def _keep_and_double(items, v):
    items.append(v)
    if v > 1:
        items.append(2 * v)


def _keep_through(items, v):
    _keep_and_double(items, v)


def helper_appends_in_its_branch(x: f64[:]):
    items = []
    for i in range(x.shape[0]):
        _keep_positive(items, x[i])
    return len(items), sum(items)


def helper_appends_in_its_loop(x: f64[:]):
    items = [0.5]
    for _ in range(3):
        _keep_all_positive(items, x)
    return len(items), sum(items)


def helper_appends_through_a_helper(x: f64[:]):
    items = []
    for i in range(x.shape[0]):
        _keep_through(items, x[i])
    return len(items), sum(items)


def helper_appends_outside_loops(x: f64[:]):
    items = [1.0]
    _keep_and_double(items, 3.0)  # at build time
    _keep_and_double(items, x[0])  # under a runtime condition: a length known at run time
    _keep_positive(items, x[1])
    return len(items), sum(items)


def helper_appends_to_a_laid_out_list(x: f64[:]):
    items = [0.0]
    for i in range(x.shape[0]):
        items.append(x[i])  # noqa: PERF401 - the list a loop grows is the case
    _keep_positive(items, x[0])
    return len(items), sum(items)


def _put(table, k, v):
    table[k] = v


def _add_multiple_of_three(seen, v):
    if v % 3 == 0:
        seen.add(v)


def _counted(table, k):
    table[k] = table.get(k, 0) + 1
    return table[k]


def helper_writes_a_dict(n: i64):
    table = {0: 0}
    for i in range(n):
        _put(table, i % 7, i)
    total = 0
    for k, v in table.items():
        total += k * v
    return len(table), total


def helper_adds_to_a_set(n: i64):
    seen = {0}
    for i in range(n):
        _add_multiple_of_three(seen, i)
    return len(seen)


def helper_counts_into_a_dict(n: i64):
    counts = {}
    most = 0
    for i in range(n):
        c = _counted(counts, (i * i) % 5)  # (what the call returns is kept too)
        most = max(most, c)
    return len(counts), most


@pytest.mark.parametrize("kernel", [helper_writes_a_dict, helper_adds_to_a_set,
                                    helper_counts_into_a_dict], ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [0, 1, 20])
def test_a_helper_changing_a_dict_or_set_changes_the_callers(kernel, n):
    check(kernel, n)


def _keep_then_restart(items, v):
    items.append(v)
    items = [0.0]  # a new list of its own: later appends do not reach the caller
    items.append(v)


def helper_appends_then_rebinds(x: f64[:]):
    items = [1.0]
    for i in range(x.shape[0]):
        _keep_then_restart(items, x[i])
    return len(items), sum(items)


SEEN: list[float] = []


def helper_appends_to_a_global_list(x: f64[:]):
    _keep_positive(SEEN, 2.0)  # at build time, to the module's list (it stays global)
    return x[0] + 1.0


def test_a_helper_appending_to_a_module_list_leaves_it_global():
    program = compiled(helper_appends_to_a_global_list)
    assert SEEN == [2.0]  # appended once, while the kernel was built
    assert eval_program(program, np.array([1.5]))[0] == 2.5


HELPER_APPENDS = [helper_appends_in_its_branch, helper_appends_in_its_loop,
                  helper_appends_through_a_helper, helper_appends_outside_loops,
                  helper_appends_to_a_laid_out_list, helper_appends_then_rebinds]


@pytest.mark.parametrize("kernel", HELPER_APPENDS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [[1.0, -2.0, 3.0, 4.0], [-1.0, 2.0], [2.0, 0.5, -3.0]])
def test_appends_a_helper_makes_under_runtime_conditions_reach_the_caller(kernel, x):
    check(kernel, np.array(x))
    check(kernel, -np.array(x))


def _kept_total(out, v):
    if v > 0:
        out.append(v)
    return len(out)


def helper_appends_inside_expressions(x: f64[:]):
    out = []
    total = 0.0
    for i in range(x.shape[0]):
        total += 2.0 * _kept_total(out, x[i]) + np.abs(x[i])
    return total, len(out)


@pytest.mark.parametrize("x", [[1.0, -2.0, 3.0, 4.0], [-1.0, 2.0]])
def test_a_helper_appending_inside_an_expression_appends_to_the_callers_list(x):
    check(helper_appends_inside_expressions, np.array(x))


HOISTED = """
def f(out, v, t):
    t += 2 * keep(out, v) + np.sqrt(keep(out, v - 1))
    t = t + (v > 0 and keep(out, v))
    t = user(v) + keep(out, v)
    return len(out) + keep(out, v)
"""


def test_calls_changing_a_list_leave_expressions_only_where_the_order_stays_pythons():
    """Out of the augmented assignment, left to right (the second after the first, and
    after np.sqrt, which may go first); not out of ``and``'s right (it may not run), not
    after a call of the user's (it may draw random numbers) or a read of the list."""
    tree = ast.parse(HOISTED).body[0]
    assert isinstance(tree, ast.FunctionDef)
    hoist_changing_calls(tree, lambda call: "out" if ast.unparse(call.func) == "keep" else None)
    assert ast.unparse(tree).splitlines()[1:] == [
        "    __aotc_hoisted0 = keep(out, v)",
        "    __aotc_hoisted1 = keep(out, v - 1)",
        "    t += 2 * __aotc_hoisted0 + np.sqrt(__aotc_hoisted1)",
        "    t = t + (v > 0 and keep(out, v))",
        "    t = user(v) + keep(out, v)",
        "    return len(out) + keep(out, v)"]


def kinds_of_values(x: f64[:], s: f64, n: i64):
    """isinstance of runtime values: what the caller's values are (a float parameter is
    a Python float or np.float64, both floats; an i64 one np.int64 here, not an int)."""
    items = [2.0 * v for v in x]
    return (isinstance(x, np.ndarray), isinstance(s, float), isinstance(n, int),
            isinstance(n, (np.integer, float)), isinstance(items, list),
            isinstance(x[0] * 2, np.float64))


def test_isinstance_of_runtime_values_is_pythons():
    x, s, n = np.array([1.0, 2.0]), np.float64(0.5), np.int64(3)
    assert eval_program(compiled(kinds_of_values), x, s, n) == list(kinds_of_values(x, s, n))


def builtins_on_scalars(a: f64, b: f64):
    return max(a, b), min(a, b, 0.5), abs(a - b), float(int(a)), round(b)


@pytest.mark.parametrize("a,b", [(1.5, -2.5), (-0.7, 3.2)])
def test_python_builtins_on_traced_scalars(a, b):
    program = compiled(builtins_on_scalars)
    got = [v.item() for v in eval_program(program, a, b)]
    assert got == [max(a, b), min(a, b, 0.5), abs(a - b), float(int(a)), round(b)]


def nested(m: i64, n: i64):
    total = 0
    for i in range(m):
        for j in range(i, n):
            if (i + j) % 2 == 0:
                total += i * j
    return total


def test_nested_loops_with_branch():
    check(nested, 5, 7)
    check(nested, 0, 3)


def test_state_that_changes_dtype_is_a_located_error():
    def k(x: f64[:]):
        acc = 0
        for i in range(x.shape[0]):
            acc = acc + x[i] > 0
        return acc

    with pytest.raises(TraceError, match="state value 0 starts as"):
        compiled(k)


def test_variable_first_assigned_in_a_traced_loop():
    """Defined after the loop when it ran; Python's UnboundLocalError when it did not."""
    def k(x: f64[:]):
        for i in range(x.shape[0]):
            last = x[i]
        return last

    program = compiled(k)
    assert eval_program(program, np.array([1.0, 2.5]))[0] == 2.5
    with pytest.raises(KernelError, match="cannot access local variable 'last'") as info:
        eval_program(program, np.zeros(0))
    assert info.value.error == "UnboundLocalError"

    def reads_first(x: f64[:]):
        for i in range(x.shape[0]):
            last = last + x[i]  # noqa: F821 - Python raises here on the first iteration
        return last

    with pytest.raises(TraceError, match="used before it has a value"):
        compiled(reads_first)


def first_positive(x: f64[:]):
    for i in range(x.shape[0]):
        if x[i] > 0:
            return x[i]
    return 0.0


@pytest.mark.parametrize("x", [[-1.0, 2.0, 3.0], [-1.0, -2.0], []])
def test_return_inside_a_runtime_loop(x):
    """A return inside a loop over a runtime range leaves the loop (a while loop)."""
    program = check(first_positive, np.array(x))
    assert "while_loop" in prims(program)


def inplace_vs_rebind(u: f64[:], v: f64[:], n: i64):
    for _ in range(n):
        u[0] += 1.0  # mutates the caller's array, as NumPy does
        v = v + 1.0  # rebinds the name: the caller's v stays as it was
    return v


def test_loop_mutations_reach_the_caller_but_rebinding_does_not():
    program = compiled(inplace_vs_rebind)
    u, v = np.zeros(3), np.zeros(2)
    (out,) = eval_program(program, u, v, 4)
    np.testing.assert_array_equal(u, [4.0, 0.0, 0.0])
    np.testing.assert_array_equal(v, [0.0, 0.0])
    np.testing.assert_array_equal(out, [4.0, 4.0])


def first_negative(x: f64[:]):
    index = -1
    for i in range(x.shape[0]):
        if x[i] < 0:
            index = i
            break
    return index


@pytest.mark.parametrize("x", [[1.0, 2.0, -3.0, -4.0], [1.0, 2.0], [-1.0]])
def test_break_in_a_runtime_loop(x):
    """A loop over a runtime range that breaks stops there (it becomes a while loop)."""
    program = check(first_negative, np.array(x))
    assert "while_loop" in prims(program)


def sum_skipping(x: f64[:], limit: float):
    total = 0.0
    count = 0
    i = 0
    while i < x.shape[0]:
        v = x[i]
        i += 1
        if np.isnan(v):
            continue
        if total + v > limit:
            break
        total += v
        count += 1
    return total, count


@pytest.mark.parametrize("x", [[1.0, np.nan, 2.0, 3.0, 10.0], [np.nan], [5.0, 6.0]])
def test_continue_and_break_in_a_while_loop(x):
    check(sum_skipping, np.array(x), 7.5)


SAME_SIZE = f64["m"]  # both arrays share the size m


def swap_names(x: SAME_SIZE, y: SAME_SIZE, n: i64):
    for _ in range(n):
        x, y = y, x
    return x


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_swapping_names_in_a_loop_leaves_both_arrays_alone(n):
    program = compiled(swap_names)
    x, y = np.zeros(2), np.ones(2)
    (out,) = eval_program(program, x, y, n)
    np.testing.assert_array_equal(out, [float(n % 2)] * 2)
    np.testing.assert_array_equal(x, [0.0, 0.0])
    np.testing.assert_array_equal(y, [1.0, 1.0])


def _sized(x: f64[:], n: i64) -> f64[:, :]:
    if n > 0:
        return np.zeros((n + 2, x.shape[0]))
    return np.ones((2, x.shape[0]))


#: (defined on one line: found by its code's position, whatever it is later called)
_sized_lambda = lambda x, n: np.zeros((n + 2, 3)) if n > 0 else np.ones((2, 3))  # noqa: E731


@pytest.mark.parametrize("fn", [_sized, _sized_lambda], ids=["def", "lambda"])
def test_a_renamed_function_is_still_converted(fn):
    """Conversion finds the source by the name the code was defined under: a function
    renamed afterwards (functools.wraps, a registry's copy, __name__ set) keeps its
    Python control flow, where it once ran unconverted and failed on the branch."""
    import types

    renamed = types.FunctionType(fn.__code__, fn.__globals__, "renamed", fn.__defaults__,
                                 fn.__closure__)
    renamed.__annotations__ = {"x": f64[:], "n": i64}
    program = trace_kernel(renamed, signature_from_annotations(renamed)).program
    x = np.arange(3.0)
    for n in (2, 0):
        (got,) = eval_program(program, x, np.int64(n))
        np.testing.assert_array_equal(got, fn(x, n))


def _conds(program) -> int:
    """The branches traced into ``program``, in its nested bodies too."""
    from aotc.ir import nested_programs
    return sum((e.prim.name == "cond") + sum(_conds(p) for p in nested_programs(e))
               for e in program.eqns)


def _returned_early(x: f64[:], n: i64):
    res = np.zeros_like(x)
    if n == 0:
        return res
    res[x > 0.2] = 1.0
    if n == 1:
        return res
    res[x > 0.4] = 2.0
    if n == 2:
        return res
    res[x > 0.6] = 3.0
    if n == 3:
        return res
    res[x > 0.8] = 4.0
    return res


def test_writes_after_early_returns_are_repeated_once_into_each_alias():
    """After ``return res`` on some paths, ``res`` is the returned value there: a write
    into it is repeated into each such alias under that alias's path, once. The
    repeated writes repeated themselves into one another in every order, and again as
    each enclosing branch wrote back what its bodies wrote: 27,379 branches (14 s) for
    this kernel, 50 s to trace SciPy's cspline1d_eval. Now 225."""
    program = trace_kernel(_returned_early, signature_from_annotations(_returned_early)).program
    assert _conds(program) < 500
    x = np.linspace(0.0, 1.0, 11)
    for n in range(5):
        (got,) = eval_program(optimize(program), x, n)
        np.testing.assert_array_equal(got, _returned_early(x, n))
