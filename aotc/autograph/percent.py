"""``"n=%d" % n`` with a runtime ``n``: %-formatting of traced values in messages.

``str % args`` calls ``str.__mod__``, which needs concrete numbers, so converted code
calls :func:`percent` instead. On build-time values it is Python's ``%`` exactly; a traced
value's conversion is rewritten into the format spec it stands for (``%5.2f`` ->
``format(v, '>5.2f')``), which a tracer formats as a runtime token, as f-strings do
(:mod:`aotc.tracing.messages`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..tracing.tracer import MESSAGE_VALUES, Tracer
from . import formatted

#: ``%[(key)][flags][width][.precision][length]type``, or ``%%``.
_CONVERSION = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?"
    r"(?:\.(?P<precision>\*|\d+))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])")
_INTEGER_TYPES = frozenset("diu")


def percent(template: Any, args: Any) -> Any:
    """``template % args``, with traced values formatted at run time."""
    if not isinstance(template, str) or not _holds_tracer(args):
        return template % args
    if MESSAGE_VALUES.get() is None:  # a string the caller makes, not a message's tokens
        return formatted.percent(template, args)
    items = args if isinstance(args, tuple) else (args,)
    mapping = args if isinstance(args, Mapping) else None
    position = 0
    pieces: list[str] = []
    last = 0
    for match in _CONVERSION.finditer(template):
        pieces.append(template[last:match.start()])
        last = match.end()
        if match["type"] == "%":
            pieces.append("%")
            continue
        if "*" in (match["width"] or "", match["precision"] or ""):
            return template % args  # Python's own error, or its result
        if match["key"] is not None and mapping is not None:
            value = mapping[match["key"]]
        else:
            if position >= len(items):
                raise TypeError("not enough arguments for format string")
            value = items[position]
            position += 1
        pieces.append(_one(match, value))
    if mapping is None and position < len(items):
        raise TypeError("not all arguments converted during string formatting")
    pieces.append(template[last:])
    return "".join(pieces)


def _holds_tracer(args: Any) -> bool:
    values = args.values() if isinstance(args, Mapping) else \
        args if isinstance(args, tuple) else (args,)
    return any(isinstance(v, (Tracer, formatted.Formatted)) for v in values)


def _one(match: re.Match[str], value: Any) -> str:
    """One conversion of one value."""
    if not isinstance(value, Tracer):
        conversion = match.group(0) if match["key"] is None else \
            "%" + match.group(0)[match.end("key") + 1 - match.start():]
        return conversion % (value,)
    kind = match["type"]
    if kind in "rsa" and not match["width"] and match["precision"] is None:
        return repr(value) if kind == "r" else str(value)
    if kind in _INTEGER_TYPES and value.dtype.kind == "f":
        value = value.astype(np.int64)  # '%d' % 2.5 == '2'
    return format(value, _spec(match))


def _spec(match: re.Match[str]) -> str:
    """The ``format()`` spec a %-conversion stands for."""
    flags = match["flags"]
    kind = match["type"]
    align = "<" if "-" in flags else ">"
    sign = "+" if "+" in flags else " " if " " in flags else ""
    alternate = "#" if "#" in flags and kind in "oxXeEfFgG" else ""
    zero = "0" if "0" in flags and "-" not in flags and kind not in "rsa" else ""
    precision = "" if match["precision"] is None else "." + match["precision"]
    code = "d" if kind in _INTEGER_TYPES else "" if kind in "rsa" else kind
    if zero:
        return f"{sign}{alternate}0{match['width'] or ''}{precision}{code}"
    return f"{align}{sign}{alternate}{match['width'] or ''}{precision}{code}"
