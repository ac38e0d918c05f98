"""The sorting networks of :mod:`aotc.codegen.sorting.sortnet`, run as plans on NumPy rows (no
LLVM): every plan the quicksort can emit sorts, each stage's steps touch distinct
registers, and the schedule is as cheap as it was measured to be."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from aotc.codegen.sorting.sortnet import (
    NUMPY_OPS,
    Exchange,
    InRegister,
    merge_network,
    merge_plan,
    odd_even_merge_sort,
    run_plan,
)

#: Register counts 1 to 32 (the networks and the pivot's sample) of 4 to 16 lanes.
SHAPES = list(itertools.product((1, 2, 4, 8, 16, 32), (4, 8, 16)))


def _apply(stages, values: np.ndarray) -> np.ndarray:
    """The comparators run one by one on rows of ``values`` (the network's meaning)."""
    out = values.copy()
    for stage in stages:
        for low, high in stage:
            a, b = out[..., low].copy(), out[..., high].copy()
            out[..., low], out[..., high] = np.minimum(a, b), np.maximum(a, b)
    return out


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_odd_even_merge_sort_sorts_every_zero_one_row(n: int) -> None:
    """A comparator network sorts everything if it sorts every row of 0s and 1s."""
    rows = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    stages = [[c] for c in odd_even_merge_sort(n)]
    assert np.array_equal(_apply(stages, rows), np.sort(rows, axis=1))


@pytest.mark.parametrize("registers,lanes", [(2, 4), (4, 4), (2, 8)])
def test_merge_network_sorts_every_zero_one_row(registers: int, lanes: int) -> None:
    n = registers * lanes
    rows = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    assert np.array_equal(_apply(merge_network(registers, lanes), rows),
                          np.sort(rows, axis=1))


@pytest.mark.parametrize("registers,lanes", SHAPES)
def test_every_plan_sorts(registers: int, lanes: int) -> None:
    plan = merge_plan(registers, lanes)
    rng = np.random.default_rng(registers * 100 + lanes)
    n = registers * lanes
    rows = [rng.integers(0, 1 << 62, n), rng.integers(0, 3, n), np.arange(n)[::-1],
            np.zeros(n, np.int64), (np.arange(n) % 2)]
    for keys in rows:
        got = run_plan(plan, list(keys.reshape(registers, lanes)), NUMPY_OPS)
        assert np.array_equal(np.concatenate(got), np.sort(keys)), (registers, lanes)


@pytest.mark.parametrize("registers,lanes", SHAPES)
def test_each_stage_touches_a_register_once(registers: int, lanes: int) -> None:
    """The steps of a stage read what the stage before left: none may see another's
    result, and every output register gathers from at most two registers."""
    plan = merge_plan(registers, lanes)
    for stage in plan.stages:
        written = [r for step in stage for r in (
            (step.low, step.high) if isinstance(step, Exchange) else (step.register,))]
        assert len(written) == len(set(written))
        for step in stage:
            if isinstance(step, Exchange):
                assert {r for r, _ in step.x + step.y} <= {step.low, step.high}
    assert all(len({r for r, _ in slots}) <= 2 for slots in plan.output)


def test_schedule_cost() -> None:
    """128 keys in 16 registers of 8: a min and a max per two registers per stage, plus
    one shuffle where partners share no lane order (624 instructions, where the bitonic
    network that stood here took 1312)."""
    plan = merge_plan(16, 8)
    cost = 0
    for stage in plan.stages:
        for step in stage:
            if isinstance(step, InRegister):
                cost += 4
                continue
            aligned = [slot[1] for slot in step.x] == [slot[1] for slot in step.y]
            one_register = len({r for r, _ in step.x}) == 1 == len({r for r, _ in step.y})
            cost += 2 + (0 if aligned and one_register else 1 if one_register else 2)
    cost += len(plan.output)
    assert cost <= 640
