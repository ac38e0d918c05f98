"""Comprehensions and folds over sequences, build-time or runtime.

``[f(v) for v in seq if keep(v)]`` is Python's own on build-time items. Over a runtime
sequence the values are stacked into an array (its first axis the sequence), and a
filter makes it the selection of the kept rows; a generator is kept unrun
(:class:`~.runtime_generators.RuntimeGenerator`) so that ``all``/``any`` stop where Python's
would. ``functools.reduce`` over a runtime sequence is the loop it stands for.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..numpy_api.masks import MaskedValue
from ..numpy_api.pylists import sliced
from ..ops.index import raise_if_p
from ..tracing.tracer import Tracer, as_tracer, current
from . import pyfuncs
from .box_algebra import mapped
from .boxes import BoxView
from .lists import Shared
from .runtime_generators import RuntimeGenerator
from .sequences import RuntimeSeq, as_list, rows_of, sequence
from .statements import for_iter


def truth_value(value: Any) -> Any:
    """A condition's truth as a traced bool (``if x`` on a number means ``x != 0``)."""
    t = as_tracer(value)
    return t if t.dtype == np.bool_ else np.not_equal(t, 0)


def comprehension(kind: str, fn: Callable[..., Any], iterable: Any, spread: bool,
                  keep: Callable[..., Any] | None = None) -> Any:
    """``[fn(v) for v in iterable if keep(v)]`` (``kind`` list, generator or set):
    Python's own on build-time items; over a runtime sequence the values are stacked
    into an array, its first axis the sequence, and a filter makes it the selection of
    the kept rows (``sum``, ``len``, ``min``... of it work; see ``pybuiltins``)."""
    nargs = fn.__code__.co_argcount

    def apply(f: Callable[..., Any], item: Any) -> Any:
        return f(*unpack(item, nargs)) if spread else f(item)

    seq = sequence(iterable)
    items: Any = seq
    if isinstance(seq, BoxView):  # over a box's items: a box (its length has no bound)
        kept = None if keep is None else lambda item: truth_value(apply(keep, item))

        def made() -> Any:
            return mapped(seq, lambda item: apply(fn, item), kept,
                          "set" if kind == "set" else "list")
        if kind == "generator":
            return RuntimeGenerator(seq, lambda item: apply(fn, item), None if keep is None
                                    else lambda item: apply(keep, item), made)
        return made()
    if isinstance(seq, RuntimeSeq):
        items = seq.unrolled()
        if items is None:
            if kind == "set":
                raise current().error("a set comprehension over runtime values",
                                      hint="build an array and use np.unique")

            def laid_out() -> Any:
                shared = Shared()  # (items that are views of outer arrays)

                def value(item: Any) -> Any:
                    made = apply(fn, item)
                    shared.add(made)
                    return made
                stacked = shared.mark(rows_of(seq.stacked(value)))
                if keep is not None:
                    kept = seq.stacked(lambda item: truth_value(apply(keep, item)))
                    return MaskedValue(as_tracer(stacked), kept, list_like=kind == "list")
                if kind == "list" and isinstance(stacked, Tracer):
                    stacked.list_like = True  # a Python list: its items may change type
                return stacked
            if kind == "generator":
                return RuntimeGenerator(seq, lambda item: apply(fn, item), None if keep is None
                                        else lambda item: apply(keep, item), laid_out)
            return laid_out()
    if keep is not None:
        items = list(items)
        conds = [apply(keep, v) for v in items]
        if any(isinstance(c, Tracer) for c in conds):  # kept or not only at run time
            values = [as_tracer(apply(fn, v)) for v in items]
            rows: Any = np.stack(values)
            flags: Any = np.stack([truth_value(c) for c in conds])
            return MaskedValue(rows, flags, list_like=kind == "list")
        items = [v for v, c in zip(items, conds, strict=True) if c]
    values = [apply(fn, v) for v in items]
    return values if kind == "list" else set(values) if kind == "set" else iter(values)


def unpack(value: Any, count: int) -> Any:
    """``a, b = value``: an array or runtime sequence of exactly ``count`` items (checked
    at run time when its length is only known then)."""
    if not isinstance(value, (Tracer, RuntimeSeq)):
        return value
    unpacked = getattr(type(value), "unpacked", None)  # (an item read before any went
    if unpacked is not None:  # in, while a loop body is traced to learn: .boxing)
        return cast(tuple[Any, ...], unpacked(value, count))
    seq = sequence(value)
    n = seq.static_length()
    too_many = f"too many values to unpack (expected {count})"
    if n is not None and n != count:
        raise current().error(too_many if n > count else
                              f"not enough values to unpack (expected {count}, got {n})")
    if n is None:
        length = seq.length
        if isinstance(length, Tracer) and length.dim is not None:
            current().check(">=", length.dim, lax.as_dim(count), "ValueError",
                            f"not enough values to unpack (expected {count}, got {{lhs}})")
            current().check("<", length.dim, lax.as_dim(count + 1), "ValueError", too_many)
        else:
            bad = np.not_equal(length, count)
            lax.bind(raise_if_p, as_tracer(bad).atom, error="ValueError",
                     message=f"wrong number of values to unpack (expected {count})")
    return tuple(seq.item(i) for i in builtins.range(count))


def unpack_starred(value: Any, before: int, after: int) -> tuple[Any, ...]:
    """``a, *rest, z = value``: the items before and after the starred name, and the
    list of those between (``before`` and ``after`` of them around it)."""
    least = before + after
    if not isinstance(value, (Tracer, RuntimeSeq)):
        items = builtins.list(value)
        if len(items) < least:
            raise ValueError(f"not enough values to unpack (expected at least {least}, "
                             f"got {len(items)})")
        return (*items[:before], items[before:len(items) - after], *items[len(items) - after:])
    seq = sequence(value)
    listed = as_list(value) if isinstance(value, RuntimeSeq) else value
    n = seq.length
    few = f"not enough values to unpack (expected at least {least}, got {{lhs}})"
    if isinstance(n, Tracer) and n.dim is not None:
        current().check(">=", n.dim, lax.as_dim(least), "ValueError", few)
    else:
        lax.bind(raise_if_p, as_tracer(np.less(n, least)).atom, error="ValueError",
                 message=few.replace(", got {lhs}", ""))
    end = np.subtract(n, after)
    middle = sliced(listed, builtins.slice(before, end))
    tail = (seq.item(np.add(end, j)) for j in builtins.range(after))
    return (*(seq.item(i) for i in builtins.range(before)), middle, *tail)


def reduce_(fn: Callable[[Any, Any], Any], iterable: Any, *initial: Any) -> Any:
    """``functools.reduce``: Python's own on build-time items; over a runtime sequence,
    the loop ``for v in seq: acc = fn(acc, v)`` (from item 0 without ``initial``, a
    TypeError if there is none)."""
    seq = sequence(iterable)
    items = seq.unrolled() if isinstance(seq, RuntimeSeq) else seq
    if items is not None:
        return functools.reduce(fn, items, *initial)
    if initial:
        start, rest = initial[0], seq
    else:
        empty = as_tracer(np.less_equal(seq.length, 0))
        lax.bind(raise_if_p, empty.atom, error="TypeError",
                 message="reduce() of empty iterable with no initial value")
        start = seq.item(0)
        rest = RuntimeSeq(np.subtract(seq.length, 1), lambda i: seq.item(np.add(i, 1)))
    (acc,) = for_iter(lambda item, state: (pyfuncs.converted_call(fn, state[0], item),),
                      (start,), ("acc",), rest)
    return acc


def map_(fn: Callable[..., Any], *iterables: Any) -> Any:
    """``map``: the generator ``(fn(*items) for items in zip(*iterables))``, ``fn``
    converted as a call in the kernel would be; over runtime sequences it is one
    (laid out as an array, or decided early by ``all``/``any``)."""
    def apply(*items: Any) -> Any:
        return pyfuncs.converted_call(fn, *items)
    runtime = [sequence(i) for i in iterables]
    if not any(isinstance(s, RuntimeSeq) and s.unrolled() is None for s in runtime):
        return builtins.map(apply, *iterables)
    if len(iterables) == 1:
        return comprehension("generator", lambda item: apply(item), iterables[0], False)
    zipped = pyfuncs.converted_call(builtins.zip, *iterables)
    return comprehension("generator", lambda items: apply(*items), zipped, False)
