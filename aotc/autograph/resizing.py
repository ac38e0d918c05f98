"""Arrays a runtime loop resizes: ``while ...: x = x[1:]``, pairwise halving
``x = x[:n] + x[n:2 * n]``, ``a = a[1:, 1:]``.

A loop's state has one type, so such an array is carried as a :class:`~.joins.Joined`:
laid out flat at the front of a buffer as large as the array it starts as, its sizes
carried as integers. Each iteration sees it with its own sizes (bound while the kernel
runs) and lays out what the body makes in the buffer again. That holds while the array
does not outgrow its start; one the body could make larger (``np.append`` in a loop) is
a located error, since buffers are planned before the kernel runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..bodies import flatten, probe
from ..ir import AType
from ..shapes import DimExpr, FloorDiv, Relu, bound_symbols, maximum, relu, upper_bound
from ..tracer import Tracer, current
from .joins import Join, Joined

State = tuple[Any, ...]


class LoopJoin(Join):
    """How a loop carries one resized array: with room for the array it starts as."""

    def __init__(self, start: AType, made: AType, name: str) -> None:
        self.name = name
        known = current().uppers()
        uppers = []
        for begin, end in zip(start.shape, made.shape, strict=True):
            upper = upper_bound(begin, known)
            if upper is None or bound_symbols(upper):
                raise ValueError("unbounded")
            # what one iteration makes, where its sizes are known here (``r = r @ a``
            # with ``r`` square and ``a`` not: sizes the next iteration checks)
            other = upper_bound(end, known)
            grows = other is not None and not bound_symbols(other) \
                and not at_most(other, upper)
            uppers.append(maximum(upper, other) if grows and other is not None else upper)
        self.uppers = tuple(uppers)
        self.common = tuple(s if s == m else None
                            for s, m in zip(start.shape, made.shape, strict=True))
        total = DimExpr.const(1)
        for u in self.uppers:
            total = total * u
        self.length = total
        self.dtype = start.dtype
        self.width = 1 + start.ndim

    def pad(self, value: Any) -> Joined:
        """What an iteration makes, in the buffer: it must fit the array's start."""
        ctx = current()
        known = ctx.uppers()
        for axis, (size, upper, common) in enumerate(zip(value.aval.shape, self.uppers,
                                                         self.common, strict=True)):
            high = upper_bound(size, known)
            fits = high is not None and at_most(high, upper) and (
                common is None or size == common)
            if not fits:
                raise ctx.error(
                    f"the loop resizes '{self.name}' beyond the size it starts with (axis "
                    f"{axis}: {size} against {upper})",
                    hint="memory is planned before the kernel runs: allocate the largest "
                         "array before the loop and fill a prefix (out = np.empty(n); "
                         "out[k] = v; k += 1; then out[:k])")
        return super().pad(value)

    def shown(self, joined: Joined) -> Tracer:
        """The array as the loop's code sees it; a vector is the buffer's front itself,
        so writes into it reach the buffer (and are refused, see :meth:`Carried.body`)."""
        if len(self.uppers) != 1 or self.common[0] is not None:
            return joined.laid_out(self)
        (size,) = joined.dims
        low = np.maximum(size, 0)
        return joined.buffer[:np.minimum(low, lax.dim_value(self.uppers[0]))]


def at_most(a: DimExpr, b: DimExpr) -> bool:
    """Whether ``a <= b`` for all sizes (False: not proven). A ``relu(e)`` term of ``a``
    is split into its two cases (``e`` and 0), so ``relu(n - 1) <= n``; one of ``b`` is at
    least either case, so ``m <= n + relu(m - n)``; ``e // k`` is at most ``relu(e - 1)``
    for ``k >= 2``, so ``(n + 1) // 2 <= n``."""
    if (b - a).is_nonneg():
        return True
    for mono, coeff in a.terms:
        if len(mono) != 1 or coeff <= 0:
            continue
        rest = a - DimExpr(((mono, coeff),))
        (atom,) = mono
        if isinstance(atom, Relu):
            return at_most(rest + atom.expr * coeff, b) and at_most(rest, b)
        if isinstance(atom, FloorDiv) and atom.divisor >= 2:
            return at_most(rest + relu(atom.expr - 1) * coeff, b)
    for mono, coeff in b.terms:  # b >= each case of its relu(e) term
        if len(mono) == 1 and isinstance(mono[0], Relu) and coeff > 0:
            rest = b - DimExpr(((mono, coeff),))
            return at_most(a, rest + mono[0].expr * coeff) or at_most(a, rest)
    return False


def resized(state: State, names: Sequence[str],
            aside: Callable[[State], State]) -> dict[int, LoopJoin]:
    """The state's arrays that one iteration (``aside``, traced aside) gives other sizes,
    each with how it is carried; empty when none can be carried so."""
    leaves, structure = flatten(state)
    after = probe(aside, [leaves], [structure])
    found: dict[int, LoopJoin] = {}
    for k, (start, made) in enumerate(zip(state, after, strict=True)):
        if not (isinstance(start, Tracer) and isinstance(made, Tracer)) or start.ndim == 0 \
                or start.dtype != made.dtype or start.ndim != made.ndim \
                or start.aval.shape == made.aval.shape:
            continue
        try:
            found[k] = LoopJoin(start.aval, made.aval, names[k])
        except ValueError:
            continue
    return found


class Carried:
    """The loop's state with the resized arrays packed (what the loop carries) and the
    state the user's code sees, unpacked."""

    def __init__(self, joins: dict[int, LoopJoin]) -> None:
        self.joins = joins

    def packed(self, state: State) -> State:
        return tuple(self.joins[k].pad(v) if k in self.joins else v
                     for k, v in enumerate(state))

    def shown(self, state: State) -> State:
        return tuple(self.joins[k].shown(v) if k in self.joins else v
                     for k, v in enumerate(state))

    def body(self, body: Callable[..., State]) -> Callable[..., State]:
        def step(*args: Any) -> State:
            *lead, state = args
            out = body(*lead, self.shown(state))
            for k, join in self.joins.items():
                if state[k].buffer.version:  # Python's writes would reach the array
                    raise current().error(  # it started as, which the loop has copied
                        f"the loop writes into '{join.name}', which it also resizes",
                        hint=f"write into a new array: {join.name} = {join.name}.copy() "
                             "in the loop, before the writes")
            return self.packed(out)
        return step
