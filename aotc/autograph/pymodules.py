"""``bisect``, ``heapq``, ``itertools.accumulate``, ``collections.Counter`` and ``math``'s
counting functions on runtime values.

``bisect.bisect_left(a, v, lo, hi)`` (and ``bisect_right``, ``bisect``) is the
insertion point of ``v`` in the sorted ``a[lo:hi]``: ``np.searchsorted`` of that slice,
plus ``lo``. ``heapq``'s functions that change a list in place (``heappush``,
``heappop``, ``heapify``, ``heapreplace``, ``heappushpop``) and ``bisect.insort`` are C
code that would change the Python list the kernel is traced with, not the list the
compiled kernel grows: a kernel calls :mod:`.stdlib_lists`' Python source for them
instead (:data:`SOURCES`), converted as the user's own helpers are.
``heapq.nsmallest(n, it, key)`` is ``sorted(it, key=key)[:n]``, as its documentation
says (``nlargest`` reversed). ``math.comb``/``perm``/``factorial``/``prod``,
``itertools.accumulate`` and ``Counter(iterable)`` of runtime values run
:mod:`.stdlib_counting`'s Python source, and ``math.gamma``, ``lgamma``, ``fsum`` and
the rest of ``math`` that is not one ufunc run :mod:`.stdlib_math`'s; of build-time
values, the library's own.
"""

from __future__ import annotations

import bisect
import collections
import heapq
import itertools
import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from ..numpy_api.masks import MaskedValue
from ..numpy_api.pymath import python_numbers
from ..tracing.tracer import current
from . import pyfuncs
from . import stdlib_counting as counting_source
from . import stdlib_lists as lists_source
from . import stdlib_math as math_source
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


def _first_of_sorted(python: Callable[..., Any], reverse: bool) -> Callable[..., Any]:
    """``heapq.nsmallest``/``nlargest``: ``sorted(iterable, key=key)[:n]``, as the
    documentation says they are (reversed for the largest)."""
    def first(n: Any, iterable: Any, key: Any = None) -> Any:
        if not (_runtime(iterable) or _runtime(n)):
            return python(n, iterable, key=key)
        return ordered(iterable, key=key, reverse=reverse)[:n]
    first.__name__ = python.__name__
    return first


def _on_runtime_values(python: Callable[..., Any], source: Callable[..., Any],
                       weak: bool = False) -> Callable[..., Any]:
    """``python``, or ``source`` converted as the user's helpers are when an argument is
    a runtime value. With ``weak``, its numbers are Python's (weak in arithmetic with
    arrays): ``f32_array * math.gamma(a)`` stays float32."""
    def run(*args: Any, **kwargs: Any) -> Any:
        if not any(_runtime(a) for a in (*args, *kwargs.values())):
            return python(*args, **kwargs)
        result = pyfuncs.converted_call(source, *args, **kwargs)
        return python_numbers(result) if weak else result
    run.__name__ = python.__name__
    return run


#: Their stand-ins in converted kernels.
PYMODULES: dict[Callable[..., Any], Callable[..., Any]] = {
    bisect.bisect_left: _insertion("left", bisect.bisect_left),
    bisect.bisect_right: _insertion("right", bisect.bisect_right),
    heapq.nsmallest: _first_of_sorted(heapq.nsmallest, False),
    heapq.nlargest: _first_of_sorted(heapq.nlargest, True),
    **{library: _on_runtime_values(library, getattr(counting_source, library.__name__), True)
       for library in (math.comb, math.perm, math.factorial)},
    **{library: _on_runtime_values(library, source) for library, source in (
        (math.prod, counting_source.prod), (itertools.accumulate, counting_source.accumulate),
        (collections.Counter, counting_source.counted))},
    **{library: _on_runtime_values(library, getattr(math_source, library.__name__), True)
       for library in (math.gamma, math.lgamma, math.fsum, math.remainder, math.ulp,
                       math.lcm, math.dist, math.ldexp, math.frexp, math.modf,
                       math.nextafter)},
}


#: Library functions that kernels run as Python source (:mod:`.stdlib_lists`), converted
#: as a user's helpers are.
SOURCES: dict[Callable[..., Any], Callable[..., Any]] = {
    library: getattr(lists_source, library.__name__) for library in (
        heapq.heappush, heapq.heappop, heapq.heapify, heapq.heapreplace, heapq.heappushpop,
        bisect.insort_left, bisect.insort_right)}


def source_of(fn: Any) -> Callable[..., Any] | None:
    """The Python source a kernel runs for library function ``fn``, if it has one."""
    try:
        return SOURCES.get(fn)
    except TypeError:  # an unhashable callable
        return None
