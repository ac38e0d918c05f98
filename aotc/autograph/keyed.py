"""``max``/``min`` of runtime items that are compared as Python compares them: by a
``key=`` function, or tuple by tuple.

``max(range(n), key=lambda i: x[i])`` evaluates the key of every item (a loop at run
time, as ``sorted(key=...)`` does) and picks the first item whose key is best, as
Python's ``max`` keeps the first of equal keys: ``np.argmax`` of the keys. A list of
tuples laid out as an array (one row per tuple) compares lexicographically: the rows
whose first field is best, among them those whose second field is best, and so on; the
first row left is Python's answer. (An elementwise reduction of the rows would mix
fields of different tuples.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api.masks import MaskedValue
from ..ops.index import raise_if_p
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .boxes import BoxView, key_function
from .sequences import RuntimeSeq, sequence
from .tuple_order import tuples_compared


def _no_items(name: str) -> str:
    return f"{name}() arg is an empty sequence"


def require_items(count: DimExpr, name: str) -> None:
    """Python's error for ``max``/``min`` (``name``) of no items, where there may be none."""
    current().check(">=", count, DimExpr.const(1), "ValueError", _no_items(name))


def never_best(dtype: np.dtype, largest: bool) -> Any:
    """A value of ``dtype`` that no item beats in ``max`` (``largest``) or ``min``."""
    if dtype.kind == "f":
        return -np.inf if largest else np.inf
    if dtype.kind == "b":
        return not largest
    info = np.iinfo(dtype)
    return info.min if largest else info.max


def extreme_by_key(iterable: Any, key: Callable[[Any], Any], largest: bool) -> Any:
    """``max(iterable, key=key)`` (``largest``) or ``min``, where the items or their keys
    are runtime values."""
    name = "max" if largest else "min"
    seq = sequence(iterable.values() if isinstance(iterable, MaskedValue) else iterable)
    if isinstance(seq, BoxView):  # a dict's keys (max(d, key=d.get)): no bound to lay out
        return extreme_of_view(seq, key, largest)
    if not isinstance(seq, RuntimeSeq):  # Python's items (range(5)), keys maybe runtime
        items = list(seq)
        keys = [key(v) for v in items]
        if not any(isinstance(k, Tracer) for k in keys):
            pick = max if largest else min
            return items[pick(range(len(items)), key=keys.__getitem__)]
        stacked = np.stack([as_tracer(v) for v in items])
        seq = RuntimeSeq(len(items), stacked.__getitem__)
    keys = seq.stacked(key)
    if isinstance(keys, tuple) and all(isinstance(f, Tracer) and f.ndim == 1 for f in keys):
        require_items(keys[0].aval.shape[0], name)  # (a tuple key: one array per field)
        return seq.item(_first_best_row(keys, largest))
    if not isinstance(keys, Tracer) or keys.ndim != 1:
        raise current().error(f"{name}(key=...): each key must be a number or a tuple "
                              "of numbers", hint="give a key that returns one per item")
    require_items(keys.aval.shape[0], name)
    return seq.item(np.argmax(keys) if largest else np.argmin(keys))


def _first_best_row(fields: tuple[Tracer, ...], largest: bool) -> Any:
    """The position of the first row whose fields are best, compared in order (as
    Python compares tuple keys): each field narrows the rows still in the running."""
    alive: Any = None
    for field in fields:
        contest = field if alive is None else \
            np.where(alive, field, never_best(field.dtype, largest))
        best = np.max(contest) if largest else np.min(contest)
        here = np.equal(field, best)
        alive = here if alive is None else np.logical_and(alive, here)
    return np.argmax(alive)


def extreme_of_view(view: BoxView, key: Callable[[Any], Any], largest: bool) -> Any:
    """``max(view, key=key)`` of a box's items: a runtime loop keeping the first item
    whose key no later one beats (strictly), as Python's ``max`` and ``min`` do."""
    name, key = "max" if largest else "min", key_function(key)
    empty: Any = np.equal(view.length, 0)
    lax.bind(raise_if_p, empty.atom, error="ValueError", message=_no_items(name))

    def keyed(item: Any) -> Any:  # (a tuple key, max(d, key=lambda k: (d[k], -k)), stays one)
        k = key(item)
        return tuple(as_tracer(f) for f in k) if isinstance(k, tuple) else as_tracer(k)

    def chosen(better: Any, new: Any, old: Any) -> Any:
        if isinstance(new, tuple):
            return tuple(np.where(better, a, b) for a, b in zip(new, old, strict=True))
        return np.where(better, new, old)

    def step(i: Any, carry: Any) -> Any:
        best_key, best = carry
        item = view.item(i)
        k = keyed(item)
        better = tuples_compared("Gt" if largest else "Lt", k, best_key) \
            if isinstance(k, tuple) else (np.greater if largest else np.less)(k, best_key)
        return chosen(better, k, best_key), chosen(better, item, best)

    first = view.item(0)
    return lax.fori_loop(1, view.length, step, (keyed(first), first))[1]


def lexicographic_extreme(rows: Tracer, largest: bool) -> Tracer:
    """The best row of ``rows`` (a list of tuples, laid out), fields compared in order."""
    name = "max" if largest else "min"
    count, fields = rows.aval.shape
    if not fields.is_const:
        raise current().error(f"{name}() of a list of tuples of runtime length")
    require_items(count, name)
    kind = rows.dtype
    if kind.kind == "c":
        raise current().error(f"{name}() of complex numbers: Python does not order them")
    columns = tuple(rows[:, field] for field in range(fields.value))
    best_row: Tracer = rows[_first_best_row(columns, largest)]
    return best_row
