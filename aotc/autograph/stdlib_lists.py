"""The standard library's functions that change a list in place (``heapq``'s and
``bisect.insort``), and ``dict()`` of runtime pairs, as Python source that kernels
compile.

CPython's are C code that would change the Python list a kernel is traced with, never
the list the compiled kernel grows. These are the same algorithms written in the
Python aotc compiles (a list's ``append``, ``pop``, ``insert`` and items, ``while``
loops), and are converted like a user's own helpers (:func:`.runtime.call`): a loop of
``heappush`` grows the list it is given, as a loop of ``append`` does. The order of a
heap's items after each call is CPython's (a pop moves the hole down to a leaf, then
sifts the last item up into it), so a kernel that reads ``heap[i]`` or returns the list
sees what Python would. Items may be numbers or tuples of numbers, compared as Python
compares them (:mod:`.tuple_order`).
"""

from __future__ import annotations

from typing import Any


def _sift_up_from(heap: Any, start: int, pos: int) -> None:
    """Move ``heap[pos]`` towards the root, no higher than ``start``, past the parents
    it is smaller than."""
    item = heap[pos]
    while pos > start and item < heap[(pos - 1) >> 1]:
        heap[pos] = heap[(pos - 1) >> 1]
        pos = (pos - 1) >> 1
    heap[pos] = item


def _sift_down_from(heap: Any, pos: int) -> None:
    """Fill the hole at ``pos`` with smaller children down to a leaf, put the item that
    was there in the last hole, and sift it back up (CPython's order of items)."""
    end = len(heap)
    start = pos
    item = heap[pos]
    child = 2 * pos + 1
    while child < end:
        if child + 1 < end and not heap[child] < heap[child + 1]:
            child = child + 1
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = item
    _sift_up_from(heap, start, pos)


def heappush(heap: Any, item: Any) -> None:
    heap.append(item)
    _sift_up_from(heap, 0, len(heap) - 1)


def heappop(heap: Any) -> Any:
    if len(heap) == 0:
        raise IndexError("index out of range")
    last = heap.pop()
    if len(heap) == 0:
        return last
    smallest = heap[0]
    heap[0] = last
    _sift_down_from(heap, 0)
    return smallest


def heapreplace(heap: Any, item: Any) -> Any:
    if len(heap) == 0:
        raise IndexError("index out of range")
    smallest = heap[0]
    heap[0] = item
    _sift_down_from(heap, 0)
    return smallest


def heappushpop(heap: Any, item: Any) -> Any:
    if len(heap) > 0 and heap[0] < item:
        smallest = heap[0]
        heap[0] = item
        _sift_down_from(heap, 0)
        return smallest
    return item


def heapify(heap: Any) -> None:
    pos = len(heap) // 2 - 1
    while pos >= 0:
        _sift_down_from(heap, pos)
        pos = pos - 1


def _insertion_point(a: Any, x: Any, lo: Any, hi: Any, key: Any, right: bool) -> Any:
    """Where ``x`` goes in the sorted ``a[lo:hi]``: after its equals (``right``) or
    before them, by ``key`` if given (bisect's binary search)."""
    if lo < 0:
        raise ValueError("lo must be non-negative")
    if hi is None:
        hi = len(a)
    wanted = x if key is None else key(x)
    while lo < hi:
        mid = (lo + hi) // 2
        here = a[mid] if key is None else key(a[mid])
        if (wanted < here) if right else not (here < wanted):
            hi = mid
        else:
            lo = mid + 1
    return lo


def insort_right(a: Any, x: Any, lo: Any = 0, hi: Any = None, *, key: Any = None) -> None:
    a.insert(_insertion_point(a, x, lo, hi, key, True), x)


def insort_left(a: Any, x: Any, lo: Any = 0, hi: Any = None, *, key: Any = None) -> None:
    a.insert(_insertion_point(a, x, lo, hi, key, False), x)


def dict_from_pairs(pairs: Any) -> Any:
    """``dict(pairs)`` of pairs known only at run time (``dict(zip(keys, values))``):
    each key once, with its last value, in the order keys first appear."""
    made = {}
    for key, value in pairs:
        made[key] = value  # noqa: PERF403 - the loop a kernel compiles (see the module)
    return made
