"""The table of NumPy functions aotc compiles, reached through ``__array_function__``.

A function missing here is a located build error that names the closest supported
functions, so the table is also the documentation of what is supported.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import numpy as np

from ..trace import current
from . import creation, joining, linalg, reductions, shaping, statistics
from .functions_base import where
from .ufuncs import as_tracer


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
    **creation.LIKE,
    np.var: statistics.var, np.std: statistics.std, np.average: statistics.average,
    np.argmax: statistics.argmax, np.argmin: statistics.argmin,
    np.count_nonzero: statistics.count_nonzero, np.clip: statistics.clip,
    np.nansum: statistics.nansum, np.nanmax: statistics.nanmax, np.nanmin: statistics.nanmin,
    np.nanmean: statistics.nanmean,
    np.concatenate: joining.concatenate, np.stack: joining.stack, np.hstack: joining.hstack,
    np.vstack: joining.vstack, np.atleast_1d: joining.atleast_1d,
    np.atleast_2d: joining.atleast_2d, np.broadcast_to: joining.broadcast_to,
    np.tile: joining.tile, np.repeat: joining.repeat, np.take: joining.take,
    np.roll: joining.roll, np.flip: joining.flip, np.diff: joining.diff,
    np.cumsum: joining.cumsum, np.cumprod: joining.cumprod, np.moveaxis: joining.moveaxis,
    np.swapaxes: joining.swapaxes, np.copy: joining.copy,
    np.dot: linalg.dot, np.inner: linalg.inner, np.outer: linalg.outer, np.vdot: linalg.vdot,
    np.trace: linalg.trace, np.linalg.norm: linalg.norm,
}
#: Data-dependent shapes: a located error that says what to write instead.
DATA_DEPENDENT = {
    np.nonzero: "np.nonzero", np.flatnonzero: "np.flatnonzero", np.unique: "np.unique",
    np.argwhere: "np.argwhere", np.extract: "np.extract", np.compress: "np.compress",
}


def supported_names() -> list[str]:
    from ..ops.elementwise import PRIM_OF_UFUNC
    from .ufuncs import DECOMPOSITIONS

    names = {f.__name__ for f in FUNCTIONS} | {u.__name__ for u in PRIM_OF_UFUNC}
    names |= set(creation.CREATION)
    return sorted(names | {u.__name__ for u in DECOMPOSITIONS})


def closest_supported(name: str) -> str:
    close = difflib.get_close_matches(name, supported_names(), n=3, cutoff=0.5)
    listing = ", ".join(f"np.{c}" for c in close)
    suffix = f"closest supported: {listing}; " if close else ""
    return suffix + "see the supported API table in the README"


def array_function(func: Callable[..., Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    impl = FUNCTIONS.get(func)
    if func in DATA_DEPENDENT:
        raise current().error(
            f"{DATA_DEPENDENT[func]} returns an array whose size depends on the data, "
            "which a compiled kernel must know before it runs",
            hint="keep the full size and select with np.where(mask, x, fill), or count "
                 "with np.count_nonzero(mask)",
        )
    if impl is None:
        name = getattr(func, "__name__", str(func))
        raise current().error(f"np.{name} is not supported", hint=closest_supported(name))
    try:
        return impl(*args, **kwargs)
    except TypeError as err:
        if isinstance(err, Exception) and type(err).__module__.startswith("aotc"):
            raise
        raise current().error(f"np.{func.__name__}: {err}") from None
