"""Slices of lists and the set algebra of sets grown while a kernel runs: new boxes,
filled by runtime loops over the old ones.

``lst[a:b:k]`` of a box has a runtime length, so it is a new box too: Python's
``slice.indices`` worked out on the runtime length (the bounds clamped, from the end
when negative; ``k`` a build-time step), then the items it picks pushed in order.
``a | b``, ``a & b``, ``a - b`` and ``a ^ b`` of two sets (and ``union``,
``intersection``, ``difference``, ``symmetric_difference``) are new sets: ``a``'s items
kept or dropped by whether ``b`` holds them, then ``b``'s added where it is a union.
A comprehension over a box's items (``[k for k, _ in d.items() if ...]``) is a new list
or set box too, each kept item's value pushed. ``sorted(view, key=...)`` of a box's
items (``sorted(d.items(), key=lambda kv: kv[1])``) sorts records of the key, the
item's position and the item, so that equal keys keep their order as Python's stable
sort keeps them, then keeps the items.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..shapes import within_limit
from ..tracing.bodies import flatten, probe
from ..tracing.tracer import as_tracer, current
from .boxes import ALGEBRA, BoxView, Lanes, RuntimeBox, filled, key_function
from .sequences import RuntimeSeq, sequence


def _clamped(bound: Any, n: Any, low: Any, high: Any) -> Any:
    """A slice bound among ``n`` items: from the end when negative, then into
    ``[low, high]``."""
    if isinstance(bound, int):
        bound = within_limit(bound)  # (lst[2**70:] is lst[n:])
    b = lax.convert(as_tracer(bound), np.dtype(np.int64))
    return np.minimum(np.maximum(np.where(np.less(b, 0), np.add(b, n), b), low), high)


def sliced(box: RuntimeBox, index: slice) -> RuntimeBox:
    """``box[start:stop:step]`` of a list: a new list of the items it picks."""
    step = 1 if index.step is None else index.step
    if not isinstance(step, int) or isinstance(step, bool) or step == 0:
        raise current().error("a slice of a list grown while the kernel runs needs a "
                              "step known at build time, not 0",
                              hint="write lst[a:b] or lst[::-1], or index item by item")
    step = within_limit(step)  # (a longer stride picks the same items)
    n = box.len()
    if step > 0:
        start = 0 if index.start is None else _clamped(index.start, n, 0, n)
        stop = n if index.stop is None else _clamped(index.stop, n, 0, n)
        span = np.subtract(stop, start)
    else:
        last = np.subtract(n, 1)
        start = last if index.start is None else _clamped(index.start, n, -1, last)
        stop = -1 if index.stop is None else _clamped(index.stop, n, -1, last)
        span = np.subtract(start, stop)
    count = np.where(np.greater(span, 0),
                     np.add(np.floor_divide(np.subtract(span, 1), abs(step)), 1), 0)
    out = filled([], "list", box.key, None)

    def push(i: Any, carry: Any) -> Any:
        out.append(box.item(np.add(start, np.multiply(i, step))))
        return carry

    lax.fori_loop(0, count, push, ())
    return out


def _kept(box: RuntimeBox, other: RuntimeBox, held: bool) -> RuntimeBox:
    """A new set of ``box``'s items that ``other`` holds (``held``) or does not."""
    def keep(item: Any) -> Any:
        inside = other.contains(item)
        return inside if held else np.logical_not(inside)
    return mapped(box.iterate(), lambda item: item, keep, "set", box.key)


def _as_set(value: Any, like: RuntimeBox) -> RuntimeBox:
    """``value`` as a set box of ``like``'s lanes: a set box itself, else a new one of
    its items (a list grown at run time, a Python set or list, an array)."""
    if isinstance(value, RuntimeBox) and value.kind == "set":
        return value
    out = filled([], "set", like.key, None)
    seq = sequence(value)
    if isinstance(seq, RuntimeSeq) or isinstance(value, RuntimeBox):
        out.extend(value)
    else:
        for v in seq:
            out.add(v)
    return out


def combined(op: str, box: RuntimeBox, other: Any) -> RuntimeBox:
    """``box op other`` of sets (``op``: "|", "&", "-" or "^")."""
    if box.kind != "set":
        raise current().error(f"'{op}' of a {box.kind} grown while the kernel runs",
                              hint="set operators take two sets")
    theirs = _as_set(other, box)
    if op == "&":
        return _kept(box, theirs, True)
    if op == "-":
        return _kept(box, theirs, False)
    out = box.copy() if op == "|" else _kept(box, theirs, False)
    out.extend(theirs if op == "|" else _kept(theirs, box, False))
    return out


def sorted_view(view: BoxView, key: Any, reverse: bool) -> RuntimeBox:
    """``sorted(view, key=key, reverse=reverse)``: a new list of the items, stable."""
    key = key_function(key)
    key_lanes = _lanes_of_value(key, view, "sorted(key=...)")
    item_dtypes = view.lanes.dtypes
    records = filled([], "list", Lanes(key_lanes.dtypes + (np.dtype(np.int64),) +
                                       item_dtypes, True), None)

    def decorate(i: Any, carry: Any) -> Any:
        item = view.item(i)
        k = key(item)
        # Reversed, the positions count down: equal keys still come out in their order.
        position = np.negative(i) if reverse else i
        records.append((*(k if key_lanes.is_tuple else (k,)), position,
                        *(item if view.lanes.is_tuple else (item,))))
        return carry

    lax.fori_loop(0, view.length, decorate, ())
    records.sort(reverse=reverse)
    out = filled([], "list", view.lanes, None)
    skip = len(key_lanes.dtypes) + 1

    def undecorate(i: Any, carry: Any) -> Any:
        fields = records.item(i)[skip:]
        out.append(view.lanes.join(list(fields)))
        return carry

    lax.fori_loop(0, records.len(), undecorate, ())
    return out


def _lanes_of_value(fn: Callable[[Any], Any], view: BoxView, what: str) -> Lanes:
    """The lanes of ``fn(item)`` for the view's items (traced aside for their dtypes)."""
    leaves, structure = flatten(as_tracer(np.int64(0)))
    first = probe(lambda i: fn(view.item(i)), [leaves], [structure])
    fields = [as_tracer(v) for v in (first if isinstance(first, tuple) else (first,))]
    if any(f.ndim for f in fields):
        raise current().error(f"{what} over a list, set or dict grown while the kernel "
                              "runs makes arrays: its items can be numbers or tuples of "
                              "numbers", hint="make numbers of the items")
    return Lanes(tuple(f.dtype for f in fields), isinstance(first, tuple))


def mapped(view: BoxView, fn: Callable[[Any], Any], keep: Callable[[Any], Any] | None,
           kind: str, lanes: Lanes | None = None) -> RuntimeBox:
    """``[fn(v) for v in view if keep(v)]`` (``kind`` "list" or "set"): a new box, of
    ``lanes`` where the caller knows them (else ``fn``'s, traced aside)."""
    out = filled([], kind, lanes or _lanes_of_value(fn, view, "a comprehension"), None)
    put = out.append if kind == "list" else out.add

    def visit(i: Any, carry: Any) -> Any:
        item = view.item(i)

        def push() -> tuple[()]:
            put(fn(item))
            return ()
        if keep is None:
            push()
        else:
            lax.cond(keep(item), push, lambda: ())
        return carry

    lax.fori_loop(0, view.length, visit, ())
    return out


ALGEBRA.update({"slice": sliced, "combine": combined, "sort": sorted_view})
