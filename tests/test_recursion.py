"""Recursion on runtime values (aotc.tracing.functions), on the IR: which calls become
real calls, the types their results settle at, and what the programs compute, run by
the reference interpreter against the Python source. No C toolchain: the compiled calls
are tested in test_python_constructs (``fib``, ``ackermann``, ``parity``...)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import aotc
from aotc.errors import TraceError
from aotc.interpret import eval_program
from aotc.ir import called_functions
from aotc.ops.index import KernelError


def fib(n):  # type: ignore[no-untyped-def]
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def is_even(n):  # type: ignore[no-untyped-def]
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):  # type: ignore[no-untyped-def]
    return False if n == 0 else is_even(n - 1)


def depth(n):  # type: ignore[no-untyped-def]
    return 0.0 if n <= 0 else 0.5 + depth(n - 1)


def steps(n, count):  # type: ignore[no-untyped-def]
    if n == 1:
        return count
    return steps(n // 2 if n % 2 == 0 else 3 * n + 1, count + 1)


def power_sum(x, k):  # type: ignore[no-untyped-def]
    return 0.0 if k == 0 else x**k + power_sum(x, k - 1)


def fib_pair(n):  # type: ignore[no-untyped-def]
    if n == 0:
        return 0, 1
    a, b = fib_pair(n - 1)
    return b, a + b


def halving_sum(x):  # type: ignore[no-untyped-def]
    if x.shape[0] <= 1:
        return x.sum()
    return halving_sum(x[: x.shape[0] // 2]) + halving_sum(x[x.shape[0] // 2:])


def _kernel(body: Any, text: str) -> Any:
    """The program of a kernel of one parameter calling ``body`` on it."""
    def kernel(x: Any) -> Any:
        return body(x)
    return aotc.trace(kernel, text).program


@pytest.mark.parametrize(("body", "text", "calls", "result"), [
    (fib, "(i8,)", [0, 1, 2, 10, 15, -4], np.int64),
    (is_even, "(i8,)", [0, 1, 6, 9], np.bool_),
    (depth, "(i8,)", [0, 3, 50], np.float64),
    (lambda n: steps(n, 0), "(i8,)", [1, 6, 27], np.int64),
])
def test_recursion_is_a_real_call_with_the_sources_results(body: Any, text: str,
                                                           calls: list[int],
                                                           result: type) -> None:
    program = _kernel(body, text)
    assert called_functions(program), str(program)  # a call, not an inlined copy
    for n in calls:
        (got,) = eval_program(program, n)
        want = body(n)
        assert got.dtype == result and got == want, (n, got, want)


def test_the_ir_shows_the_call_and_the_function() -> None:
    text = str(_kernel(fib, "(i8,)"))
    assert "call[callee=fib$0]" in text and "def fib$0 = {" in text


def test_mutual_recursion_compiles_both_functions() -> None:
    names = {c.name.split("$")[0] for c in called_functions(_kernel(is_even, "(i8,)"))}
    assert names == {"is_even", "is_odd"}


def test_recursion_that_ends_at_build_time_stays_inlined() -> None:
    program = _kernel(lambda x: power_sum(x, 4), "(f8,)")
    assert not called_functions(program)
    (got,) = eval_program(program, 1.5)
    assert got == power_sum(1.5, 4)


def test_a_recursive_function_returning_a_tuple_gives_each_item() -> None:
    def kernel(n: Any) -> Any:
        a, b = fib_pair(n)
        return a * 1000 + b

    program = aotc.trace(kernel, "(i8,)").program
    (callee,) = called_functions(program)
    assert len(callee.program.outputs) == 2
    for n in (0, 1, 2, 20):
        (got,) = eval_program(program, n)
        a, b = fib_pair(n)
        assert got == a * 1000 + b, n


def min_max(x, lo, hi):  # type: ignore[no-untyped-def]
    if hi - lo <= 1:
        return x[lo], x[lo]
    mid = (lo + hi) // 2
    a, b = min_max(x, lo, mid)
    c, d = min_max(x, mid, hi)
    return min(a, c), max(b, d)


def merge_sorted(arr):  # type: ignore[no-untyped-def]
    """numba's recursion example (examples/mergesort.py): sorts a copy of each half,
    merges them into ``arr`` and returns ``arr``."""
    if arr.size > 1:
        mid = arr.size // 2
        first = merge_sorted(arr[:mid].copy())
        second = merge_sorted(arr[mid:].copy())
        left = right = k = 0
        while left < first.size and right < second.size:
            if first[left] <= second[right]:
                arr[k] = first[left]
                left += 1
            else:
                arr[k] = second[right]
                right += 1
            k += 1
        while left < first.size:
            arr[k] = first[left]
            left += 1
            k += 1
        while right < second.size:
            arr[k] = second[right]
            right += 1
            k += 1
    return arr


def fft_made(x):  # type: ignore[no-untyped-def]
    if x.shape[0] == 1:
        return x.copy()
    e, o = fft_made(x[::2]), fft_made(x[1::2])
    return np.concatenate([e + o, e - o])


def test_a_tuple_of_runtime_values_and_the_array_given_are_results() -> None:
    def spread(x: Any) -> Any:
        low, high = min_max(x, 0, x.shape[0])
        return high - low

    def sorted_copy(x: Any) -> Any:
        return merge_sorted(x.copy())

    program = aotc.trace(spread, "(f8[:],)").program
    rng = np.random.default_rng(3)
    for n in (1, 2, 9, 64):
        x = rng.standard_normal(n)
        assert eval_program(program, x)[0] == np.ptp(x), n
    program = aotc.trace(sorted_copy, "(f8[:],)").program
    (callee,) = called_functions(program)
    assert callee.written == (0,)
    for n in (0, 1, 2, 9, 64):
        x = rng.standard_normal(n)
        (got,) = eval_program(program, x)
        np.testing.assert_array_equal(got, np.sort(x))


def fft_listed(x):  # type: ignore[no-untyped-def]
    """Pythran's test kernel fft.py: lists of the halves' combinations, made an array."""
    n = x.shape[0]
    if n == 1:
        return np.array(x)
    e, o = fft_listed(x[::2]), fft_listed(x[1::2])
    m = n // 2
    left = [e[k] + o[k] * np.exp(-2j * np.pi * k / n) for k in range(m)]
    right = [e[k] - o[k] * np.exp(-2j * np.pi * k / n) for k in range(m)]
    return np.array(left + right)


def test_a_recursive_function_returning_arrays_it_makes_fills_the_callers_buffer() -> None:
    for body in (fft_made, fft_listed):
        program = _kernel(body, "(c16[:],)")
        (callee,) = called_functions(program)
        assert any(v.type.ndim for v in callee.program.outputs)  # (an array result)
        for n in (1, 2, 8, 64):
            x = np.random.default_rng(n).standard_normal(n) + 1j
            (got,) = eval_program(program, x)
            np.testing.assert_allclose(got, body(x), rtol=1e-12, atol=1e-12)


def lengthened(x):  # type: ignore[no-untyped-def]
    if x.shape[0] <= 1:
        return np.concatenate([x, x])
    return np.concatenate([lengthened(x[1:]), x[:1]])


def test_an_array_result_larger_than_the_first_array_given_raises_value_error() -> None:
    # Its bound grows with each trace (the recursive call's plus one): it is pinned to
    # the size of the array given (see aotc.tracing.functions._padded), which a result
    # one longer than that exceeds; Python's own answer is that longer array.
    program = _kernel(lengthened, "(f8[:],)")
    assert lengthened(np.arange(3.0)).shape == (4,)
    with pytest.raises(KernelError, match="larger than the first array it is given") as err:
        eval_program(program, np.arange(3.0))
    assert err.value.error == "ValueError"


def chain_length(n, known):  # type: ignore[no-untyped-def]
    """Pythran's euler14.py: a memo dict passed down the recursion, written on the way up."""
    if n in known:
        return known[n]
    length = 1 + chain_length(3 * n + 1 if n & 1 else n // 2, known)
    known[n] = length
    return length


def longest_chain(limit):  # type: ignore[no-untyped-def]
    known = {1: 0}
    best, best_n = 0, 1
    for n in range(1, limit):
        length = chain_length(n, known)
        if length > best:
            best, best_n = length, n
    return best_n, best, len(known)


def test_a_dict_the_kernel_grows_crosses_a_compiled_call_by_its_handle() -> None:
    program = _kernel(longest_chain, "(i8,)")
    (callee,) = called_functions(program)
    assert callee.name.startswith("chain_length")
    for limit in (1, 2, 30, 1000):
        got = [v.item() for v in eval_program(program, limit)]
        assert got == list(longest_chain(limit)), limit


def test_recursion_on_views_of_runtime_sizes_is_a_call_on_each_view() -> None:
    program = _kernel(halving_sum, "(f8[:],)")
    (callee,) = called_functions(program)
    assert [src.axis for src in callee.program.dim_sources] == [0]  # sizes of its own
    for n in (0, 1, 2, 7, 100):
        x = np.arange(float(n))
        (got,) = eval_program(program, x)
        assert got == halving_sum(x), n
    # On a size known at build time the recursion ends, inlined.
    program = _kernel(halving_sum, "(f8[8],)")
    assert not called_functions(program)
    (got,) = eval_program(program, np.arange(8.0))
    assert got == 28.0


def columns_walk(p, k):  # type: ignore[no-untyped-def]
    if k <= 0:
        return 0.0
    x, y, z = p[:, k - 1]  # unpacks: the 3 is known at build time inside the function
    return x + y * z + columns_walk(p, k - 1)


def test_a_compiled_function_keeps_the_build_time_sizes_of_an_array() -> None:
    def kernel(p: Any) -> Any:
        return columns_walk(p, p.shape[1])

    program = aotc.trace(kernel, "(f8[3, :],)").program
    (callee,) = called_functions(program)
    assert [src.axis for src in callee.program.dim_sources] == [1]
    for n in (0, 1, 5):
        p = np.arange(3.0 * n).reshape(3, n)
        (got,) = eval_program(program, p)
        assert got == kernel(p), n


def swap_down(a, k):  # type: ignore[no-untyped-def]
    if k <= 0:
        return None
    if a[k] < a[k - 1]:
        a[k], a[k - 1] = a[k - 1], a[k]
    swap_down(a, k - 1)


def test_what_a_recursive_call_writes_into_an_array_is_the_callers_write() -> None:
    def kernel(x: Any) -> Any:
        swap_down(x, x.shape[0] - 1)
        return x[0]

    program = aotc.trace(kernel, "(f8[:],)").program
    (callee,) = called_functions(program)
    assert callee.written == (0,) and callee.returned is None
    assert "written=(0,)" in str(program)
    for values in ([3.0, 1.0, 2.0], [1.0], [5.0, 4.0, 3.0, 2.0, 0.5]):
        mine, theirs = np.array(values), np.array(values)
        (got,) = eval_program(program, mine)
        assert got == kernel(theirs)
        np.testing.assert_array_equal(mine, theirs)  # the argument, written through


def halves_of(x, y):  # type: ignore[no-untyped-def]
    if x.shape[0] <= 1:
        return x.sum() + y.sum()
    x[0] += 1.0
    return halves_of(x[1:], y[1:])


def grown(a, n):  # type: ignore[no-untyped-def]
    if n == 0:
        return 0
    a.append(n)
    return grown(a, n - 1)


def test_recursion_on_two_views_of_one_array_stays_inlined_then_is_refused() -> None:
    def kernel(x: Any) -> Any:  # a write through one view is seen through the other
        return halves_of(x, x)

    with pytest.raises(TraceError, match="two views of one array"):
        aotc.trace(kernel, "(f8[:],)")


def test_a_recursion_that_appends_to_a_list_it_is_given_is_a_located_error() -> None:
    def kernel(n: Any) -> Any:
        items = [0]
        for k in range(n):
            items.append(k + 1)  # noqa: PERF401 - the list a loop grows is the case
        return grown(items, n)

    with pytest.raises(TraceError, match="changes the size of the list .a. it is given") as err:
        aotc.trace(kernel, "(i8,)")
    assert err.value.loc is not None and err.value.loc.line > 0


def decayed(x, n):  # type: ignore[no-untyped-def]
    return 0.0 if n <= 0 else x + 0.5 * decayed(x, n - 1)


def test_a_gradient_through_a_recursive_call_is_refused_with_what_to_do() -> None:
    def loss(x: aotc.f64, n: aotc.i64) -> aotc.f64:
        return decayed(x, n)

    gradient = aotc.grad(loss)
    with pytest.raises(aotc.errors.AotcError, match="recursive function") as err:
        aotc.trace(gradient, gradient.signatures()[0])
    assert "loop" in str(err.value)
