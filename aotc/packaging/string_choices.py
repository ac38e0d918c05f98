"""``str`` parameters: one compiled function per string the module can select with them.

SciPy's Pythran kernels take a method or kernel name: ``_build_system(y, d, smoothing,
kernel, ...)`` looks ``kernel`` up in ``_NAME_TO_FUNC``, ``siegelslopes(y, x, method)``
branches on ``method == "separate"``. A string has no fixed meaning in compiled code,
but such a parameter only selects. So the function is compiled once per string it can
select, the string a build-time constant there (the dict lookup and the branch happen
while it is built), and once more with a stand-in for any other string, which gives
Python's answer for it: the ``else`` branch, or the ``KeyError``/``ValueError`` the
code raises, its message showing the string passed (``_string_call`` in the module's
runtime puts it back in place of the stand-in).

The strings are those the module compares a name equal to the parameter's with
(``method == "separate"``, ``kind in ("a", "b")``), and the keys of module-level dicts
it indexes with that name; any compared string or dict key when there are none of
those. The exported function picks the compiled function by the argument's value; a
string whose function did not build gets a ``ValueError`` naming why.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import SignatureError
from ..types import Signature

#: The text of the stand-in (``_string_call`` in templates/runtime.py replaces it, in
#: messages and in results, with the string passed).
STAND_IN_TEXT = "\x00aotc-str\x00"
#: What a stand-in may do: compare equal (a branch, ``in``, a dict lookup), be hashed,
#: be shown (a message, an f-string) and be joined to other text (``s + "!"``, ``s * 2``,
#: still a stand-in): each gives Python's answer once the string passed replaces the
#: stand-in's text.
_TEXT_FREE = frozenset({"__eq__", "__ne__", "__hash__", "__str__", "__repr__",
                        "__format__", "__class__", "__init__", "__new__",
                        "__getattribute__", "__reduce__", "__reduce_ex__", "__getnewargs__",
                        "__sizeof__", "__dir__", "__init_subclass__", "__subclasshook__"})


class _StandIn(str):
    """The string traced for strings the kernel does not compare with: any operation
    that reads its text (``s.lower()``, ``len(s)``, ``s[0]``, ``s < t``) is a located
    error, since the compiled function for other strings cannot know it; that function
    then does not build, and calls with such strings raise ValueError naming why."""

    __slots__ = ()

    def __add__(self, other: str) -> _StandIn:
        return _StandIn(str.__add__(self, other))

    def __radd__(self, other: str) -> _StandIn:
        return _StandIn(str.__add__(other, self))

    def __mul__(self, times: Any) -> _StandIn:
        return _StandIn(str.__mul__(self, times))

    __rmul__ = __mul__


def _reads_text(name: str) -> Any:
    def refuse(self: str, *args: Any, **kwargs: Any) -> Any:
        from ..tracing.tracer import current, tracing_now

        if not tracing_now():  # the build's own use of it (a table, a message)
            return getattr(str, name)(self, *args, **kwargs)
        raise current().error(
            f"the kernel reads the text of a str parameter (str.{name}): compiled code knows "
            "a str parameter only as one of the strings the kernel compares it with",
            hint="compare it with == (or look it up in a dict) and branch on that")
    refuse.__name__ = name
    return refuse


for _name in dir(str):
    if _name not in _TEXT_FREE and _name not in vars(_StandIn) \
            and callable(getattr(str, _name)):
        setattr(_StandIn, _name, _reads_text(_name))

#: What the function is traced with for strings it does not compare.
STAND_IN = _StandIn(STAND_IN_TEXT)
#: At most this many strings get a compiled function each.
MOST_CHOICES = 32


@dataclass(frozen=True)
class Choices:
    """An exported function's ``str`` parameter: where it is and what it selects."""

    position: int
    param: str
    values: tuple[str, ...]  #: each compiled as a constant; then the stand-in


def string_position(signatures: Sequence[Signature]) -> int | None:
    """Where the ``str`` parameter is (the same in every overload), or None."""
    found = {tuple(i for i, p in enumerate(s.params) if p.is_str)
             for s in signatures}
    if found == {()}:
        return None
    if len(found) != 1 or len(next(iter(found))) != 1:
        raise SignatureError("a kernel takes at most one str parameter, at the same place "
                             "in every signature")
    return next(iter(found))[0]


def choices(fn: Callable[..., Any], position: int) -> Choices:
    """The strings ``fn``'s parameter at ``position`` can select (see the module doc)."""
    param = list(inspect.signature(fn).parameters)[position]
    try:
        path = inspect.getsourcefile(getattr(fn, "__aotc_unchecked__", fn))
        tree = ast.parse(Path(path or "").read_text())
    except (OSError, TypeError, SyntaxError):
        return Choices(position, param, ())
    named, every = _strings(tree, param)
    values = named or every
    return Choices(position, param, tuple(dict.fromkeys(values))[:MOST_CHOICES])


def _strings(tree: ast.Module, param: str) -> tuple[list[str], list[str]]:
    """Strings compared with or looked up by a name ``param`` (first), and every string
    compared or used as a module-level dict's key (second)."""
    dicts = {t.id: [k.value for k in node.value.keys
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)]
             for node in tree.body if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Dict)
             for t in node.targets if isinstance(t, ast.Name)}
    named: list[str] = []
    every = [k for keys in dicts.values() for k in keys]
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            found = [s for o in operands for s in _constants(o)]
            every += found
            if any(isinstance(o, ast.Name) and o.id == param for o in operands):
                named += found
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and isinstance(node.slice, ast.Name) and node.slice.id == param:
            named += dicts.get(node.value.id, [])
    return named, every


def _constants(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _constants(e)]
    return []


class Bound:
    """``fn`` with its ``str`` parameter fixed to ``value``: what the build traces (its
    signatures without that parameter, the string a build-time constant)."""

    def __init__(self, fn: Callable[..., Any], where: Choices, value: str) -> None:
        from ..autograph import convert

        self._fn, self._convert, self._where, self._value = fn, convert, where, value
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        spec = inspect.signature(fn)
        params = [p for p in spec.parameters.values() if p.name != where.param]
        self.__signature__ = spec.replace(parameters=params)
        info = fn.__aotc_export__  # type: ignore[attr-defined]
        self.__aotc_export__ = replace(info, signatures=tuple(
            replace(s, params=s.params[:where.position] + s.params[where.position + 1:])
            for s in info.signatures))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs[self._where.param] = self._value
        return self._convert(self._fn)(*args, **kwargs)


def bound_variants(fn: Callable[..., Any], where: Choices) -> list[tuple[str, Bound]]:
    """One traceable function per string, the stand-in last."""
    return [(v, Bound(fn, where, v)) for v in (*where.values, STAND_IN)]

