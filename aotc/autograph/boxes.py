"""Python lists, sets and dicts that a runtime loop changes, as boxes.

A loop whose state holds a list, set or dict that gains or loses items (a backtracking
``stack.append``/``stack.pop()`` in a ``while``, ``seen.add(v)``, ``counts[k] += 1``)
cannot carry it as fixed leaves. Such a container is a :class:`RuntimeBox` there (made
by :mod:`.boxing`): a handle to a box the kernel grows while it runs
(:mod:`aotc.ops.containers`), whose methods are Python's. Lists appended to in loops
whose appends can be counted keep the cheaper buffer of :mod:`.lists`; a box serves
the rest.

A box's items are records of scalar *lanes*: a list of ints, of ``(i, j)`` tuples, a
dict from ints to floats.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api.pylists import insert_position, list_position
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
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .sequences import RuntimeSeq, sequence


def box_params(kind: str, key: Lanes, value: Lanes | None) -> dict[str, Any]:
    """The params every box primitive carries (:mod:`aotc.ops.containers`)."""
    return {"kind": kind, "key": key.codes(), "value": value.codes() if value else ()}


#: Items held as rows of lanes: tuples, and lists of numbers (``[rep, t]``, read back as
#: tuples, which index and unpack as the lists did).
ROW = (tuple, list)


class Lanes:
    """How a Python item maps to lanes: a scalar (one lane) or a tuple of ``n``."""

    def __init__(self, dtypes: tuple[np.dtype, ...], is_tuple: bool) -> None:
        self.dtypes, self.is_tuple = dtypes, is_tuple

    def split(self, value: Any) -> list[Any]:
        width = len(self.dtypes)
        if self.is_tuple and isinstance(value, Tracer) and value.ndim == 1 \
                and value.aval.shape[0] == DimExpr.const(width):  # a laid-out list's row
            value = tuple(value[k] for k in range(width))
        values = list(value) if self.is_tuple else [value]
        if len(values) != width or (isinstance(value, ROW) != self.is_tuple):
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


#: What makes new boxes of old ones (slices, set operators, keyed sorts), filled in by
#: :mod:`.box_algebra`, which imports this module.
ALGEBRA: dict[str, Callable[..., Any]] = {}


@dataclass(frozen=True)
class BoxView(RuntimeSeq):
    """A box's items in order (its keys, values or a dict's ``(key, value)`` pairs), and
    how each maps to lanes: what a new box of them is made of (``sorted(d.items())``)."""

    lanes: Lanes

    def listed(self) -> RuntimeBox:
        """``list(d.keys())``: a new list of the items, in order."""
        out = filled([], "list", self.lanes, None)
        out.extend(self)
        return out


class RuntimeBox:
    """A list, set or dict grown while the kernel runs: ``handle`` names its box."""

    #: What it is, in a message about the kinds of values a branch gives.
    KIND = "a list, set or dict grown at run time"

    #: What :mod:`.sequences` and :mod:`.runtime` ask to treat it (and a recording
    #: stand-in for one) as a container of the kernel's.
    is_box = True

    def __init__(self, handle: Tracer, kind: str, key: Lanes, value: Lanes | None,
                 missing: Any = None) -> None:
        self.handle, self.kind, self.key, self.value = handle, kind, key, value
        #: A ``defaultdict``'s value for a key read before it is set (its factory's).
        self.missing = missing

    # -- pytree: the handle is the loop state
    def tree_flatten(self) -> tuple[list[Any], tuple[Any, ...]]:
        return [self.handle], (self.kind, self.key, self.value, self.missing)

    @classmethod
    def tree_unflatten(cls, meta: tuple[Any, ...], leaves: list[Any]) -> RuntimeBox:
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
    def _bind(self, prim: Any, *atoms: Any, **params: Any) -> list[Tracer]:
        return lax.bind(prim, self.handle.atom, *atoms,
                        **box_params(self.kind, self.key, self.value), **params)

    def len(self) -> Tracer:
        (n,) = self._bind(box_len_p)
        return n

    def _at(self, position: Any) -> list[Tracer]:
        return self._bind(box_item_p, lax.convert(as_tracer(position), np.dtype(np.int64)).atom)

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

    def iterate(self, what: str = "keys") -> BoxView:
        def pick(k: Any) -> Any:
            lanes = self._at(k)
            nkey = len(self.key.dtypes)
            key = self.key.join(lanes[:nkey])
            if what == "keys":
                return key
            assert self.value is not None
            value = self.value.join(lanes[nkey:])
            return value if what == "values" else (key, value)
        if what == "keys":
            lanes = self.key
        else:
            assert self.value is not None
            lanes = self.value if what == "values" else Lanes(
                self.key.dtypes + self.value.dtypes, True)
        return BoxView(self.len(), pick, lanes)

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
        """``lst.extend(values)``, ``s.update(values)``: each item put in, in order (a
        runtime sequence's, an array's rows, a box's items, or Python's)."""
        put = self.append if self.kind == "list" else self.add
        seq = sequence(values)
        if isinstance(seq, RuntimeSeq):
            lax.fori_loop(0, seq.length, lambda i, s: (put(seq.item(i)), s)[1], ())
        else:
            for v in seq:
                put(v)

    def pop(self, *args: Any) -> Any:
        if self.kind == "dict":
            return self._dict_pop(*args)
        if self.kind == "set":
            raise current().error("set.pop() takes an arbitrary item; the compiled set's "
                                  "order is not CPython's", hint="use discard(x) or remove(x)")
        n = self.len()
        empty: Any = np.equal(n, 0)
        lax.bind(raise_if_p, empty.atom, error="IndexError", message="pop from empty list")
        k = list_position(args[0] if args else -1, n, "pop index out of range")
        return self.key.join(self._bind(list_pop_p, k.atom))

    def insert(self, index: Any, value: Any) -> None:
        i = insert_position(index, self.len())
        self._bind(list_insert_p, i.atom, *self.key.split(value))

    def index(self, value: Any) -> Tracer:
        k = self._find(value)
        missing: Any = np.less(k, 0)
        lax.bind(raise_if_p, missing.atom, error="ValueError", message="value is not in list")
        return k

    def remove(self, value: Any) -> None:
        if self.kind == "set":
            (removed,) = self._bind(map_delete_p, *self.key.split(value))
            self._key_error(np.logical_not(removed), value)
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
        """``list.sort()``: numbers and tuples of numbers in Python's order; by
        ``key``, stable (:func:`.box_algebra.sorted_view`)."""
        if not isinstance(reverse, bool):
            raise current().error("sort(reverse=...) takes True or False known at build "
                                  "time")
        if key is None:
            self._bind(box_sort_p, reverse=reverse)
            return
        ordered = ALGEBRA["sort"](self.iterate(), key, reverse)
        self.clear()
        self.extend(ordered)

    def listed(self) -> RuntimeBox:
        """A new list of the items (a set's or dict's keys), in order."""
        if self.kind == "list":
            return self.copy()
        out = filled([], "list", self.key, None)
        out.extend(self)
        return out

    def copy(self) -> RuntimeBox:
        (handle,) = self._bind(box_copy_p)
        return RuntimeBox(handle, self.kind, self.key, self.value)

    def __getitem__(self, index: Any) -> Any:
        if self.kind == "dict":
            return self._lookup(index)
        if isinstance(index, slice):
            whole = index.start is None and index.stop is None and index.step is None
            return self.copy() if whole else ALGEBRA["slice"](self, index)
        return self.item(list_position(index, self.len(), "list index out of range"))

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.kind == "dict":
            assert self.value is not None
            self._bind(map_put_p, *self.key.split(index), *self.value.split(value))
            return
        k = list_position(index, self.len(), "list assignment index out of range")
        self._bind(list_put_p, k.atom, *self.key.split(value))

    def __delitem__(self, index: Any) -> None:
        if self.kind == "dict":
            (removed,) = self._bind(map_delete_p, *self.key.split(index))
            self._key_error(np.logical_not(removed), index)
            return
        k = list_position(index, self.len(), "list assignment index out of range")
        self._bind(list_pop_p, k.atom)

    # -- set methods
    def add(self, value: Any) -> None:
        self._bind(map_put_p, *self.key.split(value))

    def discard(self, value: Any) -> None:
        self._bind(map_delete_p, *self.key.split(value))

    def _combined(self, op: str, other: Any) -> RuntimeBox:
        box: RuntimeBox = ALGEBRA["combine"](op, self, other)
        return box

    def __or__(self, other: Any) -> RuntimeBox:
        return self._combined("|", other)

    def __and__(self, other: Any) -> RuntimeBox:
        return self._combined("&", other)

    def __sub__(self, other: Any) -> RuntimeBox:
        return self._combined("-", other)

    def __xor__(self, other: Any) -> RuntimeBox:
        return self._combined("^", other)

    union, intersection, difference, symmetric_difference = __or__, __and__, __sub__, __xor__

    def update(self, values: Any) -> None:
        if self.kind == "dict":
            items = values.items() if isinstance(values, dict) else values
            for k, v in items:
                self[k] = v
            return
        self.extend(values)

    # -- dict methods
    def _key_error(self, absent: Any, key: Any) -> None:
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

    # -- collections.deque's (a deque is a list here: see autograph.pybuiltins)
    def popleft(self) -> Any:
        return self.pop(0)

    def appendleft(self, value: Any) -> None:
        self.insert(0, value)

    def _lookup(self, key: Any) -> Any:
        if isinstance(self.missing, Unkept):  # a Counter: 0, and no new key
            return self.get(key, self.missing.value)
        if self.missing is not None:  # a defaultdict: a key read first is set first
            self.setdefault(key, self.missing)
        k = self._find(key)
        self._key_error(np.less(k, 0), key)
        return self._value_at(k)

    def _value_at(self, position: Any) -> Any:
        """The value of entry ``position`` (zeros where there is none: -1, not found)."""
        assert self.value is not None
        return self.value.join(self._at(position)[len(self.key.dtypes):])

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
        return self._value_at(self._find(key))  # (there now)

    def _dict_pop(self, key: Any, *default: Any) -> Any:
        value = self.get(key, default[0]) if default else self._lookup(key)
        self._bind(map_delete_p, *self.key.split(key))
        return value

    def most_common(self, n: Any = None) -> RuntimeBox:
        """``Counter.most_common(n)``: (key, count) pairs, the largest counts first, ties
        in the order keys were first counted (a stable sort, as CPython's)."""
        if not isinstance(self.missing, Unkept):
            raise current().error("'dict' object has no attribute 'most_common'")
        view = self.iterate("items")
        out = filled([], "list", view.lanes, None)
        out.extend(view)
        out.sort(key=lambda pair: pair[1], reverse=True)
        return out if n is None else out[:n]

    def keys(self) -> Any:
        return self.iterate("keys")

    def values(self) -> Any:
        return self.iterate("values")

    def items(self) -> Any:
        return self.iterate("items")


def key_function(key: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A ``key=`` for items compared at run time: ``d.get`` of a dict grown at run time
    (``max(d, key=d.get)``) reads ``d[k]``, which the dict's own keys always have (its
    None for a missing key is never compared there)."""
    owner = getattr(key, "__self__", None)
    if isinstance(owner, RuntimeBox) and owner.kind == "dict" \
            and getattr(key, "__name__", "") == "get":
        return owner.__getitem__
    return key


def _as_list(value: Any, lanes: Lanes) -> list[Any]:
    return list(value) if lanes.is_tuple else [value]


@dataclass(frozen=True)
class Unkept:
    """A ``Counter``'s value for a key read before it is set: 0, which the read does not
    insert (a ``defaultdict``'s read sets its factory's value)."""

    value: int = 0


def missing_value(old: Any) -> Any:
    """The value a dict gives a key read before it is set: a ``defaultdict``'s
    factory's, a ``Counter``'s :class:`Unkept` 0; None for a plain dict (a KeyError)."""
    if isinstance(old, collections.Counter):
        return Unkept()
    factory = old.default_factory if isinstance(old, collections.defaultdict) else None
    return factory() if factory is not None else None


def filled(old: Any, kind: str, key: Lanes, value: Lanes | None) -> RuntimeBox:
    """A new box of ``kind`` holding ``old``'s items: a Python container's, or the
    items of an array standing for a list."""
    missing = missing_value(old)
    if missing is not None and not isinstance(missing, (bool, int, float, Unkept)):
        raise current().error(f"a defaultdict of {type(missing).__name__} changed in a "
                              "runtime loop: a box holds numbers",
                              hint="use defaultdict(int) or defaultdict(float)")
    box = RuntimeBox(lax.bind1(box_new_p, **box_params(kind, key, value)), kind, key, value,
                     missing)
    if kind == "dict":
        box.update(old)
    else:
        box.extend(old)
    return box
