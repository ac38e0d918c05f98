"""Arrays a runtime loop resizes: ``while ...: x = x[1:]``, pairwise halving
``x = x[:n] + x[n:2 * n]``, ``a = a[1:, 1:]``.

A loop's state has one type, so such an array is carried as a :class:`~.joins.Joined`:
laid out flat at the front of a buffer as large as the array it starts as, its sizes
carried as integers. Each iteration sees it with its own sizes (bound while the kernel
runs) and lays out what the body makes in the buffer again. That holds while the array
does not outgrow its start, or, in a loop of known trip count, grows by a bounded step
per iteration (``np.append(out, v)``: room for one more item per iteration). Other
growth (``np.append`` in a ``while`` loop) is a located error, since buffers are planned
before the kernel runs.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..errors import TraceError
from ..numpy_api.masks import MaskedValue
from ..shapes import DimExpr, FloorDiv, Relu, bound_symbols, maximum, relu, upper_bound
from ..tracing.avals import AType
from ..tracing.bodies import flatten, probe, probe_sizes
from ..tracing.tracer import Tracer, as_tracer, current, user_loc
from .joins import Join, Joined, layout

State = tuple[Any, ...]
#: The room of an array while its growth is measured is a symbol named so.
_ROOM = "%room"


class LoopJoin(Join):
    """How a loop carries one resized array: with room for the array it starts as, or
    for what it grows to in a loop of known trip count (``grown``: per axis, the room)."""

    def __init__(self, start: AType, made: AType, name: str,
                 grown: dict[int, DimExpr] | None = None,
                 inner: dict[str, DimExpr] | None = None) -> None:
        self.name = name
        self.grown = grown or {}
        #: While the growth per iteration is measured (:func:`_growth`): per axis, bounds
        #: on how much one iteration lengthens it; and the sizes the iteration saw.
        self.measured: dict[int, list[DimExpr]] | None = None
        self.seen: tuple[DimExpr, ...] = ()
        known = {**current().uppers(), **(inner or {})}  # ``made``'s sizes are in inner's
        uppers = []
        #: Per axis, the bound on the size the array starts with.
        self.starts: list[DimExpr] = []
        for axis, (begin, end) in enumerate(zip(start.shape, made.shape, strict=True)):
            upper = upper_bound(begin, known)
            if upper is None or bound_symbols(upper):
                raise ValueError("unbounded")
            self.starts.append(upper)
            # what one iteration makes, where its sizes are known here (``r = r @ a``
            # with ``r`` square and ``a`` not: sizes the next iteration checks)
            other = upper_bound(end, known)
            grows = other is not None and not bound_symbols(other) \
                and not at_most(other, upper)
            upper = maximum(upper, other) if grows and other is not None else upper
            uppers.append(self.grown.get(axis, upper))
        self.room(tuple(uppers), start.dtype)
        self.common = tuple(s if s == m else None
                            for s, m in zip(start.shape, made.shape, strict=True))
        self.start, self.made, self.inner = start, made, inner

    def pad(self, value: Any, into: Tracer | None = None) -> Joined:
        """What an iteration makes, in the buffer: it must fit the array's start (an
        axis that grows by a bounded step fits by induction; the buffer's write checks
        it at run time all the same). With ``into`` (the buffer the iteration got), its
        front is overwritten rather than a fresh buffer filled: each iteration writes
        the array's size, not the buffer's."""
        ctx = current()
        value = _array(value)  # (binds its size: before the bounds are read)
        made = layout(value)
        if into is not None and self.measured is None and made is not None \
                and made.buffer.aval == into.aval:  # a branch's buffer: carried as it is
            return made
        known = ctx.uppers()
        for axis, (size, upper, common) in enumerate(zip(value.aval.shape, self.uppers,
                                                         self.common, strict=True)):
            high = upper_bound(size, known)
            if self.measured is not None:
                self.measured[axis] = self._growths(size, high, axis, known)
                continue
            fits = high is not None and (axis in self.grown or at_most(high, upper)) and (
                common is None or size == common)
            if not fits:
                raise Overgrown(
                    f"the loop resizes '{self.name}' beyond the size it starts with (axis "
                    f"{axis}: {size} against {upper})", loc=user_loc(), kernel=ctx.kernel,
                    hint="memory is planned before the kernel runs: allocate the largest "
                         "array before the loop and fill a prefix (out = np.empty(n); "
                         "out[k] = v; k += 1; then out[:k])")
        return super().pad(value, into)

    def _growths(self, size: DimExpr, high: DimExpr | None, axis: int,
                 known: dict[str, DimExpr]) -> list[DimExpr]:
        """Bounds on ``size`` less the size the iteration saw: from their upper bounds
        (an append under an ``if``), and from ``size`` in terms of the seen size
        (``concatenate((out, out[-1:]))``)."""
        found = [] if high is None else [high - self.uppers[axis]]
        seen = self.seen[axis] if self.seen else None
        if seen is not None:
            own = bound_symbols(seen)
            relative = upper_bound(size, {k: v for k, v in known.items() if k not in own})
            if relative is not None:
                found.append(relative - seen)
        return found

    def shown(self, joined: Joined) -> Tracer:
        """The array as the loop's code sees it; a vector is the buffer's front itself,
        so writes into it reach the buffer (and are refused, see :meth:`Carried.body`)."""
        if len(self.uppers) != 1 or self.common[0] is not None:
            value = joined.laid_out(self)
        else:
            (size,) = joined.dims
            low = np.maximum(size, 0)
            value = joined.buffer[:np.minimum(low, lax.dim_value(self.uppers[0]))]
            if self.measured is None:  # (measuring, the branches must show the growth)
                _FRONTS[id(value)] = value
        self.seen = value.aval.shape
        return value


#: The vectors :meth:`LoopJoin.shown` made, each the front of its loop's buffer.
_FRONTS: weakref.WeakValueDictionary[int, Tracer] = weakref.WeakValueDictionary()


def carried_front(value: Any) -> Tracer | None:
    """``value`` if it is a resized vector as its loop shows it (the front of the
    loop's buffer), else None."""
    return value if _FRONTS.get(id(value)) is value else None


def _array(value: Any) -> Any:
    """A lazy boolean selection (``d[d > t]``) as the array it selects."""
    return as_tracer(value) if isinstance(value, MaskedValue) else value


def at_most(a: DimExpr, b: DimExpr) -> bool:
    """Whether ``a <= b`` for all sizes (False: not proven). A ``relu(e)`` term of ``a``
    is split into its two cases (``e`` and 0), so ``relu(n - 1) <= n``; one of ``b`` is at
    least either case, so ``m <= n + relu(m - n)``; ``e // k`` is at most ``relu(e - 1)``
    for ``k >= 2``, so ``(n + 1) // 2 <= n``, and ``(e + c) // k`` at most ``relu(e)`` for
    ``0 <= c < k`` (a ceiling division), so ``(n + 4) // 5 <= n``."""
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
            offset = dict(atom.expr.terms).get((), 0)
            if 0 <= offset < atom.divisor and at_most(  # (e + c) // k <= max(e, 0)
                    rest + relu(atom.expr - offset) * coeff, b):
                return True
            return at_most(rest + relu(atom.expr - 1) * coeff, b)
    for mono, coeff in a.terms:  # -relu(e) is at most both -e and 0
        if len(mono) == 1 and isinstance(mono[0], Relu) and coeff < 0:
            rest = a - DimExpr(((mono, coeff),))
            return at_most(rest + mono[0].expr * coeff, b) or at_most(rest, b)
    for mono, coeff in b.terms:  # b >= each case of its relu(e) term
        if len(mono) == 1 and isinstance(mono[0], Relu) and coeff > 0:
            rest = b - DimExpr(((mono, coeff),))
            return at_most(a, rest + mono[0].expr * coeff) or at_most(a, rest)
    return False


class Overgrown(TraceError):
    """An iteration makes an array larger than its loop can carry."""


def checked_equal(state: State, aside: Callable[[State], State]
                  ) -> dict[int, tuple[DimExpr, ...]]:
    """The state's arrays that one iteration (``aside``) gives sizes written otherwise
    in the kernel's entry sizes (``state[:, :s]`` of a ``4 * s`` axis, where the array
    starts with ``s``): equal unless a size is negative, which NumPy refuses before.
    Each is checked equal where the loop runs and carried at its starting size. Empty
    when some array's sizes are not of that kind."""
    leaves, structure = flatten(state)
    after, _ = probe_sizes(aside, [leaves], [structure])
    found: dict[int, tuple[DimExpr, ...]] = {}
    for k, (start, made) in enumerate(zip(state, after, strict=True)):
        made = _array(made)
        if not isinstance(start, Tracer) or not isinstance(made, Tracer) \
                or start.aval.shape == made.aval.shape:
            continue
        pairs = [(a, b) for a, b in zip(start.aval.shape, made.aval.shape, strict=False)
                 if a != b]
        if start.dtype != made.dtype or start.ndim != made.ndim or any(
                bound_symbols(a) or bound_symbols(b) or (a - b).is_const for a, b in pairs):
            return {}
        found[k] = start.aval.shape
    return found


def kept_sizes(body: Callable[..., State], sizes: dict[int, tuple[DimExpr, ...]],
               names: Sequence[str]) -> Callable[..., State]:
    """``body`` with each array of ``sizes`` checked to have them (a ValueError naming
    the variable where it does not) and typed with them."""
    def kept(*args: Any) -> State:
        out = list(body(*args))
        for k, shape in sizes.items():
            value = as_tracer(out[k])
            for axis, (got, want) in enumerate(zip(value.aval.shape, shape, strict=True)):
                current().check("==", got, want, "ValueError",
                                f"the loop changes the size of '{names[k]}' (axis {axis}: "
                                "{lhs} against {rhs} before it)")
            out[k] = lax.refine_shape(value, shape)
        return tuple(out)
    return kept


def resized(state: State, names: Sequence[str], aside: Callable[[State], State],
            trips: DimExpr | None) -> dict[int, LoopJoin]:
    """The state's arrays that one iteration (``aside``, traced aside) gives other sizes,
    each with how it is carried; empty when none can be carried so. With a known trip
    count, an array that grows by a bounded step gets room for every step."""
    leaves, structure = flatten(state)
    after, inner = probe_sizes(aside, [leaves], [structure])
    found: dict[int, LoopJoin] = {}
    for k, (start, made) in enumerate(zip(state, after, strict=True)):
        made = _array(made)
        if not (isinstance(start, Tracer) and isinstance(made, Tracer)) or start.ndim == 0 \
                or start.dtype != made.dtype or start.ndim != made.ndim \
                or start.aval.shape == made.aval.shape:
            continue
        try:
            found[k] = LoopJoin(start.aval, made.aval, names[k], inner=inner)
        except ValueError:
            continue
    if trips is None or not found:
        return found
    for k, steps in _growth(state, aside, found).items():
        join = found[k]
        room = {axis: join.starts[axis] + trips * step for axis, step in steps.items()}
        found[k] = LoopJoin(join.start, join.made, join.name, room, join.inner)
    return found


def _growth(state: State, aside: Callable[[State], State], joins: dict[int, LoopJoin]
            ) -> dict[int, dict[int, DimExpr]]:
    """Per resized array, the axes one iteration can lengthen and by how much at most
    (a constant), measured on a body traced aside with the array's room a symbol."""
    rooms = {k: tuple(DimExpr.sym(f"{_ROOM}{k}.{a}") for a in range(len(j.uppers)))
             for k, j in joins.items()}
    measuring = {}
    for k, join in joins.items():
        m = LoopJoin(join.start, join.made, join.name, dict(enumerate(rooms[k])),
                     join.inner)
        m.measured = {}
        measuring[k] = m
    carried = Carried(measuring)
    leaves, structure = flatten(state)
    try:
        probe(lambda s: carried.body(aside)(carried.packed_inside(s)), [leaves],
              [structure])
    except TraceError:
        return {}
    steps: dict[int, dict[int, DimExpr]] = {}
    for k, m in measuring.items():
        assert m.measured is not None
        for axis, growths in m.measured.items():
            step = next((s for s in map(_step, growths) if s is not None), None)
            if step is not None:
                steps.setdefault(k, {})[axis] = step
    return steps


def _step(growth: DimExpr) -> DimExpr | None:
    """How much an axis grows per iteration at most, kept simple: a small constant
    (``np.append(out, v)``: 1, under an ``if`` too), else a size that does not depend on
    the array (``np.vstack((out, row))``)."""
    if at_most(growth, DimExpr.const(0)):
        return None  # it never grows
    for bits in range(_SMALL_STEP):
        if at_most(growth, DimExpr.const(1 << bits)):
            return DimExpr.const(1 << bits)
    if bound_symbols(growth) or any(s.startswith(_ROOM) for s in growth.symbols()) \
            or not growth.is_nonneg():
        return None  # it grows with the array, or may shrink it
    return growth


#: Growth per iteration proven at most ``2**k`` for ``k`` below this is rounded up to it.
_SMALL_STEP = 11


class Carried:
    """The loop's state with the resized arrays packed (what the loop carries) and the
    state the user's code sees, unpacked."""

    def __init__(self, joins: dict[int, LoopJoin]) -> None:
        self.joins = joins
        #: The resized arrays that stand for Python lists (shown as lists again).
        self.lists: set[int] = set()

    def packed(self, state: State) -> State:
        self.lists = {k for k in self.joins if getattr(state[k], "list_like", False)}
        return tuple(self.joins[k].pad(v) if k in self.joins else v
                     for k, v in enumerate(state))

    def packed_inside(self, state: State) -> State:
        """The state as the loop starts, packed without measuring it, as a body gets it
        (its buffers not yet written)."""
        def fresh(joined: Joined) -> Joined:
            return Joined(Tracer(joined.buffer.atom), joined.dims)
        return tuple(fresh(Join.pad(self.joins[k], v)) if k in self.joins else v
                     for k, v in enumerate(state))

    def shown(self, state: State) -> State:
        out = tuple(self.joins[k].shown(v) if k in self.joins else v
                    for k, v in enumerate(state))
        for k in self.lists:
            out[k].list_like = True
        return out

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
            return tuple(self.joins[k].pad(v, state[k].buffer) if k in self.joins else v
                         for k, v in enumerate(out))
        return step
