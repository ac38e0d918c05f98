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

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .. import lax
from ..shapes import bound_symbols, maximum
from ..tracing.tracer import DETACHED, Tracer, as_tracer, bind_dim, current, encloses
from .returns import RET

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


def chosen_views(result: Sequence[Any], names: Sequence[str], test: Any, orelse: Seen,
                 then: Seen) -> None:
    """Make each result slot that both branches give as a view of one outer array, at
    windows differing only in their starts, that view again (in place); mark the other
    views :data:`DETACHED` (not a returned value: nothing runs after a ``return``)."""
    outside = set(current().uppers())
    for k, value in enumerate(result):
        if names[k] == RET:
            continue
        a, b = then[k], orelse[k]
        if (a is None and b is None) or not isinstance(value, Tracer) \
                or value.base is not None:
            continue  # (a view every branch gives alike is one already: aliases)
        if a is None or b is None or a[0] is not b[0] or a[1] is DETACHED \
                or b[1] is DETACHED or replace(a[1], start=b[1].start) != b[1] \
                or any(bound_symbols(s) - outside for s in (*a[1].start, *b[1].start)):
            base = (a or b)[0]  # type: ignore[index]
            value.base, value.window, value.seen_version = base, DETACHED, base.version
            continue
        base, (w_then, w_else) = a[0], (a[1], b[1])
        starts = tuple(s if s == t else bind_dim(
            as_tracer(np.where(test, lax.dim_value(s), lax.dim_value(t))), maximum(s, t))
            for s, t in zip(w_then.start, w_else.start, strict=True))
        value.base, value.window = base, replace(w_then, start=starts)
        value.seen_version = base.version
