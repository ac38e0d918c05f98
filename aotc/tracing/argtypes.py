"""The signature a call's arguments have: what ``aotc.jit`` compiles an unannotated
function for, as Numba's ``@njit`` specializes on its first call's types.

An array is its dtype and rank (any size, any strides: ``f8[:, :]``); a Python number
the weak Python type (``float``), as the kernel's NumPy semantics treat it; a NumPy
scalar or 0-d array its own dtype (``f4``); a list the array NumPy makes of it, and a
tuple that array with its length fixed (``i8[2]``), as Numba's tuple types fix it.
Parameters the call leaves to their defaults after the last one given are build-time
constants, as in ``@aotc.export`` strings; one left out before it takes its default's
type. The text is a signature string ``@aotc.export`` reads back, so a prototype's
compiled signatures paste into the source that ships.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

#: Python scalar types, spelled as signature strings spell them (weak, as in NumPy 2).
_PYTHON = ((bool, "bool"), (int, "int"), (float, "float"), (complex, "complex"))
#: The dtypes a kernel takes, in Numba's codes (``f8`` is float64).
CODES = {np.dtype(c): c for c in ("b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
                                  "f4", "f8", "c8", "c16")}


def type_text(value: Any, name: str) -> str:
    """The signature text of one argument (TypeError for what no kernel takes)."""
    if isinstance(value, str):  # a string that selects (aotc.packaging.string_choices)
        return "str"
    fixed = isinstance(value, tuple)  # (a tuple's length is part of its type)
    if not isinstance(value, np.generic | np.ndarray):
        for python, text in _PYTHON:
            if isinstance(value, python):
                return text
        if isinstance(value, list | tuple):
            value = np.asarray(value)
    if isinstance(value, np.generic | np.ndarray):
        code = CODES.get(value.dtype.newbyteorder("="))
        if code is not None:
            axes = [":"] * value.ndim
            if fixed and axes:
                axes[0] = str(np.shape(value)[0])
            return code + (f"[{', '.join(axes)}]" if axes else "")
        what = f"dtype {value.dtype}"
    else:
        what = type(value).__name__
    raise TypeError(f"argument '{name}' of {what}: a compiled kernel takes arrays and "
                    f"scalars of {', '.join(CODES.values())}, Python numbers and str")


def signature_of(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
                 ) -> str:
    """The signature string of a call ``fn(*args, **kwargs)``."""
    spec = inspect.signature(fn)
    given = spec.bind(*args, **kwargs).arguments
    names = list(spec.parameters)
    count = max((names.index(n) + 1 for n in given), default=0)
    texts = [type_text(given[n] if n in given else spec.parameters[n].default, n)
             for n in names[:count]]
    return f"({', '.join(texts)})"
