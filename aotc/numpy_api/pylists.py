"""Arrays that stand for Python lists (``Tracer.list_like``): ``+`` and ``*`` as lists'.

A Python list a kernel builds at run time (``[0] * n``, a comprehension, a list of
numbers carried by a runtime loop and written at runtime indices) is an array, so its
items can be read and written at traced indices. Where Python's list operators mean
something else than NumPy's, they keep Python's meaning: ``a + b`` of two lists
concatenates, ``a * n`` repeats, and a list plus a number is Python's TypeError (a
build error: every run would raise it), never an elementwise sum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tracing.tracer import Tracer, current
from . import joining


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


def _concatenate(first: Any, second: Any) -> Tracer:
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
        "__add__": pick("__add__", _concatenate),
        "__radd__": pick("__radd__", lambda s, o: _concatenate(o, s)),
        "__iadd__": pick("__iadd__", _concatenate),
        "__mul__": pick("__mul__", _repeat),
        "__rmul__": pick("__rmul__", _repeat),
        "__imul__": pick("__imul__", _repeat),
    }
