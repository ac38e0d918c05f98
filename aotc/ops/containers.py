"""Lists, sets and dicts that grow while the kernel runs ("boxes").

A Python list, set or dict that a loop of unknown length changes (``stack.append(i)``
and ``stack.pop()`` in a backtracking ``while``, ``seen.add(v)``, ``counts[k] += 1``)
has no size the entry points could plan a buffer for. Such a container is a *box*: a
header the kernel allocates while it runs, holding its items in memory it grows as they
come (:mod:`aotc.codegen.core.containers`), freed when the kernel returns. In the IR a box
is its handle, an ``int64`` scalar, made by ``box_new`` and passed to every operation on
it. The operations read and change the box's state, so they are ``STATEFUL`` (never
merged, always in program order) and effects (never removed): like random draws.

Items are fixed records of *lanes*, one scalar each: a list of ints has one lane, a list
of ``(i, j)`` pairs two, a dict from int keys to float values one key lane and one value
lane. ``key`` (and ``value``, dicts only) give each lane's dtype. Sets and dicts keep
their items in insertion order (a dict's order is Python's; a set's is not CPython's,
which follows its hash table, but no program may rely on that) and find keys through a
hash index: float keys compare as Python's do (``0.0 == -0.0``; a NaN equals nothing),
and a key of one dtype meets only keys of that dtype (the tracer converts them).

Every operation carries the box's ``kind``, ``key`` and ``value`` params. Indices reach
these operations checked and made non-negative by the front end
(:mod:`aotc.autograph.boxes`), which raises Python's IndexError and KeyError first.

- ``box_new[kind, key, value]() -> h``: an empty list, set or dict.
- ``box_len h -> n``; ``box_item h k -> lanes`` (the k-th item, key lanes then value
  lanes, in order; zeros when ``k`` is outside the items); ``box_clear h``;
  ``box_copy h -> h2``.
- ``list_push h *item``; ``list_pop h k -> item`` (removes it); ``list_put h k *item``;
  ``list_insert h k *item`` (0 <= k <= n); ``list_find h *item -> k`` (the first equal
  item's position, or -1).
- ``map_find h *key -> k`` (-1 when absent); ``map_put h *key *value -> created``
  (sets: no value); ``map_delete h *key -> removed``.
- ``box_sort[reverse] h``: a list's items in order (tuples by their lanes, in turn).
- ``box_escape h``: the box is a result: when the kernel succeeds it outlives the call,
  and the caller reads it and frees it (``_box_value`` of ``templates/runtime.py``).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..tracing.avals import AType
from .core import EFFECT, STATEFUL, impl_rules, primitive, type_rules

KINDS = ("list", "set", "dict")


def _box(name: str) -> Any:
    return primitive(name, EFFECT, STATEFUL)


box_new_p = _box("box_new")
box_len_p = _box("box_len")
box_item_p = _box("box_item")
box_clear_p = _box("box_clear")
box_copy_p = _box("box_copy")
list_push_p = _box("list_push")
list_pop_p = _box("list_pop")
list_put_p = _box("list_put")
list_insert_p = _box("list_insert")
list_find_p = _box("list_find")
map_find_p = _box("map_find")
map_put_p = _box("map_put")
map_delete_p = _box("map_delete")
box_sort_p = _box("box_sort")
box_escape_p = _box("box_escape")

BOX_PRIMITIVES = frozenset({
    box_new_p, box_len_p, box_item_p, box_clear_p, box_copy_p, list_push_p, list_pop_p,
    list_put_p, list_insert_p, list_find_p, map_find_p, map_put_p, map_delete_p, box_sort_p,
    box_escape_p})

I64 = np.dtype(np.int64)
HANDLE = AType(I64, ())


def is_box(value: Any) -> bool:
    """Whether ``value`` is the front end's box (``autograph.boxes.RuntimeBox``) or its
    recording stand-in: its class says so, by ``is_box`` (a Tracer answers any
    attribute, so the class is asked, not the value)."""
    return bool(getattr(type(value), "is_box", False))


def _lanes(codes: tuple[str, ...]) -> tuple[AType, ...]:
    return tuple(AType(np.dtype(c), ()) for c in codes)


def _check_handle(h: Any) -> None:
    if h.dtype != I64 or h.ndim:
        raise ValueError("a box's handle is an int64 scalar")


def _check_lanes(values: tuple[Any, ...], codes: tuple[str, ...], what: str) -> None:
    if len(values) != len(codes) or any(v.ndim or v.dtype != np.dtype(c)
                                        for v, c in zip(values, codes, strict=True)):
        raise ValueError(f"{what}: one scalar per lane, of the lanes' dtypes {codes}")


def _new_type(*, kind: str, key: tuple[str, ...], value: tuple[str, ...]) -> tuple[Any, ...]:
    if kind not in KINDS or not key or (value and kind != "dict"):
        raise ValueError(f"box_new: a {KINDS} of one or more key lanes (values: dicts)")
    for code in (*key, *value):
        if np.dtype(code).kind not in "biuf":
            raise ValueError(f"box_new: lanes are bool, integer or float, not {code}")
    return (HANDLE,)


def _reader(result: Any) -> Any:
    def rule(h: Any, *rest: Any, kind: str, key: tuple[str, ...], value: tuple[str, ...]
             ) -> tuple[Any, ...]:
        _check_handle(h)
        _new_type(kind=kind, key=key, value=value)
        out: tuple[Any, ...] = result(rest, key, value)
        return out
    return rule


def _scalar_inputs(rest: tuple[Any, ...], count: int, what: str) -> None:
    if len(rest) != count or any(r.ndim or r.dtype.kind not in "iu" for r in rest):
        raise ValueError(f"{what}: takes {count} integer scalar(s) after the handle")


def _item_type(rest: Any, key: Any, value: Any) -> tuple[Any, ...]:
    _scalar_inputs(rest, 1, "box_item")
    return _lanes(key + value)


def _pop_type(rest: Any, key: Any, value: Any) -> tuple[Any, ...]:
    _scalar_inputs(rest, 1, "list_pop")
    return _lanes(key)


def _put_type(rest: Any, key: Any, value: Any) -> tuple[Any, ...]:
    _scalar_inputs(rest[:1], 1, "list_put")
    _check_lanes(rest[1:], key, "list_put")
    return ()


def _find_type(rest: Any, key: Any, value: Any) -> tuple[Any, ...]:
    _check_lanes(rest, key, "find")
    return (HANDLE,)


def _map_put_type(rest: Any, key: Any, value: Any) -> tuple[Any, ...]:
    _check_lanes(rest, key + value, "map_put")
    return (AType(np.dtype(np.bool_), ()),)


def _map_delete_type(rest: Any, key: Any, value: Any) -> tuple[Any, ...]:
    _check_lanes(rest, key, "map_delete")
    return (AType(np.dtype(np.bool_), ()),)


def _push_type(rest: Any, key: Any, value: Any) -> tuple[Any, ...]:
    _check_lanes(rest, key, "list_push")
    return ()


type_rules.update({
    box_new_p: _new_type,
    box_len_p: _reader(lambda rest, key, value: (HANDLE,)),
    box_item_p: _reader(_item_type),
    box_clear_p: _reader(lambda rest, key, value: ()),
    box_copy_p: _reader(lambda rest, key, value: (HANDLE,)),
    list_push_p: _reader(_push_type),
    list_pop_p: _reader(_pop_type),
    list_put_p: _reader(_put_type),
    list_insert_p: _reader(_put_type),
    list_find_p: _reader(_find_type),
    map_find_p: _reader(_find_type),
    map_put_p: _reader(_map_put_type),
    map_delete_p: _reader(_map_delete_type),
    box_escape_p: _reader(lambda rest, key, value: ()),
    box_sort_p: lambda h, *, kind, key, value, reverse: _reader(
        lambda rest, key, value: ())(h, kind=kind, key=key, value=value),
})


# -- the reference interpreter's boxes: Python lists and dicts, by handle ---------------

#: The interpreter's boxes: handle -> a list of item tuples, or a dict from key tuples
#: to value tuples (a set's values are empty). Handles are never reused.
_BOXES: dict[int, Any] = {}
_HANDLES = itertools.count(1)


def _scalar(x: np.ndarray) -> Any:
    return x[()]


def _key(lanes: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
    """A dict key of lanes: Python's equality for floats (``-0.0 == 0.0``); a NaN lane
    makes a key equal to nothing, as a new float NaN is in Python."""
    out: list[Any] = []
    for lane in lanes:
        v = _scalar(lane)
        out.append(object() if isinstance(v, np.floating) and np.isnan(v) else v.item())
    return tuple(out)


def _lanes_of(values: tuple[Any, ...], codes: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(v, dtype=np.dtype(c)) for v, c in zip(values, codes, strict=True))


def _new_impl(*, kind: str, key: tuple[str, ...], value: tuple[str, ...]
              ) -> tuple[np.ndarray, ...]:
    handle = next(_HANDLES)
    _BOXES[handle] = [] if kind == "list" else {}
    return (np.asarray(handle, dtype=I64),)


def _box_of(h: np.ndarray) -> Any:
    return _BOXES[int(h)]


def _items(box: Any) -> list[tuple[Any, ...]]:
    return box if isinstance(box, list) else [k + v for k, v in box.items()]


def _item_impl(h: np.ndarray, k: np.ndarray, *, kind: str, key: tuple[str, ...],
               value: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    items = _items(_box_of(h))
    if not 0 <= int(k) < len(items):  # zeros, as the compiled code reads there
        return _lanes_of((0,) * len(key + value), key + value)
    return _lanes_of(items[int(k)], key + value)


def _copy_impl(h: np.ndarray, **_: Any) -> tuple[np.ndarray, ...]:
    handle = next(_HANDLES)
    box = _box_of(h)
    _BOXES[handle] = list(box) if isinstance(box, list) else dict(box)
    return (np.asarray(handle, dtype=I64),)


def _clear_impl(h: np.ndarray, **_: Any) -> tuple[np.ndarray, ...]:
    _box_of(h).clear()
    return ()


def _push_impl(h: np.ndarray, *item: np.ndarray, **_: Any) -> tuple[np.ndarray, ...]:
    _box_of(h).append(tuple(_scalar(v) for v in item))
    return ()


def _pop_impl(h: np.ndarray, k: np.ndarray, *, kind: str, key: tuple[str, ...],
              value: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    return _lanes_of(_box_of(h).pop(int(k)), key)


def _put_impl(h: np.ndarray, k: np.ndarray, *item: np.ndarray, **_: Any
              ) -> tuple[np.ndarray, ...]:
    _box_of(h)[int(k)] = tuple(_scalar(v) for v in item)
    return ()


def _insert_impl(h: np.ndarray, k: np.ndarray, *item: np.ndarray, **_: Any
                 ) -> tuple[np.ndarray, ...]:
    _box_of(h).insert(int(k), tuple(_scalar(v) for v in item))
    return ()


def _position(box: Any, lanes: tuple[np.ndarray, ...]) -> int:
    """Where the item (of a list) or key (of a set's or dict's) equal to ``lanes`` is,
    as the kernel compares them; -1 where there is none."""
    wanted = _key(lanes)
    return next((k for k, have in enumerate(box)
                 if _key(tuple(np.asarray(v) for v in have)) == wanted), -1)


def _find_impl(h: np.ndarray, *lanes: np.ndarray, **_: Any) -> tuple[np.ndarray, ...]:
    return (np.asarray(_position(_box_of(h), lanes), dtype=I64),)


def _map_put_impl(h: np.ndarray, *lanes: np.ndarray, kind: str, key: tuple[str, ...],
                  value: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    box = _box_of(h)
    k = _position(box, lanes[:len(key)])
    values = tuple(_scalar(x) for x in lanes[len(key):])
    if k >= 0:  # (the key it has stays, as a dict keeps its first key object)
        box[list(box)[k]] = values
        return (np.asarray(False),)
    box[tuple(_scalar(x) for x in lanes[:len(key)])] = values
    return (np.asarray(True),)


def _map_delete_impl(h: np.ndarray, *key: np.ndarray, **_: Any) -> tuple[np.ndarray, ...]:
    box = _box_of(h)
    k = _position(box, key)
    if k >= 0:
        del box[list(box)[k]]
    return (np.asarray(k >= 0),)


def _sort_impl(h: np.ndarray, *, reverse: bool, **_: Any) -> tuple[np.ndarray, ...]:
    _box_of(h).sort(reverse=reverse)
    return ()


impl_rules.update({
    box_new_p: _new_impl,
    box_len_p: lambda h, **_: (np.asarray(len(_box_of(h)), dtype=I64),),
    box_item_p: _item_impl,
    box_clear_p: _clear_impl,
    box_copy_p: _copy_impl,
    list_push_p: _push_impl,
    list_pop_p: _pop_impl,
    list_put_p: _put_impl,
    list_insert_p: _insert_impl,
    list_find_p: _find_impl,
    map_find_p: _find_impl,
    map_put_p: _map_put_impl,
    map_delete_p: _map_delete_impl,
    box_sort_p: _sort_impl,
    box_escape_p: lambda h, **_: (),
})
