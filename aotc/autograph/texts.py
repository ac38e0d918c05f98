"""Strings chosen at run time: ``label = "even" if n % 2 == 0 else "odd"``.

Strings are made when the kernel is built, but which one a path gives can depend on
runtime values. A :class:`Text` is that choice: one of a few constant strings, by an
index the kernel computes. A conditional whose branches give a variable different
strings (:func:`aotc.autograph.statements._cond`) makes each branch's string a Text over
the strings of both, so the conditional carries an integer. A kernel may return it (the
wrapper picks the string by the index: :func:`aotc.tracing.kernel._tree`) and compare it
with a string. Strings formatted from runtime values are :mod:`.formatted`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import CREATION
from ..tracing.tracer import Tracer, as_tracer


class Text:
    """``options[index]``: a string among ``options``, ``index`` a runtime int64."""

    def __init__(self, index: Any, options: tuple[str, ...]) -> None:
        self.index, self.options = index, options

    @staticmethod
    def of(value: str | Text, options: tuple[str, ...]) -> Text:
        """``value`` (a string, or a Text over some of ``options``) as a Text over all."""
        if isinstance(value, str):
            return Text(as_tracer(np.int64(options.index(value))), options)
        if value.options == options:
            return value
        where = CREATION[np.array]([options.index(o) for o in value.options])
        return Text(where[value.index], options)

    def tree_flatten(self) -> tuple[list[Any], tuple[str, ...]]:
        return [self.index], self.options

    @classmethod
    def tree_unflatten(cls, options: tuple[str, ...], leaves: list[Any]) -> Text:
        return cls(leaves[0], options)

    def __eq__(self, other: object) -> Any:
        if isinstance(other, Text):
            both = union(self.options, other.options)
            return np.equal(Text.of(self, both).index, Text.of(other, both).index)
        if not isinstance(other, str):
            return False
        if other not in self.options:
            return as_tracer(np.bool_(False))
        return np.equal(self.index, self.options.index(other))

    def __ne__(self, other: object) -> Any:
        same = self.__eq__(other)
        return np.logical_not(same) if isinstance(same, Tracer) else not same

    __hash__ = None  # type: ignore[assignment]


#: Where a string is in a value: the item indices down nested tuples and lists.
Path = tuple[int, ...]


def strings_in(value: Any, path: Path = ()) -> dict[Path, tuple[str, ...]]:
    """The strings (and Texts) in ``value`` and the tuples and lists it nests, by path,
    with the strings each may be."""
    found = options_of(value)
    if found is not None:
        return {path: found}
    if isinstance(value, (tuple, list)):
        return {p: o for k, v in enumerate(value) for p, o in strings_in(v, (*path, k)).items()}
    return {}


def replaced(value: Any, path: Path, make: Any) -> Any:
    """``value`` with the item at ``path`` replaced by ``make(item)``."""
    if not path:
        return make(value)
    items = list(value)
    items[path[0]] = replaced(items[path[0]], path[1:], make)
    return type(value)(items)


def options_of(value: Any) -> tuple[str, ...] | None:
    """The strings a value may be, if it is a string or a Text."""
    if isinstance(value, str):
        return (value,)
    return value.options if isinstance(value, Text) else None


def union(*choices: tuple[str, ...]) -> tuple[str, ...]:
    """Every string of ``choices``, in the order first met."""
    return tuple(dict.fromkeys(o for options in choices for o in options))
