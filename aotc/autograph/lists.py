"""Python lists that grow in a runtime loop: ``out = []; for ...: out.append(v)``.

``lst.append(v)`` is rewritten to ``lst = __aotc__.append(lst, v)`` (see
:mod:`.expressions`), so a list a loop appends to is part of the loop's state. On
build-time paths it stays a Python list. When the loop runs at run time, the list
becomes a :class:`RuntimeList`: a buffer with room for every append the loop can make
(the items it had, plus the loop's trip count times the appends its body writes) and
the count used so far, carried by the loop like any array and integer; an append
writes one row and counts it, in a branch as well. After the loop the list is the
buffer's used front: an array whose length is a size bound while the kernel runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from .. import lax
from ..errors import TraceError
from ..numpy_api import pylists
from ..numpy_api.creation import full_from_dims
from ..numpy_api.masks import MaskedValue
from ..ops.containers import is_box
from ..shapes import DimExpr, as_dim, bound_symbols
from ..tracing.bodies import UNDEFINED, flatten, probe, sequence_of
from ..tracing.derived import derived_size
from ..tracing.tracer import DETACHED, Tracer, as_tracer, current
from ..value_bounds import bounded_size
from . import boxing
from .boxes import BoxView
from .returns import RET
from .runtime_generators import RuntimeGenerator
from .sequences import RuntimeSeq, as_list, sequence

State = tuple[Any, ...]
T = TypeVar("T")


class Shared:
    """The arrays outside a list that its items share memory with (views of them, or
    kernel arguments): Python's list holds those objects, the laid-out list copies of
    them. One object per list, kept by every copy of it in a loop's bodies (the meta of
    its pytree, compared by identity)."""

    def __init__(self, items: Sequence[Any] = ()) -> None:
        self.arrays: list[Tracer] = []
        for item in items:
            self.add(item)

    def add(self, item: Any) -> None:
        array = _array_shared(item)
        if array is not None and not any(array is a for a in self.arrays):
            self.arrays.append(array)

    def mark(self, items: T) -> T:
        """``items`` (the list laid out), a :data:`DETACHED` view of the first such array
        when there is one: a write into it, or a read after that array's next write, is
        a located error, never a write the array would miss."""
        if self.arrays and isinstance(items, Tracer):
            items.view_of(self.arrays[0], DETACHED)
        return items


def _array_shared(item: Any) -> Tracer | None:
    """The array a list item shares memory with: the array it views, or the item itself
    when it is a kernel argument; None for an array of its own, or a number."""
    if not isinstance(item, Tracer) or item.ndim == 0:
        return None
    if item.base is not None:
        return item.base
    top = current()
    while top.parent is not None:
        top = top.parent
    return item if id(item) in top.argument_ids else None


class RuntimeList:
    """A list being appended to in a runtime loop: ``buffer[:count]`` are its items."""

    #: What it is, in a message about the kinds of values a branch gives.
    KIND = "a list grown at run time"

    def __init__(self, buffer: Tracer, count: Tracer, shared: Shared | None = None) -> None:
        self.buffer, self.count = buffer, count
        self.shared = shared if shared is not None else Shared()

    def tree_flatten(self) -> tuple[list[Any], Shared]:
        return [self.buffer, self.count], self.shared

    @classmethod
    def tree_unflatten(cls, meta: Shared, leaves: list[Any]) -> RuntimeList:
        buffer, count = leaves
        return cls(buffer, count, meta)

    def append(self, value: Any) -> RuntimeList:
        self.shared.add(value)
        self.buffer[self.count] = value
        self.count = self.count + 1
        return self

    def items(self) -> Tracer:
        """The items so far, laid out (a runtime length, at most the buffer's)."""
        used: Tracer = self.buffer[:self.count]
        used.list_like = True
        return self.shared.mark(used)

    def __getitem__(self, key: Any) -> Any:
        return self.items()[key]

    def __iter__(self) -> Any:
        return iter(self.items())


class _ReadWhileGrowing(Exception):
    """The loop body reads a list it appends to (``if not seen or v > seen[-1]``): read
    before any append, its items have no type yet; such a list is a box instead."""

    def __init__(self, stand_in: _FirstItem) -> None:
        super().__init__("a list read in the loop that grows it")
        self.stand_in = stand_in


class _FirstItem:
    """Stands for a list while its loop's body is traced aside: remembers what the
    first append gives it (the type every item will have). Reading it is
    :class:`_ReadWhileGrowing`."""

    def __init__(self) -> None:
        self.item: Any = None

    def tree_flatten(self) -> tuple[list[Any], _FirstItem]:
        return [], self

    @classmethod
    def tree_unflatten(cls, meta: _FirstItem, leaves: list[Any]) -> _FirstItem:
        return meta

    def append(self, value: Any) -> _FirstItem:
        if self.item is None:
            self.item = value
        return self

    def _read(self, *args: Any) -> Any:
        raise _ReadWhileGrowing(self)

    __getitem__ = __len__ = __iter__ = __bool__ = __contains__ = _read


class _Counting:
    """Stands for a list in a copy of its ``while`` loop that only counts the appends
    (:func:`counted_appends`)."""

    def __init__(self, count: Tracer) -> None:
        self.count = count

    def tree_flatten(self) -> tuple[list[Any], None]:
        return [self.count], None

    @classmethod
    def tree_unflatten(cls, meta: None, leaves: list[Any]) -> _Counting:
        return cls(leaves[0])

    def append(self, value: Any) -> _Counting:
        self.count = self.count + 1
        return self


def counted_appends(state: State, grown: list[int],
                    loop: Callable[[State], State]) -> dict[int, DimExpr] | None:
    """How many items a ``while`` loop appends to each list in ``grown``: ``loop`` run on
    ``state`` with counters for those lists, a copy of the loop the entry points run
    before the kernel (as a size computed from the arguments, :mod:`aotc.tracing.derived`).
    None when that copy cannot run there (it draws random numbers, or is inside another
    loop or a branch)."""
    counting = tuple(_Counting(as_tracer(np.int64(0))) if i in grown else v
                     for i, v in enumerate(state))
    try:
        final = loop(counting)
    except (TraceError, TypeError, AttributeError):  # (the body reads the list: a box)
        return None
    counts: dict[int, DimExpr] = {}
    for i in grown:
        count = derived_size(as_tracer(final[i].count), loops=True)
        if count is None:
            return None
        counts[i] = count
    return counts


def append(lst: Any, value: Any) -> Any:
    """``lst.append(value)`` as written in a kernel (the list is returned: it may be a
    new value when the list is traced)."""
    if hasattr(type(lst), "append") and not isinstance(lst, list):  # a box, a stand-in
        return lst.append(value)
    if isinstance(lst, Tracer):  # a list laid out by an earlier loop: one more row
        row = lax.reshape(lax.convert(as_tracer(value), lst.dtype), (DimExpr.const(1),)
                          + lst.aval.shape[1:])
        grown: Any = np.concatenate([lst, row])
        grown.list_like = True
        if (lst.base is None or lst.list_like) and lst.context is current():
            # The same list object grows: a function it was passed to appends to the
            # caller's list (in a loop body or branch, the rewritten assignment carries
            # it out instead). A list laid out by a loop is a view of its buffer: now
            # an array of its own.
            _grown_in_place(lst, grown)
            return lst
        return grown
    lst.append(value)
    return lst


def extend(lst: Any, values: Any) -> Any:
    """``lst.extend(values)`` as written in a kernel (the list is returned: a Python
    list given runtime items becomes a new list, laid out or grown at run time)."""
    if not isinstance(lst, list):  # a box, a laid-out list: its own extend
        lst.extend(values)
        return lst
    if is_box(values) or isinstance(values, BoxView):
        grown = values.listed()
        for value in reversed(lst):
            grown.insert(0, value)
        return grown
    if isinstance(values, (Tracer, RuntimeSeq, MaskedValue, RuntimeGenerator)) \
            and isinstance(sequence(values), RuntimeSeq):
        items = as_list(values)
        return pylists.concatenated(lst, items) if lst else items
    lst.extend(values)
    return lst


def _grown_in_place(lst: Tracer, grown: Tracer) -> None:
    """The list object ``lst`` becomes ``grown``, an array of its own (not a view of
    the buffer a loop laid it out in)."""
    lst.set_atom(grown.atom)
    lst.base = lst.window = None
    lst.list_like = True


#: The lists whose call site takes what a call passes back (``changed_by``, by the
#: list's id): the list itself until the call passes back a new value.
_CALL_SITES: dict[int, Any] = {}


def changed_by(call: Callable[[], Any], lst: Any, appends: int, how: str | None
               ) -> tuple[Any, Any]:
    """``call()``, a call of a function that changes ``lst`` in place (appends up to
    ``appends`` items, changes it ``how``: :mod:`.passed_back`): what it returns, and
    ``lst`` after it, or the new value the call passed back where ``lst`` itself could
    not take it."""
    key = id(lst)
    outer = _CALL_SITES.get(key)
    _CALL_SITES[key] = lst
    try:
        result = call()
        return result, _CALL_SITES[key]
    finally:
        if outer is None:
            del _CALL_SITES[key]
        else:
            _CALL_SITES[key] = outer


def pass_back(given: Any, last: Any) -> None:
    """A function appended to the list ``given`` it was given, and ``last`` is that
    variable's value at its ``return`` (a new value when a branch or loop carried it):
    the caller's list becomes ``last``, as Python's would have grown. Where ``given``
    cannot (a Python list that became an array of runtime length), the call site takes
    ``last`` instead (:func:`changed_by`)."""
    if given is last:
        return
    if isinstance(given, RuntimeList) and isinstance(last, RuntimeList):
        given.buffer, given.count = last.buffer, last.count  # (a list a loop grows)
    elif isinstance(given, Tracer) and given.list_like and isinstance(last, Tracer) \
            and given.context is current():
        _grown_in_place(given, last)  # as append() grows it in the same trace
    elif isinstance(given, list) and isinstance(last, list):
        given[:] = last
    elif id(given) in _CALL_SITES:
        _CALL_SITES[id(given)] = last
    else:
        raise current().error(
            "a function appends to a list it is given, on a path decided while the "
            "kernel runs (in a branch or loop), and the caller's list cannot grow there",
            hint="call the function as a statement where the list is made "
                 "(f(out, v), not g(f(out, v))), or return the items and append them there")


def appended_lists(state: State, names: Sequence[str], appends: dict[str, int]) -> list[int]:
    """The positions in ``state`` of the Python lists a loop appends to."""
    return [i for i, (v, n) in enumerate(zip(state, names, strict=True))
            if n in appends and isinstance(v, list)]


def grow_lists(state: State, names: Sequence[str], appends: dict[str, int],
               trip_count: Any, body: Callable[[State], State],
               counts: dict[int, DimExpr] | None = None) -> tuple[State, list[int]]:
    """``state`` with each Python list the loop appends to made a :class:`RuntimeList`
    with room for every append (``counts``: how many there are, if known; else the trip
    count times the appends in the body); also the positions of those lists in the
    state."""
    grown = appended_lists(state, names, appends)
    if not grown:
        return state, []
    trips = _trips(trip_count)
    assert trips is not None or counts is not None, "ungrowable() lists are boxed first"
    assert all(appends[names[i]] >= 0 for i in grown), "ungrowable() lists are boxed first"
    probes = {i: _FirstItem() for i in grown}
    leaves, structure = flatten(tuple(probes.get(i, v) for i, v in enumerate(state)))
    try:
        probe(body, [[v if v is UNDEFINED else as_tracer(v) for v in leaves]], [structure])
    except _ReadWhileGrowing as read:
        read_at = [i for i, p in probes.items() if p is read.stand_in]
        # (required: a list no box can hold is an error here, not the same read again)
        return grow_lists(boxing.boxed(state, body, read_at, required=True), names, appends,
                          trip_count, body, counts)
    out = list(state)
    for i in grown:
        item = probes[i].item
        if item is None:
            continue  # the body never appends (that path is not taken): keep the list
        dtype, shape = _item_type(item)
        initial = [lax.convert(as_tracer(v), dtype) for v in state[i]]
        if counts is not None:
            room = counts[i]
        else:
            assert trips is not None
            room = trips * appends[names[i]]
        capacity = DimExpr.const(len(initial)) + room
        buffer: Any = full_from_dims((capacity, *shape), 0, dtype)
        for k, v in enumerate(initial):
            buffer[k] = v
        out[i] = RuntimeList(buffer, as_tracer(np.int64(len(initial))), Shared(state[i]))
    return tuple(out), grown


def _item_type(item: Any) -> tuple[np.dtype, tuple[DimExpr, ...]]:
    """The dtype and shape of a list's item, read from what the loop body appended
    while it was traced aside (its tracers belong to that trace: only their types are
    read, never used); a tuple of numbers is a row."""
    if isinstance(item, (tuple, list)):
        parts = [_item_type(v) for v in item]
        if not parts or any(shape != parts[0][1] for _, shape in parts):
            raise current().error("a list appended to in a loop holds tuples of numbers "
                                  "(or of arrays of one shape)")
        dtype = np.result_type(*[d for d, _ in parts])
        return dtype, (DimExpr.const(len(item)), *parts[0][1])
    if isinstance(item, Tracer):
        outside = set(current().uppers())
        if any(bound_symbols(d) - outside for d in item.aval.shape):
            raise current().error(
                "a list appended to in a loop holds arrays of a size the loop body decides "
                "(an array chosen by a branch, or sliced at runtime bounds): its items "
                "are laid out as rows of one size, known before the loop",
                hint="append arrays of one size (the same array's rows, or np.resize), or "
                     "collect the values in one preallocated array")
        return item.dtype, tuple(item.aval.shape)
    value = np.asarray(item)
    return value.dtype, tuple(DimExpr.const(n) for n in value.shape)


def _trips(trip_count: Any) -> DimExpr | None:
    trips = trip_count.dim if isinstance(trip_count, Tracer) else \
        as_dim(int(trip_count)) if trip_count is not None else None
    if trips is None and isinstance(trip_count, Tracer):  # zip's min(len(x), len(y))
        trips = derived_size(trip_count) or bounded_size(trip_count)
    return trips


def ungrowable(state: State, names: Sequence[str], appends: dict[str, int], trip_count: Any,
               counts: dict[int, DimExpr] | None = None) -> list[int]:
    """The lists a loop appends to that no buffer planned before the kernel can hold:
    appended to in a nested loop, or in a loop of a trip count computed from array
    values (they become boxes, :mod:`.boxes`). In a loop of unknown trip count that is
    also a list an earlier loop grew (an array standing for a list: the merge of two
    sorted runs appends to one list in three loops)."""
    grown = appended_lists(state, names, appends)
    made = [i for i, (v, n) in enumerate(zip(state, names, strict=True))
            if n in appends and isinstance(v, Tracer) and v.list_like]
    if not (grown or made):
        return []  # (the trip count is not asked for: a derived one is a new size)
    unbounded = [i for i in grown if appends[names[i]] < 0]
    if _trips(trip_count) is None:
        return (grown if counts is None else unbounded) + made
    return unbounded


def laid_out(state: State, grown: list[int], names: Sequence[str]) -> State:
    """After the loop: its lists as the arrays of their items, and so a list it
    returned (``return out`` inside it: never appended to again)."""
    return tuple(v.items() if i in grown and isinstance(v, RuntimeList) else
                 _returned_items(v) if n == RET else v
                 for i, (v, n) in enumerate(zip(state, names, strict=True)))


def _returned_items(value: Any) -> Any:
    if isinstance(value, RuntimeList):
        return value.items()
    if isinstance(value, (tuple, list)):
        return sequence_of(type(value), [_returned_items(v) for v in value])
    return value
