"""Sorting networks scheduled onto vector registers: which lanes each min and max takes.

Why: a textbook bitonic network in registers spends four instructions on every register
at each stage that compares lanes of one register (a shuffle, a min, a max and a blend),
and most of its stages are such. Sorting 128 8-byte keys in 16 AVX-512 registers took
1312 instructions that way; the schedule here takes 624 (x86-simd-sort's network, which
NumPy's sort uses, about 790).

The network (:func:`merge_network`) sorts ``registers x lanes`` keys. Wire ``w`` is the
``w``-th smallest key at the end; the keys start column-major, wire ``lane * registers +
register``, so each lane holds a column of wires. First every column is sorted by
Batcher's odd-even merge sort, whose comparators pair whole registers lane by lane; then
the columns are merged pairwise by bitonic merges (a flip, then half-cleaners) until one
sorted run is left.

The schedule (:func:`schedule`) follows each wire to the register and lane it is in and
lets that layout drift. An :class:`Exchange` takes two registers whose keys a stage
compares with each other: it gathers one key of each comparator into ``x`` and its
partner into ``y`` (no shuffle when the partners share lanes, one permutation of one
register when each comparator spans both registers, two two-source shuffles otherwise),
and the lane-wise min goes to one register, the max to the other: the lesser wire of
each comparator is then wherever its min landed. Registers whose comparators are all
their own are paired up the same way; a lone one is an :class:`InRegister` exchange (a
shuffle, a min, a max and a blend). At the end, one shuffle per register (of at most two
registers) puts the wires in order.

The plan is plain data, checked in tests by running it on NumPy arrays
(:func:`run_plan`), with no LLVM involved.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

#: A comparator: the lesser wire gets the lesser key.
Comparator = tuple[int, int]
Stage = list[Comparator]
#: Where a key is: (register, lane).
Slot = tuple[int, int]


def odd_even_merge_sort(n: int) -> list[Comparator]:
    """Batcher's odd-even merge sort of wires ``0..n-1`` (``n`` a power of two)."""
    comparators: list[Comparator] = []

    def merge(low: int, count: int, step: int) -> None:
        double = 2 * step
        if double < count:
            merge(low, count, double)
            merge(low + step, count, double)
            comparators.extend((i, i + step) for i in range(low + step, low + count - step,
                                                            double))
        else:
            comparators.append((low, low + step))

    def sort(low: int, count: int) -> None:
        if count > 1:
            half = count // 2
            sort(low, half)
            sort(low + half, half)
            merge(low, count, 1)

    sort(0, n)
    return comparators


def stages_of(comparators: Sequence[Comparator]) -> list[Stage]:
    """The comparators grouped into stages: each as early as its wires allow."""
    ready: dict[int, int] = defaultdict(int)
    stages: list[Stage] = []
    for low, high in comparators:
        depth = max(ready[low], ready[high])
        if depth == len(stages):
            stages.append([])
        stages[depth].append((low, high))
        ready[low] = ready[high] = depth + 1
    return stages


def bitonic_merge(low: int, run: int) -> list[Stage]:
    """Merge the sorted runs of wires ``low..low+run-1`` and the ``run`` after them."""
    stages = [[(low + i, low + 2 * run - 1 - i) for i in range(run)]]
    distance = run // 2
    while distance >= 1:
        stages.append([(start + i, start + i + distance)
                       for start in range(low, low + 2 * run, 2 * distance)
                       for i in range(distance)])
        distance //= 2
    return stages


def merge_network(registers: int, lanes: int) -> list[Stage]:
    """Sort ``registers * lanes`` wires: the columns first, then merges of columns."""
    stages = [[(lane * registers + a, lane * registers + b)
               for lane in range(lanes) for a, b in stage]
              for stage in stages_of(odd_even_merge_sort(registers))]
    total, run = registers * lanes, registers
    while run < total:
        merges = [bitonic_merge(low, run) for low in range(0, total, 2 * run)]
        stages.extend([c for part in parts for c in part] for parts in zip(*merges,
                                                                           strict=True))
        run *= 2
    return stages


@dataclass(frozen=True)
class Exchange:
    """Lane by lane, the lesser of ``x`` and ``y`` into register ``low`` and the greater
    into register ``high``; lane ``m`` of ``x`` (of ``y``) is the key at ``x[m]``."""

    low: int
    high: int
    x: tuple[Slot, ...]
    y: tuple[Slot, ...]


@dataclass(frozen=True)
class InRegister:
    """Register ``register``'s lanes against its lanes ``partner``: the lesser where
    ``lesser``, else the greater."""

    register: int
    partner: tuple[int, ...]
    lesser: tuple[bool, ...]


Step = Exchange | InRegister


@dataclass(frozen=True)
class Plan:
    """A network on ``registers`` registers of ``lanes`` keys: its steps, stage by stage
    (the steps of a stage touch distinct registers), then where each output register's
    lanes are (at most two registers each)."""

    registers: int
    lanes: int
    stages: tuple[tuple[Step, ...], ...]
    output: tuple[tuple[Slot, ...], ...]


class _Components:
    """The registers a stage's comparators connect (union-find)."""

    def __init__(self, count: int) -> None:
        self.parent = list(range(count))

    def find(self, r: int) -> int:
        while self.parent[r] != r:
            self.parent[r] = self.parent[self.parent[r]]
            r = self.parent[r]
        return r

    def join(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def schedule(stages: Sequence[Stage], registers: int, lanes: int) -> Plan:
    """The steps running ``stages`` on registers that start column-major."""
    where: dict[int, Slot] = {lane * registers + r: (r, lane)
                              for r in range(registers) for lane in range(lanes)}
    planned = []
    for stage in stages:
        steps, where = _schedule_stage(stage, where, registers, lanes)
        planned.append(tuple(steps))
    output = tuple(tuple(where[r * lanes + lane] for lane in range(lanes))
                   for r in range(registers))
    assert all(len({reg for reg, _ in slots}) <= 2 for slots in output)
    return Plan(registers, lanes, tuple(planned), output)


def _schedule_stage(stage: Stage, where: dict[int, Slot], registers: int, lanes: int
                    ) -> tuple[list[Step], dict[int, Slot]]:
    components = _Components(registers)
    for a, b in stage:
        components.join(where[a][0], where[b][0])
    groups: dict[int, list[Comparator]] = defaultdict(list)
    for comparator in stage:
        groups[components.find(where[comparator[0]][0])].append(comparator)
    steps: list[Step] = []
    moved = dict(where)
    alone: list[tuple[int, list[Comparator]]] = []
    for comparators in groups.values():
        touched = sorted({where[w][0] for c in comparators for w in c})
        if len(touched) == 1:
            alone.append((touched[0], comparators))
            continue
        assert len(touched) == 2 and len(comparators) == lanes, "a stage spans 2 registers"
        steps.append(_exchange(touched[0], touched[1], comparators, where, moved))
    while len(alone) >= 2 and all(len(c) * 2 == lanes for _, c in alone[-2:]):
        (p, first), (q, second) = alone.pop(), alone.pop()
        steps.append(_exchange(p, q, first + second, where, moved))
    for r, comparators in alone:
        partner = list(range(lanes))
        lesser = [True] * lanes
        for a, b in comparators:
            partner[where[a][1]], partner[where[b][1]] = where[b][1], where[a][1]
            lesser[where[b][1]] = False
        steps.append(InRegister(r, tuple(partner), tuple(lesser)))
    return steps, moved


def _exchange(p: int, q: int, comparators: list[Comparator], where: dict[int, Slot],
              moved: dict[int, Slot]) -> Exchange:
    """The exchange of registers ``p`` and ``q`` (lesser keys to ``p``), recording in
    ``moved`` where each wire goes."""
    def in_p_first(c: Comparator) -> Comparator:
        return c if where[c[0]][0] == p else (c[1], c[0])

    spanning = all(where[a][0] != where[b][0] for a, b in comparators)
    if spanning:  # x: p's lanes in order; y: their partners in q (aligned: no shuffle)
        pairs = sorted((in_p_first(c) for c in comparators), key=lambda c: where[c[0]][1])
    else:
        pairs = sorted(comparators)
    x = tuple(where[a] for a, _ in pairs)
    y = tuple(where[b] for _, b in pairs)
    for lane, (a, b) in enumerate(pairs):
        moved[min(a, b)], moved[max(a, b)] = (p, lane), (q, lane)
    return Exchange(p, q, x, y)


@functools.cache
def merge_plan(registers: int, lanes: int) -> Plan:
    """The plan sorting ``registers`` registers of ``lanes`` keys (a power of two each)."""
    return schedule(merge_network(registers, lanes), registers, lanes)


V = TypeVar("V")


@dataclass(frozen=True)
class RegisterOps(Generic[V]):
    """What running a plan needs of registers ``V``: ``gather(regs, slots)`` (a register
    of the keys at ``slots``, from at most two registers), lane-wise ``minimum`` and
    ``maximum``, and ``blend(mask, a, b)`` (``a`` where ``mask``)."""

    gather: Callable[[Sequence[V], Sequence[Slot]], V]
    minimum: Callable[[V, V], V]
    maximum: Callable[[V, V], V]
    blend: Callable[[Sequence[bool], V, V], V]


def run_plan(plan: Plan, registers: Sequence[V], ops: RegisterOps[V]) -> list[V]:
    """``registers`` sorted: lane ``l`` of register ``r`` is the ``r * lanes + l``-th
    smallest key."""
    regs = list(registers)
    for stage in plan.stages:
        for step in stage:
            if isinstance(step, Exchange):
                x, y = ops.gather(regs, step.x), ops.gather(regs, step.y)
                regs[step.low], regs[step.high] = ops.minimum(x, y), ops.maximum(x, y)
            else:
                r = step.register
                other = ops.gather(regs, [(r, lane) for lane in step.partner])
                regs[r] = ops.blend(step.lesser, ops.minimum(regs[r], other),
                                    ops.maximum(regs[r], other))
    return [ops.gather(regs, slots) for slots in plan.output]


#: :class:`RegisterOps` on NumPy rows: the plan run on arrays, for tests.
NUMPY_OPS: RegisterOps[np.ndarray] = RegisterOps(
    gather=lambda regs, slots: np.array([regs[r][lane] for r, lane in slots]),
    minimum=np.minimum,
    maximum=np.maximum,
    blend=lambda mask, a, b: np.where(np.array(mask), a, b),
)
