"""The table of NumPy functions aotc compiles, reached through ``__array_function__``.

A function missing here is a located build error that names the closest supported
functions, so the table is also the documentation of what is supported.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..trace import Tracer, current
from . import reductions, shaping
from .ufuncs import as_tracer, broadcast_all, promote_types


def where(condition: Any, x: Any = None, y: Any = None) -> Tracer:
    if x is None or y is None:
        raise current().error(
            "np.where with one argument (indices of nonzero elements) is not supported",
            hint="use the three-argument form np.where(cond, a, b)",
        )
    dtype = promote_types(x, y)
    cond = lax.convert(as_tracer(condition), np.dtype(bool))
    a = lax.convert(as_tracer(x, dtype), dtype)
    b = lax.convert(as_tracer(y, dtype), dtype)
    cond, a, b = broadcast_all([cond, a, b])
    return lax.select(cond, a.atom, b.atom)


def _shape(a: Any) -> tuple[Any, ...]:
    return as_tracer(a).shape


def _ndim(a: Any) -> int:
    return as_tracer(a).ndim


def _size(a: Any, axis: Any = None) -> Any:
    x = as_tracer(a)
    return x.size if axis is None else x.shape[axis]


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sum: reductions.sum_, np.prod: reductions.prod, np.max: reductions.max_,
    np.amax: reductions.max_, np.min: reductions.min_, np.amin: reductions.min_,
    np.any: reductions.any_, np.all: reductions.all_, np.mean: reductions.mean,
    np.where: where, np.reshape: shaping.reshape, np.transpose: shaping.transpose,
    np.ravel: shaping.ravel, np.squeeze: shaping.squeeze, np.expand_dims: shaping.expand_dims,
    np.astype: shaping.astype, np.shape: _shape, np.ndim: _ndim, np.size: _size,
}


def supported_names() -> list[str]:
    from ..ops.elementwise import PRIM_OF_UFUNC
    from .ufuncs import DECOMPOSITIONS

    names = {f.__name__ for f in FUNCTIONS} | {u.__name__ for u in PRIM_OF_UFUNC}
    return sorted(names | {u.__name__ for u in DECOMPOSITIONS})


def closest_supported(name: str) -> str:
    close = difflib.get_close_matches(name, supported_names(), n=3, cutoff=0.5)
    listing = ", ".join(f"np.{c}" for c in close)
    suffix = f"closest supported: {listing}; " if close else ""
    return suffix + "see the supported API table in the README"


def array_function(func: Callable[..., Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    impl = FUNCTIONS.get(func)
    if impl is None:
        name = getattr(func, "__name__", str(func))
        raise current().error(f"np.{name} is not supported", hint=closest_supported(name))
    try:
        return impl(*args, **kwargs)
    except TypeError as err:
        if isinstance(err, Exception) and type(err).__module__.startswith("aotc"):
            raise
        raise current().error(f"np.{func.__name__}: {err}") from None
