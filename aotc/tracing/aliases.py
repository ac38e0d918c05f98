"""Views in the state of a loop or branch: NumPy's aliasing across a body's boundary.

A state value that is a view (``u = U[1:-1]``) is not a value of its own: writing
through it changes its base, and reading it sees the base's writes. Carried as a copy
it would go wrong twice: the body would update ``u`` while reading a stale ``U`` (a
stencil through a padded array), and the view, first read inside the body, would hold
a value of the body's program after it. So views are not carried
(:meth:`Views.split`); the body sees

- a view of an array the state does not hold (``U`` read by closure): the very same
  view. Writing through it writes ``U``, which the construct then carries as any outer
  array it writes into (:class:`~aotc.tracing.bodies.OuterWrite`); reading it re-derives it
  from the body's value of ``U``;
- a view of an array the state also holds (``U`` and ``u`` both assigned in the loop):
  the same window of the body's value of ``U``. A swap ``U, V = V, U; u, v = v, u``
  keeps each view on the array it moved with.

Two state values that are one array (``inp = out = y``) are that one array in the body
too, and must come back as one array (a swap of the two names does).

A loop body must hand each view back as the same window of the same array (the state
is a fixed point over iterations). A view it rebinds to something else (``u = u * 2``)
is traced again as an ordinary carried value (:class:`Rebound`). A branch may return
anything; a view it returns in every branch is, afterwards, that view.

Arrays carried by name move between names, not contents: after ``a, b = b, a`` in a
loop that writes them, the array that started as ``a`` holds what ``a`` or ``b`` holds
at the end depending on the trip count's parity (:func:`swapped_arrays`), which the
caller sees when they are its arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..ir import Lit, Program
from ..ops.core import ALL_PRIMITIVES
from .bind import bind1, select
from .bodies import flatten, unflatten
from .tracer import DETACHED, Tracer, as_tracer, bind_dim, current, dim_value, encloses

I64 = np.dtype(np.int64)

Tree = Any


class Rebound(Exception):
    """A loop body handed back the views at these state positions as something else
    (``moved``: those it handed back as other views, ``cur = y[i]``; ``moving``: those
    it handed back as views of the same array at other starts)."""

    def __init__(self, views: Views, positions: set[int], moved: set[int],
                 moving: AbstractSet[int] = frozenset()) -> None:
        super().__init__("a loop body rebound a view in its state")
        self.views = views
        self.positions = positions
        self.moved = moved
        self.moving = moving


def _is_view(leaf: Any) -> bool:
    """A view with a window (slices, transposes, unit axes), which writes reach (not a
    :data:`DETACHED` one: a loop carries that as a value, still detached in the body)."""
    return isinstance(leaf, Tracer) and leaf.base is not None and leaf.window is not None \
        and leaf.window is not DETACHED and leaf.ndim > 0


def materialized(leaves: list[Any]) -> list[Any]:
    """A body's results, each view as its value now: while the body still sees the arrays
    it carries as its own (see ``bodies.rebound``), not after, when a view would be
    derived again from the array's value before the construct."""
    return [Tracer(leaf.atom) if isinstance(leaf, Tracer) and leaf.base is not None
            else leaf for leaf in leaves]


def _view_of(base: Tracer, window: Any) -> Tracer:
    """A view of ``base`` through ``window``, derived (by ``refresh``) when first read."""
    view = Tracer(base.atom)
    view.base, view.window = base, window
    view.seen_version = base.version - 1  # stale: read, it re-derives from the base
    return view


@dataclass
class Views:
    """How the views among a state's leaves get into and out of a body.

    ``leaves`` are the state's leaves before the construct; ``kept`` the positions
    carried as values (everything but views); ``outer`` the views of arrays outside
    the state, passed in as they are; ``inner`` the views of a kept leaf: position ->
    (position of the base, window).
    """

    leaves: list[Tracer]
    structure: Tree
    kept: list[int] = field(default_factory=list)
    outer: dict[int, Tracer] = field(default_factory=dict)
    inner: dict[int, tuple[int, Any]] = field(default_factory=dict)
    #: Views the body rebinds to other views: carried as values, and :data:`DETACHED`
    #: views of their first base after the loop.
    moved: AbstractSet[int] = frozenset()
    #: Views of arrays outside the state that the body moves to other starts of the
    #: same array (``cur = y[i]``): their starts are carried as values.
    moving: dict[int, Tracer] = field(default_factory=dict)
    #: Leaves that are the very array an earlier kept leaf is (``inp = out = y``):
    #: position -> that leaf's position. The body sees one array under both names.
    same: dict[int, int] = field(default_factory=dict)

    @staticmethod
    def split(leaves: list[Tracer], structure: Tree, detached: AbstractSet[int] = frozenset(),
              moved: AbstractSet[int] = frozenset(), moving: AbstractSet[int] = frozenset()
              ) -> Views:
        """Sort the leaves; those in ``detached`` (rebound by the body) are kept."""
        views = Views(list(leaves), structure, moved=frozenset(moved))
        for k, leaf in enumerate(leaves):
            earlier = _first_holding(leaves, k)
            if k not in detached and earlier is not None and earlier in views.kept:
                views.same[k] = earlier
                continue
            if k in detached or not _is_view(leaf):
                views.kept.append(k)
                continue
            base = next((j for j, other in enumerate(leaves) if other is leaf.base), None)
            if base is None and k in moving:
                views.moving[k] = leaf
            elif base is None:
                views.outer[k] = leaf
            else:
                views.inner[k] = (base, leaf.window)  # (a base is never itself a view)
        return views

    def carried(self) -> list[Tracer]:
        """The leaves the construct carries (as values), then the moving views' starts."""
        return [self.leaves[k] for k in self.kept] + [
            dim_value(s) for view in self.moving.values() for s in view.window.start]

    def _moved_to(self, full: list[Any], starts: list[Any]) -> None:
        """The moving views, at ``starts`` (values), into ``full``."""
        for k, view in self.moving.items():
            count = len(view.window.start)
            mine, starts = starts[:count], starts[count:]
            base = view.base
            assert base is not None
            at = tuple(bind_dim(as_tracer(v), d)
                       for v, d in zip(mine, base.aval.shape, strict=True))
            window = replace(view.window, start=at)  # (its sizes are bound here: read here)
            full[k] = Tracer(window.read(base).atom).view_of(base, window)

    def expand(self, values: list[Any], keep_same: bool = False) -> list[Any]:
        """The body's full state from its carried values: views inserted (with
        ``keep_same``, a view whose base came back as the same array is itself)."""
        full: list[Any] = [None] * len(self.leaves)
        kept, starts = values[:len(self.kept)], values[len(self.kept):]
        for k, value in zip(self.kept, kept, strict=True):
            full[k] = value
            first = self.leaves[k]
            if isinstance(first, Tracer) and first.window is not None and first.base \
                    is not None and isinstance(value, Tracer) and value.base is None:
                value.view_of(first.base, DETACHED)  # a view carried apart from its base
                value.carried_apart = first.window is not DETACHED
        self._moved_to(full, list(starts))
        for k, j in self.same.items():
            full[k] = full[j]
        for k, view in self.outer.items():
            full[k] = view
        for k, (base, window) in self.inner.items():
            same = keep_same and full[base] is self.leaves[base]
            full[k] = self.leaves[k] if same else _view_of(full[base], window)
        return full

    def loop_body(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn(*lead, state)`` as a body over the carried values (a list), which hands
        back every view as it came in, or raises :class:`Rebound`."""
        def body(*args: Any) -> Any:
            *lead, values = args
            out = fn(*lead, unflatten(self.structure, self.expand(values)))
            leaves, _structure = flatten(out)
            if len(leaves) != len(self.leaves):
                return out  # the construct reports the mismatch
            lost = {k for k in (*self.outer, *self.inner, *self.moving)
                    if not self._same_view(k, leaves)}
            lost |= {k for k, j in self.same.items() if leaves[k] is not leaves[j]}
            if lost:
                moving = {k for k in lost if k in self.outer and self._alike(k, leaves[k])}
                raise Rebound(self, lost, {k for k in lost if _is_view(leaves[k])}, moving)
            starts = [dim_value(s) for k in self.moving for s in leaves[k].window.start]
            return materialized([leaves[k] for k in self.kept]) + starts
        return body

    def _alike(self, k: int, leaf: Any) -> bool:
        """``leaf`` is the outer view at ``k`` moved: the same array, window but starts."""
        view = self.outer[k] if k in self.outer else self.moving[k]
        return _is_view(leaf) and leaf.base is view.base and leaf.window is not DETACHED \
            and replace(leaf.window, start=view.window.start) == view.window

    def _same_view(self, k: int, out: list[Any]) -> bool:
        leaf = out[k]
        if not _is_view(leaf):
            return False
        if k in self.moving:
            return self._alike(k, leaf)
        if k in self.outer:
            view = self.outer[k]
            return leaf.base is view.base and leaf.window == view.window
        base, window = self.inner[k]
        return leaf.base is out[base] and leaf.window == window

    def reader(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn(*lead, state)`` (a loop's test) over the carried values."""
        def test(*args: Any) -> Any:
            *lead, values = args
            return fn(*lead, unflatten(self.structure, self.expand(values)))
        return test

    def result(self, values: list[Any]) -> Any:
        """The state after the construct, from the carried values' results: each view
        is again a view of its base's result (the same object when that is the same
        array); a view the body moved is a :data:`DETACHED` one."""
        full = self.expand(values, keep_same=True)
        for k in self.moved:
            leaf, first = full[k], self.leaves[k]
            if isinstance(leaf, Tracer) and leaf.base is None and first.base is not None:
                leaf.view_of(first.base, DETACHED)
        return unflatten(self.structure, full)


def _first_holding(leaves: list[Any], k: int) -> int | None:
    """The first position before ``k`` whose leaf is the very array at ``k`` (not a view),
    or None."""
    leaf = leaves[k]
    if not isinstance(leaf, Tracer) or leaf.ndim == 0 or leaf.base is not None:
        return None
    return next((j for j in range(k) if leaves[j] is leaf), None)


def loop_views(leaves: list[Tracer], structure: Tree,
               attempt: Callable[[Views], Any]) -> Any:
    """``attempt(views)`` for a loop whose state is ``leaves``, traced again with each
    view the body rebinds carried as a value, until the body keeps every view."""
    detached: set[int] = set()
    moved: set[int] = set()
    moving: set[int] = set()
    while True:
        views = Views.split(leaves, structure, detached, moved, moving)
        try:
            return attempt(views)
        except Rebound as rebound:
            if rebound.views is not views:
                raise
            if rebound.moving - moving:  # views of one array at other starts: carried
                moving |= rebound.moving
                continue
            moving -= rebound.positions
            detached |= rebound.positions
            moved |= rebound.moved


def branch_views(views: Views, fn: Callable[..., Any], handed: list[list[int | None]],
                 wrote: set[int], given: Sequence[int] = ()) -> Callable[..., Any]:
    """``fn(state)`` (a branch) over the carried values; appends to ``handed``, per leaf
    of what it returns, the position of the state's view it is (or None); adds to
    ``wrote`` the positions among the carried values of the arrays it writes into, and
    gives, after its own values, those at ``given`` as it leaves them (see
    :func:`swapped_writes`)."""
    positions = (*views.outer, *views.inner)

    def branch(*args: Any) -> Any:
        *lead, values = args
        full = views.expand(values)
        mine = {i: full[k] for i, k in enumerate(views.kept) if isinstance(full[k], Tracer)}
        versions = {i: t.version for i, t in mine.items()}
        leaves, structure = flatten(fn(*lead, unflatten(views.structure, full)))
        handed.append([next((k for k in positions if leaf is full[k]), None)
                       for leaf in leaves])
        wrote.update(i for i, t in mine.items() if t.version != versions[i])
        return unflatten(structure, materialized(leaves)), \
            materialized([mine[i] for i in given])
    return branch


def swapped_writes(views: Views, wrote: set[int], same: list[int | None]) -> list[int]:
    """The carried arrays (by position) that a branch wrote and that the branches do not
    all hand back in one slot (``same``): a branch that writes ``Out[...] = ...`` and
    swaps ``In, Out = Out, In`` hands the array both names shared back under the other
    name (or, its sizes differing, in a joined buffer), one that returns not at all, so
    the construct must also give that array as the branches leave it."""
    here = current()
    found = []
    for i in sorted(wrote):
        original = views.leaves[views.kept[i]]
        if i not in same and isinstance(original, Tracer) and original.ndim \
                and original.base is None and not original.list_like \
                and encloses(original.context, here):  # (not a probe's stand-in)
            found.append(i)
    return found


def branch_results(views: Views, results: list[Any], handed: list[list[int | None]],
                   same: list[int | None]) -> list[Any]:
    """A construct's result leaves, with each one that every branch hands back as the
    same view of the state that view again, when its base is the same array afterwards
    (an outer array, or an operand every branch hands back: ``same`` holds, per result
    leaf, the carried position it is in every branch)."""
    out = list(results)
    for i, k in enumerate(handed[0] if handed else []):
        if k is None or any(h[i] != k for h in handed):
            continue
        if k in views.outer or views.kept.index(views.inner[k][0]) in same:
            out[i] = views.leaves[k]
    return out


# -- arrays that are one array on some paths only ----------------------------------------

def path_aliased(one: Any, other: Any, on_path: Tracer) -> None:
    """``one`` and ``other`` are the same array where ``on_path`` holds (``out = x`` in
    one branch, ``out = np.zeros(n)`` in the other): Python's writes into either reach
    the other there, so each write is repeated into the other under that predicate
    (``numpy_api.writes``)."""
    if not (isinstance(one, Tracer) and isinstance(other, Tracer)) or one is other \
            or one.ndim == 0 or other.ndim == 0:
        return
    one.path_aliases.append((other, on_path))
    other.path_aliases.append((one, on_path))


def outer_array(leaf: Any, operand: Any, here: Any) -> Any:
    """The array from outside a branch (traced in a context inside ``here``) that a value
    it gives is: ``operand``, the operand it hands back, if any; else ``leaf`` itself when
    it was made outside (read by closure); None for an array of its own."""
    if operand is not None:
        return operand
    return leaf if isinstance(leaf, Tracer) and encloses(leaf.context, here) else None


def branches_alias(index: Tracer, count: int, operands: list[Any], results: list[Any],
                   identities: list[list[int | None]], leaves: list[list[Any]]) -> None:
    """Each result that some branches (not all) hand back as an array from outside
    them (an operand, ``identities``; or one they read, ``leaves``) is that array on
    those branches' paths (``index``: the branch taken, clamped to ``count``)."""
    here = current()
    for k, result in enumerate(results):
        sources: list[Any] = []
        for ident, branch in zip(identities, leaves, strict=True):
            j = ident[k]
            sources.append(outer_array(branch[k], None if j is None else operands[j], here))
        for source in {id(s): s for s in sources if s is not None}.values():
            taken = [b for b, s in enumerate(sources) if s is source]
            if len(taken) == count:
                continue  # the same array on every path: it is that array itself
            clamped = np.clip(index, 0, count - 1)
            on_path: Any = np.equal(clamped, taken[0])
            for b in taken[1:]:
                on_path = np.logical_or(on_path, np.equal(clamped, b))
            path_aliased(result, source, on_path)


# -- arrays a loop body swaps ----------------------------------------------------------------

def swap_cycles(identity: list[int | None], offset: int, body: Program, first_carry: int
                ) -> list[list[int]]:
    """The carried arrays a loop body hands on to each other (``a, b = b, a``) and writes:
    cycles of state positions, each position ``k`` holding next what ``sigma[k]`` held.
    ``identity`` is per output, the input position it is (see ``bodies.trace_body``);
    carried position ``j`` is the body's input ``first_carry + j``."""
    sigma = {k: j - offset for k, j in enumerate(identity)
             if j is not None and j >= offset and j - offset != k and k < len(body.outputs)}
    cycles: list[list[int]] = []
    seen: set[int] = set()
    for start in sigma:
        cycle, k = [], start
        while k in sigma and k not in seen and k not in cycle:
            cycle.append(k)
            k = sigma[k]
        seen.update(cycle)
        if k != start:
            continue  # a chain, not a cycle: the array it starts from is dropped
        written = any(body.outputs[k] is not body.inputs[first_carry + sigma[k]]
                      for k in cycle)
        if written:
            cycles.append(cycle)
    return cycles


def swapped_arrays(before: list[Any], after: list[Any], cycles: list[list[int]],
                   identity: list[int | None], offset: int, trips: Tracer) -> None:
    """After ``trips`` iterations of a body that swaps the arrays of ``cycles``, each
    array (the object a state value started as) holds what the state position that
    names it then holds: with ``k`` holding next what ``sigma[k]`` held, the array
    that started at ``h`` is at ``sigma^-n(h)``, chosen by ``trips`` modulo the cycle's
    length (dead code when nothing reads those arrays afterwards)."""
    for cycle in cycles:
        inverse = {identity[k] - offset: k for k in cycle}  # type: ignore[operator]
        phase = bind1(ALL_PRIMITIVES["mod"], trips.atom, Lit(np.int64(len(cycle)), I64))
        for h in cycle:
            original = before[h]
            if not isinstance(original, Tracer) or original.ndim == 0:
                continue
            chain, k = [], h
            for _ in cycle:
                chain.append(after[k])
                k = inverse[k]
            value = as_tracer(chain[-1])
            for r in range(len(cycle) - 2, -1, -1):
                is_r = bind1(ALL_PRIMITIVES["eq"], phase.atom, Lit(np.int64(r), I64))
                value = select(is_r, as_tracer(chain[r]).atom, value.atom)
            original[...] = value


def trip_count(lower: Tracer, upper: Tracer) -> Tracer:
    """``len(range(lower, upper))``."""
    span = bind1(ALL_PRIMITIVES["sub"], upper.atom, lower.atom)
    return bind1(ALL_PRIMITIVES["max"], span.atom, Lit(np.int64(0), I64))
