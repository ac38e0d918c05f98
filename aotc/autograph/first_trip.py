"""An array a runtime loop rebinds, which the caller or another variable also holds.

In Python, ``b = y`` then ``for ...: b[0] += 1; b = np.zeros(n)`` writes ``y`` on the
first trip: until the body rebinds it, ``b`` *is* ``y``. The loop carries ``b`` as a
value of its own (the state is a fixed point over trips), so that write would reach only
the loop's copy. The same goes for reads: a write into ``y`` on the first trip shows in
``b`` there. So when a body writes either one and rebinds ``b`` on every path
(:func:`checked` finds it, :class:`Rebinds`), the loop is traced again carrying a flag
that is true on the first trip only, and the body's ``b`` and the array it started as
are one array where the flag holds (:func:`aliases.path_aliased`): each write into
either is repeated into the other there (:class:`FirstTrip`).

A body that rebinds ``b`` on some paths only, or to a view, is a located error: which
array ``b`` is on a later trip is then decided while the kernel runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tracing.aliases import path_aliased
from ..tracing.tracer import Tracer, as_atom, current, encloses
from .chosen_views import held_elsewhere
from .written import Outer

State = tuple[Any, ...]
Body = Callable[..., State]


class Rebinds(Exception):
    """A loop body writes, and then rebinds, the state values at ``positions``, each an
    array another variable or the caller holds."""

    def __init__(self, positions: frozenset[int]) -> None:
        super().__init__("a loop body rebinds an array it wrote, held elsewhere")
        self.positions = positions


def _holder(before: State, state: State, k: int, shared: State) -> Tracer | None:
    """The body's value of the array the state value at ``k`` started as, when another
    variable or the caller holds it: another state value's (``a = b = y``, both in the
    state), else that array itself (an outer array, which the body then carries)."""
    first = before[k]
    if not isinstance(first, Tracer) or first.base is not None or first.ndim == 0:
        return None
    others = [v for j, v in enumerate(before) if j != k]
    if not held_elsewhere(first, others, shared):
        return None
    j = next((j for j, v in enumerate(before) if j != k and _unwrapped(v) is first), None)
    held = _unwrapped(state[j]) if j is not None else first
    return held if isinstance(held, Tracer) else None


def _unwrapped(value: Any) -> Any:
    """A state value; for a variable the loop writes without assigning, its array."""
    return value.value if isinstance(value, Outer) else value


def checked(body: Body, before: State, names: Sequence[str], shared: State = (),
            converted: frozenset[int] = frozenset()) -> Body:
    """``body`` (a runtime loop's, over the state ``before``), raising :class:`Rebinds`
    for the state values it writes (or whose array it writes through another name) and
    rebinds, each holding an array held elsewhere (those in ``converted`` aside)."""
    def step(*args: Any) -> State:
        *_, state = args
        holders = {k: _holder(before, state, k, shared) for k in range(len(state))
                   if k not in converted}
        versions = {k: (state[k].version, h.version) for k, h in holders.items()
                    if h is not None and isinstance(state[k], Tracer)}
        written = {k: v.version for k, v in enumerate(state) if isinstance(v, Tracer)}
        out = body(*args)
        for k, version in written.items():
            if state[k].version != version and _view_of_outer(out[k]):
                raise current().error(
                    f"the loop writes into '{names[k]}' and then makes it a view of an array "
                    "from outside the loop: on the next trip Python's writes into it reach "
                    "that array",
                    hint="write into the array itself, or take a .copy() of the view")
        found = set()
        for k, (mine, theirs) in versions.items():
            inside, last, holder = state[k], out[k], holders[k]
            assert holder is not None
            if (inside.version, holder.version) == (mine, theirs) \
                    or any(last is s for s in state):
                continue  # nothing written, or handed on to another name (a swap)
            if not isinstance(last, Tracer) or last.aval.shape != inside.aval.shape:
                continue  # (a resized array: resizing refuses the writes)
            if last.base is not None or any(o is inside for o, _ in last.path_aliases):
                raise current().error(
                    f"the loop writes into '{names[k]}' (or into the array it starts as) "
                    "and rebinds it on some paths only, or to a view: which array it is "
                    "on a later trip is decided while the kernel runs",
                    hint=f"write into a copy ({names[k]} = {names[k]}.copy() before the "
                         "loop), or rebind it on every path to a new array")
            found.add(k)
        if found:
            raise Rebinds(frozenset(found))
        return out
    return step


def _view_of_outer(value: Any) -> bool:
    """Whether ``value`` is a view of an array made outside the loop body being traced."""
    if not isinstance(value, Tracer) or value.base is None or value.window is None:
        return False
    outer = current().parent
    return outer is not None and encloses(value.base.context, outer)


class FirstTrip:
    """A loop's state with a flag after it, true on the first trip only; on that trip
    the body's values at ``positions`` are the arrays they started as."""

    def __init__(self, positions: frozenset[int], before: State, shared: State) -> None:
        self.positions = positions
        self.before = before
        self.shared = shared
        self.state: State = (*before, Tracer(as_atom(True)))

    def body(self, body: Body, names: Sequence[str]) -> Body:
        """``body`` over the flagged state."""
        inner = checked(body, self.before, names, self.shared, self.positions)

        def step(*args: Any) -> State:
            *lead, state = args
            *values, first = state
            for k in self.positions:
                holder = _holder(self.before, tuple(values), k, self.shared)
                path_aliased(values[k], holder, first)
            return (*inner(*lead, tuple(values)), Tracer(as_atom(False)))
        return step

    @staticmethod
    def run(run: Callable[[State, Body, Callable[[State], State]], State]
            ) -> Callable[[State, Body, Callable[[State], State]], State]:
        """A loop's ``run`` over the flagged state (a while loop's test sees the state
        without the flag)."""
        return lambda state, step, shown: run(state, step, lambda s: shown(s)[:-1])

    @staticmethod
    def aside(aside: Callable[[State], State]) -> Callable[[State], State]:
        """A body traced aside (for the types its state takes), over the flagged state."""
        return lambda state: (*aside(state[:-1]), state[-1])

    @staticmethod
    def result(state: State) -> State:
        """The loop's state after it, without the flag."""
        return state[:-1]
