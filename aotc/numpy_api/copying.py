"""``np.copyto(dst, src, casting='same_kind', where=True)``: a write into ``dst``.

``src`` is checked against NumPy's ``casting`` rule, cast to ``dst``'s dtype and
broadcast to its shape; with ``where`` the old values stay where it is False
(``dst[...] = np.where(where, src, dst)``). The write goes through the same machinery
as ``dst[...] = v`` (:mod:`.writes`), so writing into an argument or a view of one is
seen by the caller. A Python scalar ``src`` is weak, as in NumPy 2: it takes ``dst``'s
dtype when its kind fits (an out-of-range int is NumPy's ``OverflowError``), and is a
float64/int64 scalar otherwise (``copyto(int_array, 1.5)`` is a casting error).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import WEAK_TYPES, Tracer, as_tracer, current
from .functions_base import where as select
from .writes import write

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
BOOL = np.dtype(bool)


def _cast_error(what: str, source: np.dtype, target: np.dtype, casting: str) -> Exception:
    return current().error(f"Cannot cast {what} from dtype('{source}') to dtype('{target}') "
                           f"according to the rule '{casting}'")


def _source(src: Any, target: np.dtype, casting: Any) -> Tracer:
    """``src`` as a tracer of ``target``'s dtype, after NumPy's casting check."""
    weak = src.weak if isinstance(src, Tracer) else (
        isinstance(src, WEAK_TYPES) and not isinstance(src, (bool, np.generic)))
    if weak:
        kind = src.dtype if isinstance(src, Tracer) else np.asarray(src).dtype
        # NEP 50: the scalar takes dst's dtype if that is at least its kind.
        zero = {"i": 0, "u": 0, "f": 0.0, "c": 0j}[kind.kind]
        if np.result_type(target, zero) == target:
            if isinstance(src, Tracer):
                return lax.convert(src, target)
            return as_tracer(src, target)  # an out-of-range int is NumPy's OverflowError
        if not np.can_cast(kind, target, casting):
            raise _cast_error("scalar", kind, target, casting)
        return lax.convert(as_tracer(src), target)
    value = as_tracer(src)
    if not np.can_cast(value.dtype, target, casting):
        raise _cast_error("scalar" if not isinstance(src, Tracer) and np.ndim(src) == 0
                          else "array data", value.dtype, target, casting)
    return lax.convert(value, target)


def copyto(dst: Any, src: Any, casting: Any = "same_kind", where: Any = True) -> None:
    if not isinstance(dst, Tracer):
        raise current().error(f"copyto() argument 1 must be a numpy.ndarray, not "
                              f"{type(dst).__name__}",
                              hint="copy into an array of the kernel (an argument or a new "
                                   "array)")
    if casting not in _CASTINGS:
        raise current().error("casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                              f"'unsafe' (got {casting!r})")
    value = _source(src, dst.dtype, casting)
    if where is True or (isinstance(where, (np.bool_, np.ndarray)) and where.ndim == 0
                         and bool(where)):
        write(dst, Ellipsis, value)
        return None
    mask = as_tracer(where)
    if not np.can_cast(mask.dtype, BOOL, "safe"):
        raise _cast_error("array data", mask.dtype, BOOL, "safe")
    write(dst, Ellipsis, select(mask, value, dst))
    return None
