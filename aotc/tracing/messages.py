"""Runtime values in error messages: ``raise ValueError(f"n={n} > {len(x)}")``.

A message made while tracing holds a token for each of (at most four) runtime values:
``{lhs}``, ``{rhs}``, ``{v2}``, ``{v3}`` (a size check's two sides are the first two,
plain int64s). A value formatted by the kernel's code carries its dtype's character
(``!d`` float64: the int64 slot holds the double's bits), an ``r`` for ``repr`` and the
format spec the f-string gave: ``{lhs!d:.3f}``, ``{rhs!lr}``. The value is rebuilt as
that NumPy scalar and formatted as Python would format it.
"""

from __future__ import annotations

import re
import struct
from typing import Any

import numpy as np

#: The tokens' names, in the order of the values.
SLOTS = ("lhs", "rhs", "v2", "v3")
TOKEN = re.compile(r"\{(" + "|".join(SLOTS) + r")(?:!([a-zA-Z?])(r?))?(:[^{}]*)?\}")


def token(slot: int, dtype: np.dtype, spec: str, as_repr: bool = False) -> str:
    """The token for value ``slot`` of ``dtype``, formatted with ``spec`` (or repr)."""
    return "{" + SLOTS[slot] + "!" + dtype.char + ("r" if as_repr else "") \
        + (":" + spec if spec else "") + "}"


def fill(message: str, *values: Any, bits: bool = True) -> str:
    """``message`` with its tokens replaced by the values (``bits``: floats come as the
    int64 bits of a double, as the compiled kernel leaves them)."""
    def one(match: re.Match[str]) -> str:
        value = values[SLOTS.index(match.group(1))]
        if match.group(2) is None:
            return format(int(value), (match.group(4) or ":")[1:])
        dtype = np.dtype(match.group(2))
        if dtype.kind == "f" and bits:
            value = struct.unpack("<d", struct.pack("<q", int(value)))[0]
        scalar = dtype.type(value)
        return repr(scalar) if match.group(3) else format(scalar, (match.group(4) or ":")[1:])
    return TOKEN.sub(one, message)
