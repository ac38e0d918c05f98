"""Making boxes of a loop's containers, and Python's builtins over boxes.

Before a runtime loop is traced, the lists, sets and dicts it changes (as
:mod:`.transform` marks them, ``changes=``) become :class:`~.boxes.RuntimeBox` es. Their
lanes' dtypes are what they hold and what the loop puts in them: the body is traced
aside with a recording stand-in for every container of its state. A container of
arrays (or with string keys) stays what it was: a record of fixed fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import lax
from ..errors import TraceError
from ..ops.containers import is_box
from ..tracing.bodies import UNDEFINED, flatten, probe
from ..tracing.tracer import Tracer, as_tracer, current
from .boxes import ROW, BoxView, Lanes, RuntimeBox, filled, missing_value
from .keyed import extreme_of_view
from .sequences import RuntimeSeq

State = tuple[Any, ...]
_KINDS: dict[type, str] = {list: "list", set: "set", dict: "dict"}


def _kind_of(value: Any) -> str | None:
    """"list", "set" or "dict" for a Python container (a deque is a list here)."""
    return next((k for t, k in _KINDS.items() if isinstance(value, t)), None)


def _dtype_of(value: Any) -> np.dtype:
    if isinstance(value, bool | np.bool_):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    if not isinstance(value, (Tracer, np.generic)) or np.ndim(value):
        raise TraceError(f"a box holds numbers, not {type(value).__name__}")
    dtype = as_tracer(value).dtype
    if dtype.kind not in "biuf":
        raise current().error(f"a list, set or dict changed in a runtime loop holds bools, "
                              f"integers, floats and tuples of them, not {dtype}")
    return dtype


class _Unseen(Tracer):
    """An item of a stand-in read before any went in, while the body is traced to learn
    what goes in: an int64 0 that any index, or unpacking, also reads as itself."""

    def __getitem__(self, key: Any) -> _Unseen:
        return self

    def unpacked(self, count: int) -> tuple[Any, ...]:
        return (self,) * count


class _Recording:
    """Stands for a container while the loop body is traced aside: records what goes in
    (items, keys, values), and answers reads with zeros of what it has seen so far."""

    #: What it is, in a message about the kinds of values a branch gives.
    KIND = "a list, set or dict grown at run time"

    is_box = True

    def __init__(self, kind: str) -> None:
        self.kind = kind
        #: Items (a list's), or keys (a set's or dict's), and a dict's values, as seen.
        self.seen: list[Any] = []
        self.written: list[Any] = []
        #: Whether the body read an item before any went in (an int64 0 stood for it),
        #: and whether such a read is :class:`_Unseen` (while learning what goes in).
        self.read_unseen = False
        self.lenient = False

    def tree_flatten(self) -> tuple[list[Any], _Recording]:
        return [], self

    @classmethod
    def tree_unflatten(cls, meta: _Recording, leaves: list[Any]) -> _Recording:
        return meta

    def _zero(self, seen: list[Any]) -> Any:
        if not seen:
            self.read_unseen = True
            return _Unseen(as_tracer(np.int64(0)).atom) if self.lenient \
                else as_tracer(np.int64(0))
        first = seen[0]
        if _row(first):
            return tuple(lax.convert(as_tracer(0), _dtype_of(v)) for v in first)
        return lax.convert(as_tracer(0), _dtype_of(first))

    def append(self, value: Any) -> _Recording:
        self.seen.append(value)
        return self

    add = appendleft = append

    def extend(self, values: Any) -> None:
        if isinstance(values, (list, tuple)):
            self.seen.extend(values)
        elif isinstance(values, _Recording):
            self.seen.append(values._zero(values.seen))
        elif isinstance(values, RuntimeBox):
            self.seen.append(values.key.join([lax.convert(as_tracer(0), d)
                                              for d in values.key.dtypes]))

    update = extend

    def insert(self, index: Any, value: Any) -> None:
        self.seen.append(value)

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.kind == "dict":
            self.seen.append(key)
            self.written.append(value)
        else:
            self.seen.append(value)

    def setdefault(self, key: Any, default: Any) -> Any:
        self[key] = default
        return default

    def __getitem__(self, key: Any) -> Any:
        return self._zero(self.written if self.kind == "dict" else self.seen)

    def get(self, key: Any, default: Any = None) -> Any:
        if default is not None:
            self.written.append(default)
        return self._zero(self.written)

    def popleft(self) -> Any:
        return self._zero(self.seen)

    def pop(self, *args: Any) -> Any:
        if self.kind == "dict" and len(args) > 1:
            self.written.append(args[1])
        return self._zero(self.written if self.kind == "dict" else self.seen)

    def item(self, position: Any) -> Any:
        return self._zero(self.seen)

    def contains(self, value: Any) -> Tracer:
        return as_tracer(np.bool_(False))

    def len(self) -> Tracer:
        return as_tracer(np.int64(0))

    def __len__(self) -> int:
        return 0

    def discard(self, value: Any) -> None:
        pass

    remove = discard

    def clear(self) -> None:
        pass

    def copy(self) -> _Recording:
        return self

    def __delitem__(self, key: Any) -> None:
        pass

    def iterate(self, what: str = "keys") -> Any:
        return RuntimeSeq(self.len(), self.item)

    def keys(self) -> Any:
        return self.iterate()

    def values(self) -> Any:
        return RuntimeSeq(self.len(), lambda k: self._zero(self.written))

    def items(self) -> Any:
        return RuntimeSeq(self.len(), lambda k: (self._zero(self.seen),
                                                 self._zero(self.written)))

    def index(self, value: Any) -> Tracer:
        return as_tracer(np.int64(0))

    def count(self, value: Any) -> Tracer:
        return as_tracer(np.int64(0))

    def sort(self, **_: Any) -> None:
        pass

    def listed(self) -> _Recording:
        return self


def _row(item: Any) -> bool:
    """A tuple, or a list of numbers (not an empty list: one a loop then appends to is
    a list of its own, which no box holds)."""
    return isinstance(item, tuple) or (isinstance(item, ROW) and len(item) > 0)


def _lanes_of(seen: list[Any]) -> Lanes:
    if not seen:
        return Lanes((np.dtype(np.int64),), False)
    is_tuple = _row(seen[0])
    width = len(seen[0]) if is_tuple else 1
    columns: list[list[np.dtype]] = [[] for _ in range(width)]
    for item in seen:
        values = list(item) if is_tuple else [item]
        if _row(item) != is_tuple or len(values) != width:
            raise current().error("a list, set or dict changed in a runtime loop holds "
                                  "items of one shape (scalars, or tuples of one length)")
        for column, v in zip(columns, values, strict=True):
            column.append(_dtype_of(v))
    return Lanes(tuple(np.result_type(*column) for column in columns), is_tuple)


def _boxable(value: Any, how: str) -> bool:
    """Whether a container changed in a loop (``how``: "method", "item" for ``x[k] = v``,
    "nested" for appends in an inner loop) is carried as a box: a set or dict whose
    keys are numbers (a dict of names is a record of fixed fields), a list a method
    shrinks or reorders or an inner loop appends to (a list written item by item is an
    array of its items, and one only appended to a buffer of counted room)."""
    if isinstance(value, set):
        return how != "item"
    if isinstance(value, dict):
        return not any(isinstance(k, str) for k in value)
    return isinstance(value, list) and how in ("method", "nested")


def _laid_out_list(value: Any) -> bool:
    """An array standing for a list (one an earlier loop appended to, ``[x, y]``), of
    numbers or of rows of a known width (tuples)."""
    return isinstance(value, Tracer) and getattr(value, "list_like", False) and (
        value.ndim == 1 or (value.ndim == 2 and value.aval.shape[1].is_const))


def box_changed(state: State, names: tuple[str, ...], changes: dict[str, str],
                aside: Callable[[State], State]) -> State:
    """``state`` with the containers the loop changes (``changes``: name -> how) made
    boxes, as :func:`boxed` makes them."""
    positions = [i for i, (v, n) in enumerate(zip(state, names, strict=True))
                 if n in changes and ((_kind_of(v) and _boxable(v, changes[n]))
                                      or (_laid_out_list(v) and changes[n] != "item"))]
    return boxed(state, aside, positions) if positions else state


def boxed(state: State, aside: Callable[[State], State], positions: list[int],
          required: bool = False) -> State:
    """``state`` with the lists, sets and dicts at ``positions`` made boxes holding their
    items, the lanes' dtypes found by tracing ``aside`` (the loop body) with recording
    stand-ins. Those no box can hold stay as they are, unless they are ``required`` to
    be boxes (no other representation serves them): then that is a located error."""
    # Every container of the state is a stand-in while the body is traced aside (one
    # that only a branch appends to must not make the branches disagree); only those at
    # ``positions`` become boxes.
    recorders = {i: _Recording(_kind_of(v) or "list")
                 for i, v in enumerate(state) if i in positions or _kind_of(v)}
    for i, rec in recorders.items():
        old = state[i]
        if isinstance(old, Tracer):  # a laid-out list: its items (rows) of its dtype
            zero = lax.convert(as_tracer(0), old.dtype)
            rec.seen.append(tuple(zero for _ in range(old.aval.shape[1].value))
                            if old.ndim == 2 else zero)
            continue
        rec.seen.extend(old.keys() if isinstance(old, dict) else old)
        if isinstance(old, dict):
            rec.written.extend(old.values())
        missing = missing_value(old)
        if missing is not None:  # a defaultdict, a Counter: values start as that
            rec.written.append(getattr(missing, "value", missing))
    held = [i for i in positions if _lanes_or_none(recorders[i].seen) is not None
            and (recorders[i].kind != "dict" or _lanes_or_none(recorders[i].written))]
    if len(held) < len(positions):  # arrays or strings in it: a record, not a box
        if required:
            raise current().error(
                "a list this loop appends to in a nested loop, or also shrinks (pop, del, "
                "remove), holds arrays or strings: only lists of numbers (or of tuples of "
                "numbers) change length that way at run time",
                hint="append numbers, or fill a preallocated array")
        return boxed(state, aside, held) if held else state
    stand_ins = tuple(recorders.get(i, v) for i, v in enumerate(state))
    leaves, structure = flatten(stand_ins)
    try:
        _probe_learning(aside, leaves, structure, recorders.values())
    except TraceError:  # the body uses its containers as no box can serve
        if required:
            raise
        return state
    out = list(state)
    for i in positions:
        rec = recorders[i]
        lanes = _lanes_or_none(rec.seen)
        value = _lanes_or_none(rec.written) if rec.kind == "dict" else None
        if lanes is None or (rec.kind == "dict" and value is None):
            continue  # items that are not numbers (arrays, strings): no box holds them
        out[i] = filled(state[i], rec.kind, lanes, value)
    return tuple(out)


def _probe_learning(aside: Callable[[State], State], leaves: list[Any], structure: Any,
                    recorders: Iterable[_Recording]) -> None:
    """Trace the loop body aside over the stand-ins. If that fails after a stand-in was
    read before anything went in (``top[0][0]`` in a test before the branch that
    pushes), first learn what goes in from a trace where such reads are
    :class:`_Unseen` (any index or unpacking of it is itself), then trace again."""
    def run() -> None:
        probe(aside, [[v if v is UNDEFINED else as_tracer(v) for v in leaves]], [structure])

    try:
        run()
    except TraceError:
        unseen = [r for r in recorders if r.read_unseen and not r.seen]
        if not unseen:
            raise
        for r in unseen:
            r.lenient = True
        try:
            run()
        except TraceError:
            pass
        finally:
            for r in unseen:
                r.lenient = False
        if not all(r.seen for r in unseen):
            raise
        run()


def _lanes_or_none(seen: list[Any]) -> Lanes | None:
    try:
        return _lanes_of(seen)
    except (TraceError, TypeError, ValueError):
        return None


# -- builtins over boxes -------------------------------------------------------------------

def reduction(name: str, box: RuntimeBox, *args: Any) -> Any:
    """``sum``, ``min``, ``max``, ``any`` and ``all`` of a box's items (a set's or dict's
    keys), in order, as Python's builtins take them."""
    if box.key.is_tuple and name == "sum":
        raise current().error("sum() of tuples")
    n = box.len()
    if name in ("min", "max"):  # (tuples compared field by field, as Python's)
        return extreme_of_view(box.iterate(), lambda item: item, name == "max")
    if name == "sum":
        start = args[0] if args else 0
        (dtype,) = box.key.dtypes
        total0 = np.add(start, np.zeros((), dtype if dtype != np.bool_ else np.int64))
        return lax.fori_loop(0, n, lambda i, total: np.add(total, box.item(i)), total0)
    every = name == "all"

    def truth(i: Any, found: Any) -> Any:
        item = as_tracer(box.item(i)).astype(bool)
        return np.logical_and(found, item) if every else np.logical_or(found, item)
    return lax.fori_loop(0, n, truth, as_tracer(np.bool_(every)))


REDUCTIONS = ("sum", "min", "max", "any", "all")


def sorted_items(box: RuntimeBox | BoxView, key: Any = None, reverse: bool = False
                 ) -> RuntimeBox:
    """``sorted(box)``: a new list of its items (a set's or dict's keys; a view's
    items, ``sorted(d.items())``), sorted."""
    if isinstance(box, BoxView):
        out = filled([], "list", box.lanes, None)
        out.extend(box)
    else:
        out = box.listed()
    out.sort(key=key, reverse=reverse)
    return out


def as_set(value: Any = ()) -> Any:
    """``set(x)``: of a 1-d array's items or of a list, set or dict grown at run time, a
    set grown at run time (a new box of them); else Python's."""
    if isinstance(value, Tracer):
        if value.ndim != 1:
            raise current().error("set() of an array's rows (Python's TypeError: an array "
                                  "is unhashable)", hint="set() of a 1-d array")
        return filled(value, "set", Lanes((value.dtype,), False), None)
    if is_box(value):
        return filled(value, "set", value.key, None)
    return set(value)

