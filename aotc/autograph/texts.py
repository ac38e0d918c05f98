"""Strings and functions chosen at run time: ``label = "even" if n % 2 == 0 else "odd"``,
``f = np.sin if c else np.cos``.

Strings and functions are made when the kernel is built, but which one a path gives
can depend on runtime values. A :class:`Text` is that choice: one of a few constants,
by an index the kernel computes. A conditional whose branches give a variable different
constants (:func:`aotc.autograph.conditionals._cond`) makes each branch's a Text over those
of both, so the conditional carries an integer. A kernel may return a string chosen so
(the wrapper picks the string by the index: :func:`aotc.tracing.kernel._tree`) and
compare it with a string; calling a function chosen so calls the chosen one (a switch
over them, whose results must agree in type, as a conditional's do). Strings formatted
from runtime values are :mod:`.formatted`'s.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api import CREATION
from ..tracing.bodies import sequence_of
from ..tracing.tracer import Tracer, as_tracer, current


def is_constant(value: Any) -> bool:
    """A string or a function: a constant of the build, which a Text can choose among."""
    return isinstance(value, (str, types.FunctionType, types.BuiltinFunctionType, np.ufunc))


#: One function object per function the kernel's code defines, by its code, defaults
#: and closure (see :func:`canonical`); held while a Text holds it, not for the process.
_FUNCTIONS: weakref.WeakValueDictionary[Any, types.FunctionType] = \
    weakref.WeakValueDictionary()


def canonical(value: Any) -> Any:
    """``value``, or for a function defined while tracing (a lambda in a branch, made
    anew at each trace of it) the one object standing for all those equal to it."""
    if not isinstance(value, types.FunctionType):
        return value
    cells = tuple(cell.cell_contents for cell in value.__closure__ or ())
    if any(isinstance(c, Tracer) for c in cells):
        raise current().error(
            "a function chosen at run time reads values the kernel computes (its "
            "closure): which it reads would depend on the path",
            hint="define it before the branch, passing those values as arguments")
    key = (value.__code__, *map(_hashable, value.__defaults__ or ()), None,
           *map(_hashable, cells))
    return _FUNCTIONS.setdefault(key, value)


def _hashable(value: Any) -> Any:
    """``value`` if it is hashable, else its identity (an array a closure reads)."""
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value


class Text:
    """``options[index]``: a string (or function) among ``options``, ``index`` a runtime
    int64."""

    def __init__(self, index: Any, options: tuple[Any, ...]) -> None:
        self.index, self.options = index, options

    def called(self, call: Callable[..., Any], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
        """``options[index](*args, **kwargs)``, each option called by ``call``."""
        if any(isinstance(o, str) for o in self.options):
            raise current().error("'str' object is not callable")
        return lax.switch(self.index, [lambda f=f: call(f, *args, **kwargs)
                                       for f in self.options])

    @staticmethod
    def of(value: Any, options: tuple[Any, ...]) -> Text:
        """``value`` (a constant, or a Text over some of ``options``) as a Text over all."""
        if not isinstance(value, Text):
            return Text(as_tracer(np.int64(options.index(canonical(value)))), options)
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
    return sequence_of(type(value), items)


def options_of(value: Any) -> tuple[Any, ...] | None:
    """The constants a value may be, if it is a string, a function or a Text."""
    if is_constant(value):
        return (canonical(value),)
    return value.options if isinstance(value, Text) else None


def union(*choices: tuple[Any, ...]) -> tuple[Any, ...]:
    """Every constant of ``choices``, in the order first met."""
    return tuple(dict.fromkeys(o for options in choices for o in options))


def as_texts(state: Any) -> Any:
    """``state`` with each string (and function) a :class:`Text` of that one constant."""
    for path, options in strings_in(state).items():
        state = replaced(state, path, lambda v, o=options: Text.of(v, o))
    return state
