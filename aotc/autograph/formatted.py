"""Strings formatted from runtime values: ``str(n)``, ``f"{x:.3f}"``, ``"%d" % k``.

A compiled kernel has no string type, but a string it makes from its numbers is only
ever *read* by the caller: returned, or raised in an exception. So such a string is
kept as a :class:`Formatted`, the Python expression that makes it from the kernel's
values (``str(@0@)[0:10]``, ``'k=' + format(@0@, '.3f')``). The caller's side of the
compiled module evaluates it with the values the kernel returns: the text is Python's
own, formatting rules, rounding and all. Concatenation, slicing, indexing and the
string methods that give strings (``upper``, ``zfill``, ``replace``...) extend the
expression; what needs the text inside the kernel (``len``, comparisons, iteration)
is a located error. An exception's message is made the same way
(:func:`as_message`), with at most four runtime values (:mod:`aotc.tracing.messages`).

Inside ``raise``/``assert`` messages, and on build-time values, formatting is Python's
own: the tracer formats as a message token there (:meth:`Tracer.__format__`).
"""

from __future__ import annotations

import builtins
from typing import Any, cast

from ..tracing.tracer import MESSAGE_VALUES, Tracer, current, python_number
from .texts import Text

#: Pieces of a Python expression: source text, or a runtime value read in its place.
Piece = str | Tracer
_CASTS = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}
#: ``str`` methods whose result is a string: they extend the expression.
_STRING_METHODS = frozenset({
    "capitalize", "casefold", "center", "expandtabs", "format", "join", "ljust", "lower",
    "lstrip", "removeprefix", "removesuffix", "replace", "rjust", "rstrip", "strip",
    "swapcase", "title", "upper", "zfill"})


class Formatted:
    """A string the caller makes from the kernel's values: the expression's pieces."""

    def __init__(self, pieces: tuple[Piece, ...]) -> None:
        self.pieces = pieces

    # -- made from Python operations ---------------------------------------------------------
    def __add__(self, other: Any) -> Formatted:
        return Formatted(("(", *_code(self), " + ", *_code(other), ")"))

    def __radd__(self, other: Any) -> Formatted:
        return Formatted(("(", *_code(other), " + ", *_code(self), ")"))

    def __mul__(self, count: Any) -> Formatted:
        return Formatted(("(", *_code(self), " * ", *_code(count), ")"))

    __rmul__ = __mul__

    def __getitem__(self, index: Any) -> Formatted:
        return Formatted(("(", *_code(self), ")[", *_code(index), "]"))

    def __getattr__(self, name: str) -> Any:
        if name not in _STRING_METHODS:
            if name.startswith("_") or not hasattr(str, name):
                raise AttributeError(name)
            raise _needs_text(f"str.{name}")
        return lambda *args, **kwargs: Formatted(
            ("(", *_code(self), f").{name}(", *_arguments(args, kwargs), ")"))

    # -- what needs the text itself ------------------------------------------------------------
    def __len__(self) -> int:
        raise _needs_text("len()")

    def __bool__(self) -> bool:
        raise _needs_text("its truth value")

    def __iter__(self) -> Any:
        raise _needs_text("iterating over it")

    def __eq__(self, other: object) -> Any:
        raise _needs_text("comparing it")

    __hash__ = None  # type: ignore[assignment]

    def __contains__(self, item: Any) -> bool:
        raise _needs_text("'in'")

    def __str__(self) -> str:
        """In an exception's message (``f"bad {s}"``, ``"bad %s" % s``), its text with
        message tokens for the runtime values; elsewhere the kernel cannot read it."""
        if MESSAGE_VALUES.get() is None:
            raise _needs_text("str() outside a kernel's converted code")
        return cast(str, as_message(self))

    def __format__(self, spec: str) -> str:
        if spec:  # a width counts the message's tokens, not the text they become
            raise _needs_text(f"the format spec {spec!r}")
        return str(self)

    def __repr__(self) -> str:
        if MESSAGE_VALUES.get() is None:
            return f"Formatted({''.join(p if isinstance(p, str) else '@' for p in self.pieces)})"
        return repr(str(self))  # (numbers' text has no quotes to escape)

    def code(self, leaves: list[Any]) -> str:
        """The expression, each runtime value read as ``@k@``: leaf ``k`` of ``leaves``
        (to which they are appended, as :func:`aotc.tracing.kernel._tree` plants them)."""
        def leaf(value: Tracer) -> str:
            leaves.append(value)
            return f"@{len(leaves) - 1}@"
        return "".join(p if isinstance(p, str) else _read(p, leaf) for p in self.pieces)


def _read(value: Tracer, leaf: Any) -> str:
    """A runtime value read as the Python number it stands for, as the source had it
    (``str(n)`` of a Python int is ``int``'s, not ``np.int64``'s ``repr``)."""
    cast = _CASTS.get(value.dtype.kind) if value.ndim == 0 else None
    flag = python_number(value) if cast else False
    if flag is True:
        return f"{cast}({leaf(value)})"
    if isinstance(flag, Tracer):  # a Python number on some paths only
        here = leaf(value)
        return f"({cast}({here}) if {leaf(flag)} else {here})"
    return str(leaf(value))


def _needs_text(what: str) -> Exception:
    return current().error(
        f"{what} of a string formatted from runtime values: aotc makes such a string in the "
        "caller, after the kernel returns, so the kernel cannot read it",
        hint="return the string, or raise an exception with it; compute with the numbers "
             "themselves inside the kernel")


def _code(value: Any) -> tuple[Piece, ...]:
    """``value`` as expression pieces: a Python value's ``repr``, a runtime value, a
    Formatted string's own pieces, a string chosen at run time."""
    if isinstance(value, Formatted):
        return value.pieces
    if isinstance(value, Text):
        return (f"{value.options!r}[", value.index, "]")
    if isinstance(value, Tracer):
        return (value,)
    if isinstance(value, slice):
        return ("slice(", *_joined((value.start, value.stop, value.step)), ")")
    if isinstance(value, tuple):
        return ("(", *_joined(value), ",)" if len(value) == 1 else ")")
    if isinstance(value, list):
        return ("[", *_joined(value), "]")
    if isinstance(value, _KeyWord):
        return (f"{value.key}=", *_code(value.value))
    return (repr(value),)


def _joined(values: Any) -> tuple[Piece, ...]:
    pieces: list[Piece] = []
    for i, v in enumerate(values):
        pieces += ([", "] if i else []) + list(_code(v))
    return tuple(pieces)


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Piece, ...]:
    """A call's arguments as pieces: ``a, b, key=c``."""
    named = [_KeyWord(k, v) for k, v in kwargs.items()]
    return _joined((*args, *named))


class _KeyWord:
    """``key=value`` in a call's arguments (:func:`_arguments`)."""

    def __init__(self, key: str, value: Any) -> None:
        self.key, self.value = key, value


def _runtime(*values: Any) -> bool:
    """Whether formatting ``values`` makes a Formatted string: some are runtime values,
    and no exception's message is being made (that one formats its tokens itself)."""
    return MESSAGE_VALUES.get() is None and any(
        isinstance(v, (Tracer, Formatted, Text)) for v in values)


def called(name: str, *args: Any) -> Formatted:
    """``name(*args)`` (a builtin) as a Formatted string."""
    return Formatted((f"{name}(", *_joined(args), ")"))


def fstring(*parts: Any) -> Any:
    """An f-string: its constant parts, and ``(value, conversion, spec)`` for each
    replacement field (conversion as in ``ast.FormattedValue``: -1, or ``ord('r')``...)."""
    fields = [p for p in parts if isinstance(p, tuple)]
    if not _runtime(*(v for field in fields for v in (field[0], field[2]))):
        return "".join(p if isinstance(p, str) else _field(*p) for p in parts)
    pieces: list[Piece] = ["''.join(("]
    for part in parts:
        if isinstance(part, str):
            pieces += [repr(part), ", "]
            continue
        value, conversion, spec = part
        shown = called(_CONVERSIONS[conversion], value) if conversion != -1 else value
        pieces += ["format(", *_code(shown), ", ", *_code(spec or ""), "), "]
    return Formatted((*pieces, "))"))


_CONVERSIONS = {ord("s"): "str", ord("r"): "repr", ord("a"): "ascii"}


def _field(value: Any, conversion: int, spec: Any) -> str:
    if conversion != -1:
        value = getattr(builtins, _CONVERSIONS[conversion])(value)
    return format(value, spec or "")


def _stand_in(name: str) -> Any:
    original = getattr(builtins, name)

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        if kwargs or not _runtime(*args):
            return original(*args, **kwargs)
        return called(name, *args)
    stand_in.__name__ = name
    return stand_in


def percent(template: str, args: Any) -> Formatted:
    """``template % args`` with runtime values in ``args``."""
    return Formatted((repr(template), " % ", *_code(args)))


def method(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``"...".format(x)`` and the other string methods of a build-time string, given
    runtime values: a Formatted string. None where this is not such a call."""
    owner = getattr(fn, "__self__", None)
    if not isinstance(owner, str) or getattr(fn, "__name__", "") not in _STRING_METHODS \
            or not _runtime(*args, *kwargs.values()):
        return None
    return Formatted((f"{owner!r}.{fn.__name__}(", *_arguments(args, kwargs), ")"))


def as_message(value: Any) -> Any:
    """An exception's argument: a Formatted string's text with message tokens for its
    runtime values (made in the message's context, as an f-string there would be)."""
    if not isinstance(value, Formatted):
        return value
    names: dict[str, Tracer] = {}

    def leaf(v: Tracer) -> str:  # the tracer itself: it formats as a message token
        names[f"_leaf{len(names)}"] = v
        return f"_leaf{len(names) - 1}"
    code = "".join(p if isinstance(p, str) else leaf(p) for p in value.pieces)
    return eval(code, names)  # noqa: S307 - our own expression


#: ``str(x)``, ``repr(x)``, ``format(x, spec)``, ``ascii(x)`` of runtime values.
BUILTINS = {getattr(builtins, name): _stand_in(name)
            for name in ("str", "repr", "format", "ascii")}
