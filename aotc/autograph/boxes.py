"""Python lists, sets and dicts that a runtime loop changes, as boxes.

A loop whose state holds a list, set or dict that gains or loses items (a backtracking
``stack.append``/``stack.pop()`` in a ``while``, ``seen.add(v)``, ``counts[k] += 1``)
cannot carry it as fixed leaves. Such a loop is traced again with each of those
containers made a :class:`RuntimeBox` (:func:`boxed`): a handle to a box the kernel
grows while it runs (:mod:`aotc.ops.containers`), whose methods are Python's. Lists
appended to in loops whose appends can be counted keep the cheaper buffer of
:mod:`.lists`; a box serves the rest.

A box's items are records of scalar *lanes*: a list of ints, of ``(i, j)`` tuples, a
dict from ints to floats. Their dtypes are what the container already holds and what the
loop puts in it, found by tracing the loop body aside with recording stand-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import lax
from ..errors import TraceError
from ..ops.containers import (
    box_clear_p,
    box_copy_p,
    box_escape_p,
    box_item_p,
    box_len_p,
    box_new_p,
    box_sort_p,
    list_find_p,
    list_insert_p,
    list_pop_p,
    list_push_p,
    list_put_p,
    map_delete_p,
    map_find_p,
    map_put_p,
)
from ..ops.index import raise_if_p
from ..tracing.bodies import UNDEFINED, flatten, probe
from ..tracing.tracer import Tracer, as_tracer, current
from .sequences import RuntimeSeq, sequence

State = tuple[Any, ...]
_KINDS: dict[type, str] = {list: "list", set: "set", dict: "dict"}


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


class _Lanes:
    """How a Python item maps to lanes: a scalar (one lane) or a tuple of ``n``."""

    def __init__(self, dtypes: tuple[np.dtype, ...], is_tuple: bool) -> None:
        self.dtypes, self.is_tuple = dtypes, is_tuple

    def split(self, value: Any) -> list[Any]:
        values = list(value) if self.is_tuple else [value]
        if len(values) != len(self.dtypes) or (isinstance(value, tuple) != self.is_tuple):
            raise current().error(
                "a list, set or dict changed in a runtime loop holds items of one shape: "
                f"{'tuples of ' + str(len(self.dtypes)) if self.is_tuple else 'scalars'}, "
                f"not {value!r}")
        return [lax.convert(as_tracer(v), d).atom for v, d in zip(values, self.dtypes,
                                                                   strict=True)]

    def join(self, lanes: list[Any]) -> Any:
        return tuple(lanes) if self.is_tuple else lanes[0]

    def codes(self) -> tuple[str, ...]:
        return tuple(d.str.lstrip("<>=|") for d in self.dtypes)


class RuntimeBox:
    """A list, set or dict grown while the kernel runs: ``handle`` names its box."""

    #: What :mod:`.sequences` and :mod:`.runtime` ask to treat it (and a recording
    #: stand-in for one) as a container of the kernel's.
    is_box = True

    def __init__(self, handle: Tracer, kind: str, key: _Lanes, value: _Lanes | None) -> None:
        self.handle, self.kind, self.key, self.value = handle, kind, key, value

    # -- pytree: the handle is the loop state
    def tree_flatten(self) -> tuple[list[Any], tuple[str, _Lanes, _Lanes | None]]:
        return [self.handle], (self.kind, self.key, self.value)

    @classmethod
    def tree_unflatten(cls, meta: tuple[str, _Lanes, _Lanes | None], leaves: list[Any]
                       ) -> RuntimeBox:
        return cls(as_tracer(leaves[0]), *meta)

    # -- as a kernel's result (tracing.kernel's result tree)
    def escaped(self) -> Tracer:
        """The handle, the box marked to outlive the call for the caller to read."""
        self._bind(box_escape_p)
        return self.handle

    def described(self) -> str:
        """The arguments of the caller's ``_box_value`` after the handle."""
        value = self.value.codes() if self.value else ()
        return f"{self.kind!r}, {self.key.codes()!r}, {value!r}, {self.key.is_tuple}"

    # -- primitives
    def _params(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key.codes(),
                "value": self.value.codes() if self.value else ()}

    def _bind(self, prim: Any, *atoms: Any) -> list[Tracer]:
        return lax.bind(prim, self.handle.atom, *atoms, **self._params())

    def len(self) -> Tracer:
        (n,) = self._bind(box_len_p)
        return n

    def _at(self, position: Any) -> list[Tracer]:
        return self._bind(box_item_p, lax.convert(as_tracer(position), np.dtype(np.int64)).atom)

    def _index(self, index: Any, message: str, *, end: bool = False) -> Tracer:
        """``index`` made non-negative, Python's IndexError outside the list (``end``:
        the length itself is inside, as ``insert`` allows)."""
        n = self.len()
        given = lax.convert(as_tracer(index), np.dtype(np.int64))
        i: Any = np.where(np.less(given, 0), np.add(given, n), given)
        top = np.greater(i, n) if end else np.greater_equal(i, n)
        outside: Any = np.logical_or(np.less(i, 0), top)
        lax.bind(raise_if_p, outside.atom, error="IndexError", message=message)
        return as_tracer(i)

    def item(self, position: Any) -> Any:
        """Item ``position`` (0 <= position < len): a list's item, a set's or dict's key."""
        lanes = self._at(position)
        return self.key.join(lanes[:len(self.key.dtypes)])

    def _find(self, value: Any) -> Tracer:
        prim = list_find_p if self.kind == "list" else map_find_p
        (k,) = self._bind(prim, *self.key.split(value))
        return k

    def contains(self, value: Any) -> Tracer:
        return as_tracer(np.greater_equal(self._find(value), 0))

    def iterate(self, what: str = "keys") -> Any:
        def pick(k: Any) -> Any:
            lanes = self._at(k)
            nkey = len(self.key.dtypes)
            key = self.key.join(lanes[:nkey])
            if what == "keys":
                return key
            assert self.value is not None
            value = self.value.join(lanes[nkey:])
            return value if what == "values" else (key, value)
        return RuntimeSeq(self.len(), pick)

    def __iter__(self) -> Any:
        raise current().error("iterating a list, set or dict grown while the kernel runs, "
                              "outside a for loop", hint="write a for loop over it")

    def __len__(self) -> int:
        raise current().error("len() of a container grown at run time is a runtime value",
                              hint="use it in the kernel's arithmetic, not as a Python int")

    # -- list methods
    def append(self, value: Any) -> RuntimeBox:
        self._bind(list_push_p, *self.key.split(value))
        return self

    def extend(self, values: Iterable[Any]) -> None:
        seq = sequence(values.iterate() if isinstance(values, RuntimeBox) else values)
        if isinstance(seq, RuntimeSeq):
            lax.fori_loop(0, seq.length, lambda i, s: (self.append(seq.item(i)), s)[1], ())
        else:
            for v in seq:
                self.append(v)

    def pop(self, *args: Any) -> Any:
        if self.kind == "dict":
            return self._dict_pop(*args)
        if self.kind == "set":
            raise current().error("set.pop() takes an arbitrary item; the compiled set's "
                                  "order is not CPython's", hint="use discard(x) or remove(x)")
        n = self.len()
        empty: Any = np.equal(n, 0)
        lax.bind(raise_if_p, empty.atom, error="IndexError", message="pop from empty list")
        k = self._index(args[0] if args else -1, "pop index out of range")
        return self.key.join(self._bind(list_pop_p, k.atom))

    def insert(self, index: Any, value: Any) -> None:
        n = self.len()
        given = lax.convert(as_tracer(index), np.dtype(np.int64))
        i = np.where(np.less(given, 0), np.maximum(np.add(given, n), 0), np.minimum(given, n))
        self._bind(list_insert_p, as_tracer(i).atom, *self.key.split(value))

    def index(self, value: Any) -> Tracer:
        k = self._find(value)
        missing: Any = np.less(k, 0)
        lax.bind(raise_if_p, missing.atom, error="ValueError", message="value is not in list")
        return k

    def remove(self, value: Any) -> None:
        if self.kind == "set":
            (removed,) = self._bind(map_delete_p, *self.key.split(value))
            self._missing(np.logical_not(removed), value)
            return
        k = self.index(value)
        self._bind(list_pop_p, k.atom)

    def count(self, value: Any) -> Tracer:
        def step(i: Any, total: Any) -> Any:
            return np.add(total, np.equal(self.item(i), value).astype(np.int64))
        result: Tracer = lax.fori_loop(0, self.len(), step, as_tracer(np.int64(0)))
        return result

    def clear(self) -> None:
        self._bind(box_clear_p)

    def sort(self, *, key: Any = None, reverse: bool = False) -> None:
        """``list.sort()``: numbers and tuples of numbers in Python's order."""
        if key is not None:
            raise current().error("sort(key=...) of a list grown while the kernel runs",
                                  hint="sort (key(v), v) tuples, or sort an array with "
                                       "np.argsort")
        if not isinstance(reverse, bool):
            raise current().error("sort(reverse=...) takes True or False known at build "
                                  "time")
        lax.bind(box_sort_p, self.handle.atom, **self._params(), reverse=reverse)

    def listed(self) -> RuntimeBox:
        """A new list of the items (a set's or dict's keys), in order."""
        if self.kind == "list":
            return self.copy()
        out = _filled([], "list", self.key, None)
        seq = self.iterate()
        lax.fori_loop(0, seq.length, lambda i, s: (out.append(seq.item(i)), s)[1], ())
        return out

    def copy(self) -> RuntimeBox:
        (handle,) = self._bind(box_copy_p)
        return RuntimeBox(handle, self.kind, self.key, self.value)

    def __getitem__(self, index: Any) -> Any:
        if self.kind == "dict":
            return self._lookup(index)
        if isinstance(index, slice):
            if index == slice(None):
                return self.copy()
            raise current().error("slicing a list grown while the kernel runs",
                                  hint="copy it whole (lst[:]) or index it item by item")
        return self.item(self._index(index, "list index out of range"))

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.kind == "dict":
            assert self.value is not None
            self._bind(map_put_p, *self.key.split(index), *self.value.split(value))
            return
        k = self._index(index, "list assignment index out of range")
        self._bind(list_put_p, k.atom, *self.key.split(value))

    def __delitem__(self, index: Any) -> None:
        if self.kind == "dict":
            (removed,) = self._bind(map_delete_p, *self.key.split(index))
            self._missing(np.logical_not(removed), index)
            return
        k = self._index(index, "list assignment index out of range")
        self._bind(list_pop_p, k.atom)

    # -- set methods
    def add(self, value: Any) -> None:
        self._bind(map_put_p, *self.key.split(value))

    def discard(self, value: Any) -> None:
        self._bind(map_delete_p, *self.key.split(value))

    def update(self, values: Any) -> None:
        if self.kind == "dict":
            items = values.items() if isinstance(values, dict) else values
            for k, v in items:
                self[k] = v
            return
        self.extend(values)

    # -- dict methods
    def _missing(self, absent: Any, key: Any) -> None:
        """Python's KeyError, whose message is the key (up to four lanes shown)."""
        lanes = [as_tracer(v) for v in (list(key) if self.key.is_tuple else [key])][:4]
        tokens = ["{" + slot + ("!d" if lane.dtype.kind == "f" else "") + "}"
                  for slot, lane in zip(("lhs", "rhs", "v2", "v3"), lanes, strict=False)]
        message = f"({', '.join(tokens)}{',' if len(tokens) == 1 else ''})" \
            if self.key.is_tuple else tokens[0]
        details = [lax.convert(lane, np.dtype(np.float64) if lane.dtype.kind == "f"
                               else np.dtype(np.int64)).atom for lane in lanes]
        if len(details) == 1:
            details.append(details[0])  # (raise_if takes two to four)
        lax.bind(raise_if_p, as_tracer(absent).atom, *details, error="KeyError",
                 message=message)

    def _lookup(self, key: Any) -> Any:
        k = self._find(key)
        self._missing(np.less(k, 0), key)
        return self._value_at(k)

    def _value_at(self, position: Any) -> Any:
        assert self.value is not None
        lanes = self._at(np.maximum(position, 0))
        return self.value.join(lanes[len(self.key.dtypes):])

    def get(self, key: Any, default: Any = None) -> Any:
        if default is None:
            raise current().error("dict.get(key) of a dict grown while the kernel runs "
                                  "needs a default of the values' type",
                                  hint="write d.get(key, 0), or test 'key in d' first")
        assert self.value is not None
        k = self._find(key)
        found = self._value_at(k)
        chosen: list[Any] = [
            np.where(np.greater_equal(k, 0), f, lax.convert(as_tracer(d), f.dtype))
            for f, d in zip(_as_list(found, self.value), _as_list(default, self.value),
                                  strict=True)]
        return self.value.join(chosen)

    def setdefault(self, key: Any, default: Any) -> Any:
        k = self._find(key)
        absent: Any = np.less(k, 0)
        def put() -> tuple[()]:
            self[key] = default
            return ()
        lax.cond(absent, put, lambda: ())
        return self[key]

    def _dict_pop(self, key: Any, *default: Any) -> Any:
        value = self.get(key, default[0]) if default else self._lookup(key)
        self._bind(map_delete_p, *self.key.split(key))
        return value

    def keys(self) -> Any:
        return self.iterate("keys")

    def values(self) -> Any:
        return self.iterate("values")

    def items(self) -> Any:
        return self.iterate("items")


def _as_list(value: Any, lanes: _Lanes) -> list[Any]:
    return list(value) if lanes.is_tuple else [value]


# -- making boxes of a loop's containers ----------------------------------------------------

class _Recording:
    """Stands for a container while the loop body is traced aside: records what goes in
    (items, keys, values), and answers reads with zeros of what it has seen so far."""

    is_box = True

    def __init__(self, kind: str) -> None:
        self.kind = kind
        #: Items (a list's), or keys (a set's or dict's), and a dict's values, as seen.
        self.seen: list[Any] = []
        self.written: list[Any] = []

    def tree_flatten(self) -> tuple[list[Any], _Recording]:
        return [], self

    @classmethod
    def tree_unflatten(cls, meta: _Recording, leaves: list[Any]) -> _Recording:
        return meta

    def _zero(self, seen: list[Any]) -> Any:
        if not seen:
            return as_tracer(np.int64(0))
        first = seen[0]
        if isinstance(first, tuple):
            return tuple(lax.convert(as_tracer(0), _dtype_of(v)) for v in first)
        return lax.convert(as_tracer(0), _dtype_of(first))

    def append(self, value: Any) -> _Recording:
        self.seen.append(value)
        return self

    add = append

    def extend(self, values: Any) -> None:
        if isinstance(values, (list, tuple)):
            self.seen.extend(values)

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


def _lanes_of(seen: list[Any]) -> _Lanes:
    if not seen:
        return _Lanes((np.dtype(np.int64),), False)
    is_tuple = isinstance(seen[0], tuple)
    width = len(seen[0]) if is_tuple else 1
    columns: list[list[np.dtype]] = [[] for _ in range(width)]
    for item in seen:
        values = list(item) if is_tuple else [item]
        if isinstance(item, tuple) != is_tuple or len(values) != width:
            raise current().error("a list, set or dict changed in a runtime loop holds "
                                  "items of one shape (scalars, or tuples of one length)")
        for column, v in zip(columns, values, strict=True):
            column.append(_dtype_of(v))
    return _Lanes(tuple(np.result_type(*column) for column in columns), is_tuple)


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
    """An array standing for a list (one an earlier loop appended to, ``[x, y]``)."""
    return isinstance(value, Tracer) and getattr(value, "list_like", False) and value.ndim == 1


def box_changed(state: State, names: tuple[str, ...], changes: dict[str, str],
                aside: Callable[[State], State]) -> State:
    """``state`` with the containers the loop changes (``changes``: name -> how) made
    boxes, as :func:`boxed` makes them."""
    positions = [i for i, (v, n) in enumerate(zip(state, names, strict=True))
                 if n in changes and ((type(v) in _KINDS and _boxable(v, changes[n]))
                                      or (_laid_out_list(v) and changes[n] != "item"))]
    return boxed(state, aside, positions) if positions else state


def boxed(state: State, aside: Callable[[State], State], positions: list[int]) -> State:
    """``state`` with the lists, sets and dicts at ``positions`` made boxes holding their
    items, the lanes' dtypes found by tracing ``aside`` (the loop body) with recording
    stand-ins."""
    # Every container of the state is a stand-in while the body is traced aside (one
    # that only a branch appends to must not make the branches disagree); only those at
    # ``positions`` become boxes.
    recorders = {i: _Recording(_KINDS.get(type(v), "list"))
                 for i, v in enumerate(state) if i in positions or type(v) in _KINDS}
    for i, rec in recorders.items():
        old = state[i]
        if isinstance(old, Tracer):  # a laid-out list: its items are of its dtype
            rec.seen.append(lax.convert(as_tracer(0), old.dtype))
            continue
        rec.seen.extend(old.keys() if isinstance(old, dict) else old)
        if isinstance(old, dict):
            rec.written.extend(old.values())
    held = [i for i in positions if _lanes_or_none(recorders[i].seen) is not None
            and (recorders[i].kind != "dict" or _lanes_or_none(recorders[i].written))]
    if len(held) < len(positions):  # arrays or strings in it: a record, not a box
        return boxed(state, aside, held) if held else state
    stand_ins = tuple(recorders.get(i, v) for i, v in enumerate(state))
    leaves, structure = flatten(stand_ins)
    try:
        probe(aside, [[v if v is UNDEFINED else as_tracer(v) for v in leaves]], [structure])
    except TraceError:  # the body uses its containers as no box can serve
        return state
    out = list(state)
    for i in positions:
        rec = recorders[i]
        lanes = _lanes_or_none(rec.seen)
        value = _lanes_or_none(rec.written) if rec.kind == "dict" else None
        if lanes is None or (rec.kind == "dict" and value is None):
            continue  # items that are not numbers (arrays, strings): no box holds them
        out[i] = _filled(state[i], rec.kind, lanes, value)
    return tuple(out)


def _lanes_or_none(seen: list[Any]) -> _Lanes | None:
    try:
        return _lanes_of(seen)
    except (TraceError, TypeError, ValueError):
        return None


def _filled(old: Any, kind: str, key: _Lanes, value: _Lanes | None) -> RuntimeBox:
    params = {"kind": kind, "key": key.codes(), "value": value.codes() if value else ()}
    box = RuntimeBox(lax.bind1(box_new_p, **params), kind, key, value)
    if isinstance(old, Tracer):
        lax.fori_loop(0, old.shape[0], lambda i, s: (box.append(old[i]), s)[1], ())
    elif kind == "dict":
        for k, v in old.items():
            box[k] = v
    else:
        for item in old:
            (box.append if kind == "list" else box.add)(item)
    return box


# -- builtins over boxes -------------------------------------------------------------------

def reduction(name: str, box: RuntimeBox, *args: Any) -> Any:
    """``sum``, ``min``, ``max``, ``any`` and ``all`` of a box's items (a set's or dict's
    keys), in order, as Python's builtins take them."""
    if box.key.is_tuple and name == "sum":
        raise current().error("sum() of tuples")
    n = box.len()
    if name in ("min", "max"):
        empty: Any = np.equal(n, 0)
        lax.bind(raise_if_p, empty.atom, error="ValueError",
                 message=f"{name}() arg is an empty sequence")
        better = np.less if name == "min" else np.greater

        def keep(i: Any, best: Any) -> Any:
            item = box.item(i)
            return np.where(better(item, best), item, best)
        return lax.fori_loop(1, n, keep, box.item(0))
    if name == "sum":
        start = args[0] if args else 0
        first = box.item(0)
        total0 = np.add(start, np.zeros((), first.dtype if first.dtype != np.bool_
                                        else np.int64))
        return lax.fori_loop(0, n, lambda i, total: np.add(total, box.item(i)), total0)
    every = name == "all"

    def truth(i: Any, found: Any) -> Any:
        item = as_tracer(box.item(i)).astype(bool)
        return np.logical_and(found, item) if every else np.logical_or(found, item)
    return lax.fori_loop(0, n, truth, as_tracer(np.bool_(every)))


REDUCTIONS = ("sum", "min", "max", "any", "all")


def sorted_items(box: RuntimeBox, key: Any = None, reverse: bool = False) -> RuntimeBox:
    """``sorted(box)``: a new list of its items (a set's or dict's keys), sorted."""
    out = box.listed()
    out.sort(key=key, reverse=reverse)
    return out


def as_set(value: Any = ()) -> Any:
    """``set(x)``: of an array's items or of a list, set or dict grown at run time, a
    set grown at run time; else Python's."""
    if getattr(type(value), "is_box", False) or isinstance(value, Tracer):
        return of_items("set", value)
    return set(value)


def of_items(kind: str, items: Any) -> RuntimeBox:
    """``set(x)`` of a 1-d array's items or of a box's: a new box of them."""
    seq = sequence(items)
    assert isinstance(seq, RuntimeSeq)
    if isinstance(items, Tracer):
        if items.ndim != 1:
            raise current().error(f"{kind}() of an array's rows (Python's TypeError: an "
                                  "array is unhashable)", hint=f"{kind}() of a 1-d array")
        lanes = _Lanes((items.dtype,), False)
    else:
        lanes = items.key
    out = _filled([], kind, lanes, None)
    add = out.append if kind == "list" else out.add
    lax.fori_loop(0, seq.length, lambda i, s: (add(seq.item(i)), s)[1], ())
    return out

