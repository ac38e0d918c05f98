"""Arrays that stand for Python lists (``Tracer.list_like``): ``+`` and ``*`` as lists'.

A Python list a kernel builds at run time (``[0] * n``, a comprehension, a list of
numbers carried by a runtime loop and written at runtime indices) is an array, so its
items can be read and written at traced indices. Where Python's list operators mean
something else than NumPy's, they keep Python's meaning: ``a + b`` of two lists
concatenates, ``a * n`` repeats, and a list plus a number is Python's TypeError (a
build error: every run would raise it), never an elementwise sum. Its methods are a
list's (``pop``, ``insert``, ``remove``, ``index``...): one that changes the list makes
the new array and rebinds the Tracer to it, so every name of the list sees the change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from . import joining, sorting
from .creation import full_from_dims, iota


def _listish(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or (isinstance(value, Tracer) and value.list_like)


def _as_items(value: Any) -> Tracer:
    return value if isinstance(value, Tracer) else joining.array(list(value))


def _listed(value: Tracer) -> Tracer:
    value.list_like = True
    return value


def as_list_array(value: Any) -> Tracer:
    """A Python list (or an array already) as an array that stands for a list."""
    return _listed(_as_items(value))


def concatenated(first: Any, second: Any) -> Tracer:
    """``first + second`` of two lists (one laid out), or Python's TypeError."""
    if not (_listish(first) and _listish(second)):
        other = second if _listish(first) else first
        raise current().error(f'can only concatenate list (not "{type(other).__name__}") '
                              "to list (Python's TypeError)",
                              hint="use np.array(the_list) for elementwise arithmetic")
    return _listed(joining.concatenate((_as_items(first), _as_items(second))))


def _repeat(items: Any, count: Any) -> Tracer:
    if not (isinstance(count, int) or (isinstance(count, Tracer) and count.ndim == 0
            and count.dtype.kind in "iu" and not count.list_like)):
        raise current().error("can't multiply sequence by non-int (Python's TypeError)",
                              hint="use np.array(the_list) for elementwise arithmetic")
    values = _as_items(items)
    if isinstance(count, Tracer):
        count = count.dim if count.dim is not None else count
    return _listed(joining.tile(values, (count,) + (1,) * (values.ndim - 1)))


def list_operators(operators: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """``+``, ``*`` and their reflected and in-place forms: a list's where an operand
    stands for a Python list, else ``operators``' own."""
    def pick(name: str, as_list: Callable[[Any, Any], Tracer]) -> Callable[..., Any]:
        plain = operators[name]

        def op(self: Tracer, other: Any) -> Any:
            if self.list_like or (isinstance(other, Tracer) and other.list_like):
                return as_list(self, other)
            return plain(self, other)
        return op

    return {
        "__add__": pick("__add__", concatenated),
        "__radd__": pick("__radd__", lambda s, o: concatenated(o, s)),
        "__iadd__": pick("__iadd__", concatenated),
        "__mul__": pick("__mul__", _repeat),
        "__rmul__": pick("__rmul__", _repeat),
        "__imul__": pick("__imul__", _repeat),
    }


# -- list methods: a list laid out as an array changes in place (the Tracer rebinds) --

def _fail_where(cond: Any, error: str, message: str) -> None:
    lax.bind(raise_if_p, as_tracer(cond).atom, error=error, message=message)


def list_position(index: Any, n: Any, message: str) -> Tracer:
    """``index`` into ``n`` items as a list reads it: from the end when negative, with
    Python's IndexError (``message``) outside (lists laid out as arrays, runtime
    sequences and boxes all index so)."""
    i = lax.convert(as_tracer(index), np.dtype(np.int64))
    i = as_tracer(np.where(np.less(i, 0), np.add(i, n), i))
    _fail_where(np.logical_or(np.less(i, 0), np.greater_equal(i, n)), "IndexError", message)
    return i


def insert_position(index: Any, n: Any) -> Tracer:
    """Where ``insert(index, v)`` puts ``v`` among ``n`` items: Python clamps the index
    into ``[0, n]`` (from the end when negative), never an error."""
    i = lax.convert(as_tracer(index), np.dtype(np.int64))
    return as_tracer(np.where(np.less(i, 0), np.maximum(np.add(i, n), 0), np.minimum(i, n)))


def item(self: Tracer, index: Any) -> Any:
    """``lst[i]`` of an array standing for a list: Python's IndexError outside it."""
    return self[list_position(index, self.shape[0], "list index out of range")]


def sliced(self: Tracer, index: slice) -> Tracer:
    """``lst[a:b:c]`` of an array standing for a list: a new list, as Python's slice is
    (an array's would be a view, and ``+`` of two would add them elementwise)."""
    return _listed(lax.fresh(as_tracer(self[index])))


def _without(self: Tracer, i: Tracer) -> Tracer:
    """The items but item ``i``, in order."""
    k = iota(np.dtype(np.int64), (self.aval.shape[0] - 1,), 0)
    return _listed(as_tracer(self[np.add(k, np.greater_equal(k, i).astype(np.int64))]))


def _rebind(self: Tracer, value: Tracer) -> None:
    self.set_atom(value.atom)
    self.list_like = True


def delete_item(self: Tracer, index: Any) -> None:
    """``del lst[i]`` of an array standing for a list (NumPy's error for an array's)."""
    if not self.list_like or not self.ndim:
        raise current().error("cannot delete array elements",
                              hint="use np.delete(x, i), which returns a new array")
    if isinstance(index, slice):
        kept = full_from_dims(self.aval.shape[:1], True, np.dtype(np.bool_))
        kept[index] = False
        _rebind(self, as_tracer(self[kept]))
        return
    i = list_position(index, self.shape[0], "list assignment index out of range")
    _rebind(self, _without(self, i))


def _pop(self: Tracer, index: Any = -1) -> Any:
    _fail_where(np.equal(self.shape[0], 0), "IndexError", "pop from empty list")
    i = list_position(index, self.shape[0], "pop index out of range")
    item = self[i]
    _rebind(self, _without(self, i))
    return item


def _index(self: Tracer, value: Any) -> Tracer:
    same = np.equal(self, value)
    _fail_where(np.logical_not(np.any(same)), "ValueError", "value is not in list")
    return as_tracer(np.argmax(same))


def _remove(self: Tracer, value: Any) -> None:
    same = np.equal(self, value)
    _fail_where(np.logical_not(np.any(same)), "ValueError", "list.remove(x): x not in list")
    _rebind(self, _without(self, as_tracer(np.argmax(same))))


def _insert(self: Tracer, index: Any, value: Any) -> None:
    n = self.shape[0]
    i = insert_position(index, n)
    row = lax.convert(as_tracer(value), self.dtype)
    grown = joining.concatenate((self, lax.reshape(row, (DimExpr.const(1),))))
    k = iota(np.dtype(np.int64), (self.aval.shape[0] + 1,), 0)
    source = np.where(np.less(k, i), k, np.where(np.equal(k, i), n, np.subtract(k, 1)))
    _rebind(self, as_tracer(grown[source]))


def _extend(self: Tracer, values: Any) -> None:
    _rebind(self, concatenated(self, values))


#: Python list methods of an array standing for a list (numpy_api.methods asks).
def _sort(self: Tracer, *, key: Any = None, reverse: bool = False) -> None:
    """``lst.sort()``: Python's stable sort of the items (tuples field by field), by
    ``key`` when given (an ndarray's ``sort`` would sort each tuple's fields)."""
    keys = None
    if key is not None:
        def step(i: Any, _: Any) -> Any:
            return i + 1, key(self[i])
        _, keys = lax.scan(step, as_tracer(np.int64(0)), None, length=self.shape[0])
        if isinstance(keys, (tuple, list)):  # a tuple key: its fields as rows
            keys = as_tracer(np.stack([as_tracer(k) for k in keys], axis=1))
    _rebind(self, as_tracer(self[sorting.list_order(self, keys, bool(reverse))]))


LIST_METHODS: dict[str, Callable[..., Any]] = {
    "sort": _sort,
    "pop": _pop, "index": _index, "remove": _remove, "insert": _insert, "extend": _extend,
    "popleft": lambda self: _pop(self, 0),  # (a collections.deque laid out as an array)
    "appendleft": lambda self, value: _insert(self, 0, value),
    "count": lambda self, value: as_tracer(np.count_nonzero(np.equal(self, value))),
    "copy": lambda self: _listed(lax.fresh(self)),
    "reverse": lambda self: _rebind(self, as_tracer(self[::-1])),
    "clear": lambda self: _rebind(self, as_tracer(self[:0])),
}
