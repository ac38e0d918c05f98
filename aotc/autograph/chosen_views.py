"""A view of an outer array that a runtime branch chooses: ``v = y[1:] if c else y[:-1]``.

Python's ``v`` is a view of ``y`` on either path: a write into ``v`` changes ``y``, and a
later write into ``y`` shows in ``v``. A conditional in the IR gives ``v``'s values, a
new array, so both would be lost. When every branch gives a view of one array from
outside the conditional, with windows that differ only where they start, the result is
that array's view again, its starts chosen by the test (:func:`chosen_views`): the
views' writes and refreshes (:mod:`aotc.numpy_api.views`) then work as after any view.
Any other result that some branch gives as a view of an outer array (of another size
on each path, of two arrays, or a new array on the other path) is marked
:data:`~aotc.numpy_api.views.DETACHED`: a write into it, or a read of it after its
array was written, is a located error, never values that miss the write.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .. import lax
from ..shapes import DimExpr, bound_symbols, maximum
from ..tracing.bodies import flatten
from ..tracing.tracer import DETACHED, Tracer, as_tracer, bind_dim, current, encloses
from .returns import RET
from .written import Outer

#: Per branch trace, per state slot: (base, window) of a view of an outer array, or None.
Seen = list[tuple[Any, Any] | None]


def seen_views(out: Sequence[Any]) -> Seen:
    """The views of arrays from outside the branch (traced in ``current()``) that a
    branch gives, by state slot."""
    here = current()
    outer = here.parent
    return [(v.base, v.window) if isinstance(v, Tracer) and v.base is not None
            and v.window is not None and outer is not None
            and encloses(v.base.context, outer) else None for v in out]


def _alike(a: tuple[Any, Any] | None, b: tuple[Any, Any] | None) -> bool:
    """Views of one array at windows that differ only in where they start."""
    return a is not None and b is not None and a[0] is b[0] and a[1] is not DETACHED \
        and b[1] is not DETACHED and replace(a[1], start=b[1].start) == b[1]


def _inner_starts(a: tuple[Any, Any] | None, b: tuple[Any, Any] | None) -> int:
    """For alike views of which one starts where its branch computed (sizes bound
    inside it, unknown outside: a row chosen in an ``elif``), how many starts they
    have; else 0."""
    if a is None or b is None or not _alike(a, b):
        return 0
    outside = set(current().uppers())
    inner = any(bound_symbols(s) - outside for s in (*a[1].start, *b[1].start))
    return len(a[1].start) if inner else 0


def starts_wanted(orelse: Seen, then: Seen) -> dict[int, int]:
    """The slots whose starts the branches must give as values (see
    :func:`_inner_starts`), with how many each has."""
    wanted = {k: _inner_starts(a, b) for k, (a, b) in enumerate(zip(then, orelse,
                                                                    strict=True))}
    return {k: n for k, n in wanted.items() if n}


def window_starts(out: Sequence[Any], starts_of: dict[int, int]) -> tuple[Any, ...]:
    """A branch's view starts for ``starts_of``'s slots, as values (zeros where it gives
    no such view: the result is then marked :data:`DETACHED`)."""
    found: list[Any] = []
    for k, count in sorted(starts_of.items()):
        v = out[k]
        window: Any = v.window if isinstance(v, Tracer) and v.base is not None else DETACHED
        starts = (DimExpr.const(0),) * count if window is DETACHED else window.start
        found.extend(lax.dim_value(d) for d in starts)
    return tuple(found)


def chosen_views(result: Sequence[Any], names: Sequence[str], test: Any, orelse: Seen,
                 then: Seen, starts: Sequence[Any] | None = None) -> None:
    """Make each result slot that both branches give as a view of one outer array, at
    windows differing only in their starts, that view again (in place; ``starts``: the
    starts the branches gave as values, see :func:`window_starts`); mark the other
    views :data:`DETACHED` (not a returned value: nothing runs after a ``return``)."""
    given = list(starts) if starts is not None else []
    for k, value in enumerate(result):
        a, b = then[k], orelse[k]
        inner = _inner_starts(a, b)
        mine, given = (given[:inner], given[inner:]) if starts is not None else ([], given)
        if names[k] == RET or (a is None and b is None) or not isinstance(value, Tracer) \
                or value.base is not None:
            continue  # (a view every branch gives alike is one already: aliases)
        if a is None or b is None or not _alike(a, b) or (inner and not mine):
            seen = a if a is not None else b
            assert seen is not None  # (both None was passed over above)
            value.view_of(seen[0], DETACHED)
            continue
        base, w_then, w_else = a[0], a[1], b[1]
        if mine:  # the starts as the conditional gave them
            chosen = tuple(bind_dim(as_tracer(v), d)
                           for v, d in zip(mine, base.aval.shape, strict=True))
        else:
            chosen = tuple(s if s == t else bind_dim(
                as_tracer(np.where(test, lax.dim_value(s), lax.dim_value(t))), maximum(s, t))
                for s, t in zip(w_then.start, w_else.start, strict=True))
        value.view_of(base, replace(w_then, start=chosen))


def resized_views(before: Sequence[Any], after: Sequence[Any], resized: Collection[int],
                  shared: Sequence[Any] = ()) -> tuple[Any, ...]:
    """The state after a loop that resizes the arrays at ``resized`` (``cur = cur[1:]``),
    each a :data:`DETACHED` view of the array it started as (or as a view of) when
    another variable read after the loop (in ``before`` or ``shared``) or the caller
    holds that array or a view of it (``v = y``, or ``v = y[1:]``, then ``v = v[1:]``):
    Python's is a view of that array (or a new one) depending on the trips, where the
    loop's is a buffer of its own. A resized array no one else reads (``v =
    x.copy()``, or ``y[1:]`` of a ``y`` not read again) is the loop's alone."""
    for k in resized:
        first, last = before[k], after[k]
        if not isinstance(first, Tracer) or not isinstance(last, Tracer):
            continue
        base = first.base if first.base is not None else first
        if held_elsewhere(base, [v for j, v in enumerate(before) if j != k], shared):
            last.view_of(base, DETACHED)
    return tuple(after)


def held_elsewhere(array: Tracer, others: Sequence[Any], shared: Sequence[Any]) -> bool:
    """Whether a variable among ``others`` or ``shared`` holds ``array`` or a view of it
    (or a container holding one), or it is one of the kernel's arguments (its caller
    holds it)."""
    top = current()
    while top.parent is not None:
        top = top.parent
    if id(array) in top.argument_ids:
        return True
    held = [v.value if isinstance(v, Outer) else v for v in [*others, *shared]]
    return any(leaf is array or (isinstance(leaf, Tracer) and leaf.base is array)
               for leaf in flatten(held)[0])

