"""Generator expressions over runtime sequences, kept unrun until something consumes
them: ``all()``/``any()`` and ``next()`` stop at the item that decides them (a loop with
an early exit); anything else lays them out (:mod:`.comprehensions`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..tracing.tracer import as_tracer, current

if TYPE_CHECKING:
    from .sequences import RuntimeSeq


@dataclass(frozen=True)
class RuntimeGenerator:
    """``(fn(v) for v in seq if keep(v))`` over a runtime sequence, not run yet.

    ``all()`` and ``any()`` of it stop at the first item that decides them, as Python's
    do: a loop with an early exit, which needs no bound on the length (``all(n % j for
    j in range(2, n))``) and never evaluates the items after it. Anything else lays it
    out (``laid_out``: the comprehension's array, or its masked selection)."""

    seq: RuntimeSeq
    fn: Callable[[Any], Any]
    keep: Callable[[Any], Any] | None
    laid_out: Callable[[], Any]
    #: Set by :meth:`first`: ``next()`` took an item, which a compiled kernel cannot
    #: resume after (a second ``next()`` or a loop over the rest is refused).
    advanced: list[bool] = field(default_factory=list)

    def _search(self, hit: Callable[[Any], Any]) -> tuple[Any, Any]:
        """The first position whose item ``hit`` holds for (a loop that stops there,
        needing no bound on the length), and whether there is one."""
        n = self.seq.length

        def running(state: Any) -> Any:
            i, found = state
            return np.logical_and(np.less(i, n), np.logical_not(found))

        def step(state: Any) -> Any:
            i, _ = state
            here = hit(self.seq.item(i))
            return np.where(here, i, i + 1), here

        start = (as_tracer(np.int64(0)), as_tracer(np.False_))
        at, found = lax.while_loop(running, step, start)
        return at, found

    def decided(self, truth: Callable[[Any], Any], any_: bool) -> Any:
        """``any(self)`` (``any_``) or ``all(self)``; ``truth``: a value's as a bool."""
        def deciding(item: Any) -> Any:  # true where this item decides the answer
            def decides() -> Any:
                t = truth(self.fn(item))
                return t if any_ else np.logical_not(t)
            if self.keep is None:
                return decides()
            return lax.cond(truth(self.keep(item)), decides, lambda: as_tracer(np.False_))

        _, found = self._search(deciding)
        return found if any_ else np.logical_not(found)

    def first(self, truth: Callable[[Any], Any], *default: Any) -> Any:
        """``next(self)`` or ``next(self, default)``: the first kept item's value, found
        by a loop that stops there; Python's StopIteration where there is none."""
        self.refuse_advanced()
        self.advanced.append(True)
        at, found = self._search(lambda item: truth(self.keep(item)) if self.keep is not None
                                 else as_tracer(np.True_))
        if not default:
            lax.bind(raise_if_p, as_tracer(np.logical_not(found)).atom,
                     error="StopIteration", message="")
            return self.fn(self.seq.item(at))
        if default[0] is None:
            raise current().error("next(generator, None) of runtime items: the kernel's "
                                  "result has one type", hint="give a default of the "
                                  "items' type (next(gen, -1))")
        return lax.cond(found, lambda: self.fn(self.seq.item(at)), lambda: default[0])

    def refuse_advanced(self) -> None:
        """A located error if :meth:`first` took an item already."""
        if self.advanced:
            raise current().error("a generator over runtime items used again after next() "
                                  "took its first item: a compiled kernel does not resume it",
                                  hint="make a list of the items and index it")
