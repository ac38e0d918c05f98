"""Lists, sets and dicts that runtime loops grow and shrink (boxes, aotc.ops.containers).

The kernels of ``boxes_kernels.py`` run four ways: as Python on NumPy (the truth),
built into an extension (the C wrapper's runtime), compiled in-process (``aotc.jit``)
and, for some, on the reference interpreter (the IR's NumPy meaning). Results and
exceptions must agree, empty and one-item cases included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boxes_kernels as source
import numpy as np
import pytest
from boxes_kernels import (
    bfs,
    bfs_deque,
    big_sorted,
    chains,
    dedupe,
    discards,
    distinct,
    float_set,
    group_totals,
    list_surgery,
    lookup,
    pair_kinds,
    primes_list,
    queens,
    sort_stack,
    sorted_set,
    tallies,
    two_pops,
    updated,
)
from projects import build_project, imported

import aotc
from aotc.interpret import eval_program
from aotc.ir_text import parse_program
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations

ADJ = np.array([[0, 1, 1, 0, 0], [1, 0, 0, 1, 0], [1, 0, 0, 1, 0], [0, 1, 1, 0, 0],
                [0, 0, 0, 0, 0]])
CALLS: dict[Any, list[tuple[Any, ...]]] = {
    queens: [(1,), (4,), (6,), (0,), (3,)],
    bfs: [(ADJ, 0), (ADJ, 3), (ADJ, 4), (ADJ, 7)],
    group_totals: [(np.array([1, 2, 1, 3]), np.array([0.5, 1.5, 2.0, -1.0])),
                   (np.zeros(0, np.int64), np.zeros(0))],
    pair_kinds: [(np.array([1, 2, 1, 2, 3]),), (np.array([5]),), (np.zeros(0, np.int64),)],
    float_set: [(np.array([0.0, -0.0, np.nan, np.nan, 1.5, 1.5]),), (np.zeros(0),)],
    list_surgery: [(7,), (4,), (2,), (1,)],
    two_pops: [(3,), (1,), (0,)],
    lookup: [(np.array([1, 2]), 2), (np.array([1, 2]), 5), (np.zeros(0, np.int64), 0)],
    discards: [(np.array([3, 1, 4, 1, 5]), 4), (np.array([3, 0]), 3), (np.array([7]), 2)],
    dedupe: [(np.array([3, 1, 3, 2, 1]),), (np.zeros(0, np.int64),)],
    chains: [(np.array([-1, 0, 1, 2]), np.array([3, 0, 2])), (np.array([-1]), np.zeros(0, int))],
    sorted_set: [(np.array([5, 1, 5, 3]),), (np.array([2]),), (np.zeros(0, np.int64),)],
    distinct: [(np.array([1.0, 2.0, 1.0, -0.0, 0.0]),), (np.zeros(0),)],
    sort_stack: [(9,), (1,), (0,)],
    primes_list: [(10,), (1,), (0,)],
    tallies: [(np.array([3, 1, 3, 2, 1]),), (np.array([4]),), (np.zeros(0, np.int64),)],
    bfs_deque: [(ADJ, 0), (ADJ, 3), (ADJ, 4), (ADJ, 7)],
    updated: [(np.array([1, 2, 2, 5]),), (np.array([3]),), (np.zeros(0, np.int64),)],
    big_sorted: [(np.array([2**63 + 5, 3, 2**64 - 1, 3], dtype=np.uint64),),
                 (np.array([7], dtype=np.uint64),)],
}
CASES = [(fn, args) for fn, calls in CALLS.items() for args in calls]


def _outcome(fn: Any, args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "value", fn(*args)
    except Exception as err:
        return "error", (type(err), str(err))


def _same(got: Any, want: Any, where: str) -> None:
    if isinstance(want, (set, dict)):  # a set's or dict's items are NumPy scalars
        assert type(got) is type(want) and got == want, where
        if isinstance(want, dict):
            assert list(got) == list(want), f"{where}: a dict keeps insertion order"
        return
    if isinstance(want, list) and not want:  # an empty list has no dtype or row length
        assert len(got) == 0, where
        return
    if isinstance(want, list) and isinstance(want[0], tuple):
        want = np.array(want)  # a list of tuples of one dtype: the rows of an array
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), where
        for g, w in zip(got, want, strict=True):
            _same(g, w, where)
        return
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=where)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, c_compiler: str) -> Any:
    """Each kernel as the built extension has it, and through aotc.jit."""
    text = Path(source.__file__).read_text()
    root = build_project(tmp_path_factory.mktemp("boxes"), "aotc_boxes", text)
    with imported(root, "aotc_boxes") as module:
        yield {fn: (getattr(module, fn.__name__), aotc.jit(fn)) for fn in CALLS}


@pytest.mark.parametrize(("fn", "args"), CASES,
                         ids=[f"{fn.__name__}-{k}" for k, (fn, _) in enumerate(CASES)])
def test_compiled_matches_python(compiled: dict[Any, Any], fn: Any, args: tuple[Any, ...]
                                 ) -> None:
    want = _outcome(fn, args)
    for how, kernel in zip(("extension", "aotc.jit"), compiled[fn], strict=True):
        got = _outcome(kernel, args)
        where = f"{how}: {fn.__name__}{args}"
        assert got[0] == want[0], f"{where}: compiled {got}, Python {want}"
        if want[0] == "error":
            assert got[1][0] is want[1][0], where
            # (a key from an array is np.int64(5) in Python's message, 5 in the kernel's)
            assert got[1][1] == want[1][1] or f"({got[1][1]})" in want[1][1], where
        else:
            _same(got[1], want[1], where)


@pytest.mark.parametrize("fn", [queens, group_totals, list_surgery, discards, lookup])
def test_interpreter_matches_python_and_the_ir_round_trips(fn: Any) -> None:
    """The boxes' reference meaning (aotc.interpret) and their printed IR, parsed back."""
    traced = trace_kernel(fn, signature_from_annotations(fn))
    assert "box_new[" in str(traced.program)
    assert str(parse_program(str(traced.program))) == str(traced.program)
    for args in CALLS[fn]:
        want = _outcome(fn, args)
        got = _outcome(lambda *a: tuple(eval_program(traced.program, *a)), args)
        assert got[0] == want[0], f"{fn.__name__}{args}: {got} vs {want}"
        if want[0] == "value":
            flat = want[1] if isinstance(want[1], tuple) else (want[1],)
            _same(tuple(got[1]), flat, f"{fn.__name__}{args}")


def test_a_box_made_in_every_iteration_of_a_loop() -> None:
    """A set made anew in each iteration (a box per iteration, all freed when the call
    returns), called again and again: each call counts its own items."""
    @aotc.jit
    def fresh_sets(n: int, m: int) -> int:
        total = 0
        for i in range(n):
            s = set()
            for j in range(m):
                s.add((i * m + j) % (m // 2 + 1))
            total += len(s)
        return total

    for n in (0, 1, 2000):
        for m in (1, 50):
            assert fresh_sets(n, m) == n * min(m, m // 2 + 1), (n, m)


def test_vmap_runs_a_kernel_with_boxes_lane_by_lane() -> None:
    batched = aotc.jit(aotc.vmap(queens))
    np.testing.assert_array_equal(batched(np.array([4, 5, 6, 1])), [2, 10, 4, 1])


def test_a_gradient_through_a_box_is_a_located_error() -> None:
    x = np.array([1.0, -2.0, 3.0])
    assert source.stacked_energy(x) == 10.0
    assert aotc.jit(source.stacked_energy)(x) == 10.0
    with pytest.raises(aotc.errors.AotcError, match="a list, set or dict changed at run") \
            as info:
        aotc.jit(aotc.grad(source.stacked_energy))(x)
    assert "boxes_kernels.py" in str(info.value)
