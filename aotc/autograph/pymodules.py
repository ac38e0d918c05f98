"""``bisect`` and ``heapq`` on runtime values.

``bisect.bisect_left(a, v, lo, hi)`` (and ``bisect_right``, ``bisect``) is the
insertion point of ``v`` in the sorted ``a[lo:hi]``: ``np.searchsorted`` of that slice,
plus ``lo``. The functions that change a list in place (``heapq.heappush``,
``heappop``, ``heapify``..., ``bisect.insort``) are C code that would change the Python
list the kernel is traced with, not the list the compiled kernel grows (a loop of
``heappush`` gave an empty list): on runtime values they are a located error, and on
build-time values Python's own. ``heapq.nsmallest(n, it, key)`` is ``sorted(it,
key=key)[:n]``, as its documentation says (``nlargest`` reversed).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from ..numpy_api.masks import MaskedValue
from ..tracing.tracer import current
from .lists import RuntimeList
from .pybuiltins import sorted_items as ordered
from .statements import traced


def _runtime(value: Any) -> bool:
    """A runtime value, or a Python list or tuple holding one."""
    if isinstance(value, (list, tuple)):
        return any(_runtime(v) for v in value)
    return traced(value) or isinstance(value, RuntimeList)


def _insertion(side: Literal["left", "right"], python: Callable[..., Any]
               ) -> Callable[..., Any]:
    def point(a: Any, x: Any, lo: Any = 0, hi: Any = None, *, key: Any = None) -> Any:
        if not (_runtime(a) or _runtime(x) or _runtime(lo) or _runtime(hi)):
            return python(a, x, lo, len(a) if hi is None else hi, key=key)
        if key is not None:
            raise current().error(f"bisect.{python.__name__}(key=...) of runtime values",
                                  hint="search an array of the keys (np.searchsorted)")
        items: Any = np.asarray(a) if isinstance(a, (list, tuple)) else a
        if isinstance(items, MaskedValue):
            items = items.values()
        window = items[lo:] if hi is None else items[lo:hi]
        return np.searchsorted(window, x, side=side) + lo
    point.__name__ = python.__name__
    return point


def _in_place(python: Callable[..., Any], module: str) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        if not any(_runtime(a) for a in (*args, *kwargs.values())):
            return python(*args, **kwargs)
        raise current().error(
            f"{module}.{python.__name__} of runtime values: it changes a Python list in "
            "place, which the compiled kernel cannot follow",
            hint="sort the items instead (sorted(), np.sort; np.partition for the k "
                 "smallest; np.searchsorted for where an item goes)")
    refused.__name__ = python.__name__
    return refused


def _first_of_sorted(python: Callable[..., Any], reverse: bool) -> Callable[..., Any]:
    """``heapq.nsmallest``/``nlargest``: ``sorted(iterable, key=key)[:n]``, as the
    documentation says they are (reversed for the largest)."""
    def first(n: Any, iterable: Any, key: Any = None) -> Any:
        if not (_runtime(iterable) or _runtime(n)):
            return python(n, iterable, key=key)
        return ordered(iterable, key=key, reverse=reverse)[:n]
    first.__name__ = python.__name__
    return first


#: Their stand-ins in converted kernels.
PYMODULES: dict[Callable[..., Any], Callable[..., Any]] = {
    bisect.bisect_left: _insertion("left", bisect.bisect_left),
    bisect.bisect_right: _insertion("right", bisect.bisect_right),
    **{fn: _in_place(fn, "heapq") for fn in (
        heapq.heappush, heapq.heappop, heapq.heapify, heapq.heapreplace, heapq.heappushpop)},
    **{fn: _in_place(fn, "bisect") for fn in (bisect.insort_left, bisect.insort_right)},
    heapq.nsmallest: _first_of_sorted(heapq.nsmallest, False),
    heapq.nlargest: _first_of_sorted(heapq.nlargest, True),
}
