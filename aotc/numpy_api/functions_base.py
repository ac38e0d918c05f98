"""``np.where`` (the select other decompositions build on) and the check for arguments
that NumPy functions take but kernels cannot."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer, as_tracer, current, user_loc
from .ufuncs import broadcast_all, promote_types


def where(condition: Any, x: Any = None, y: Any = None) -> Tracer:
    if x is None or y is None:
        raise current().error(
            "np.where with one argument (indices of nonzero elements) is not supported",
            hint="use the three-argument form np.where(cond, a, b)",
        )
    dtype = promote_types(x, y)
    cond = lax.convert(as_tracer(condition), np.dtype(bool))
    a = lax.convert(as_tracer(x, dtype, wrap=True), dtype)  # NumPy casts scalars unsafely
    b = lax.convert(as_tracer(y, dtype, wrap=True), dtype)
    cond, a, b = broadcast_all([cond, a, b])
    return lax.select(cond, a.atom, b.atom)


def reject_unsupported(name: str, kwargs: dict[str, Any], allowed: tuple[str, ...] = ()) -> None:
    """A build error naming the keyword arguments given that aotc does not compile
    (``out=``, ``initial=``...); unset ones (None, NumPy's ``_NoValue``, ``where=True``)
    and the ``allowed`` layout hints are fine."""
    bad = sorted(k for k, v in kwargs.items()
                 if v is not None and v is not np._NoValue and not (k == "where" and v is True)
                 and k not in allowed)
    if bad:
        raise current().error(f"np.{name}: the argument(s) {', '.join(bad)} are not supported")


def check_cast(source: np.dtype, target: np.dtype, casting: Any, what: str) -> None:
    """A build error unless NumPy's ``casting`` rule allows ``source`` -> ``target``."""
    try:
        allowed = np.can_cast(source, target, casting)
    except (TypeError, ValueError):
        raise current().error(f"{what}: casting must be one of 'no', 'equiv', 'safe', "
                              f"'same_kind' or 'unsafe', not {casting!r}") from None
    if not allowed:
        raise current().error(f"{what}: cannot cast array data from {source} to {target} "
                              f"according to the rule {casting!r}")


def warn_complex_cast(source: np.dtype, target: np.dtype) -> None:
    """NumPy's ``ComplexWarning`` for a cast of complex values to a real dtype (which keeps
    the real parts), given once, when the kernel is built, where NumPy gives it at every
    call."""
    if source.kind == "c" and target.kind not in "cb":
        loc = user_loc()
        where = f"{loc}: " if loc is not None else ""
        warnings.warn(f"{where}casting complex values to {target} discards the imaginary "
                      "part", np.exceptions.ComplexWarning, stacklevel=2)
