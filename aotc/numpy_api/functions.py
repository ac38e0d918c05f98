"""The tables of NumPy callables aotc compiles, and the handlers that dispatch on them.

``__array_function__`` reaches :func:`array_function`, ``__array_ufunc__`` reaches
:func:`array_ufunc`; creation functions (which see no array) are reached through
autograph's converted calls (:data:`CREATION`). A callable missing here is a located
build error that names the closest supported ones, so the tables are also the
documentation of what is supported.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.elementwise import PRIM_OF_UFUNC
from ..tracing.tracer import Tracer, as_tracer, current
from . import (
    arrangements,
    calculus,
    choosing,
    closeness,
    complexes,
    composites,
    convolution,
    copying,
    creation,
    diagonals,
    editing,
    einsum,
    extrema,
    fft,
    floatparts,  # noqa: F401 - its ufuncs join DECOMPOSITIONS as it loads
    gradient,
    grids,
    histogram2d,
    histograms,
    indices,
    joining,
    linalg,
    linalg_eigh,
    linalg_qr,
    linalg_solve,
    linalg_svd,
    membership,
    nanfunctions,
    nanquantiles,
    padding,
    placing,
    polynomial,
    quantiles,
    random,
    random_more,
    reductions,
    rounding,
    searching,
    selection,
    sets,
    shaping,
    sorting,
    special,
    splitting,
    statistics,
    triangular,
    ufunc_methods,
    unique,
    vectors,
    windows,
)
from .outputs import in_out_dtype, refuse_where_without_out, written_out
from .ufuncs import DECOMPOSITIONS, apply_ufunc


def _shape(a: Any) -> tuple[Any, ...]:
    return as_tracer(a).shape


def _ndim(a: Any) -> int:
    return as_tracer(a).ndim


def _size(a: Any, axis: Any = None) -> Any:
    x = as_tracer(a)
    return x.size if axis is None else x.shape[axis]


#: ``np.row_stack`` is ``np.vstack`` (an alias NumPy deprecates; listed while it exists).
_ROW_STACK = {f: joining.vstack for f in [getattr(np, "row_stack", None)] if f is not None}

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sum: reductions.sum_, np.prod: reductions.prod, np.max: reductions.max_,
    np.amax: reductions.max_, np.min: reductions.min_, np.amin: reductions.min_,
    np.any: reductions.any_, np.all: reductions.all_, np.mean: reductions.mean,
    np.where: selection.where, np.reshape: shaping.reshape, np.transpose: shaping.transpose,
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
    np.tile: joining.tile, np.take: joining.take,
    np.roll: joining.roll, np.flip: joining.flip, np.diff: joining.diff,
    np.cumsum: joining.cumsum, np.cumprod: joining.cumprod, np.moveaxis: joining.moveaxis,
    np.swapaxes: joining.swapaxes, np.copy: joining.copy,
    np.dot: linalg.dot, np.inner: linalg.inner, np.outer: linalg.outer, np.vdot: linalg.vdot,
    np.trace: linalg.trace, np.linalg.multi_dot: linalg.multi_dot,
    np.round: rounding.round_, np.around: rounding.round_, np.ptp: extrema.ptp,
    np.isclose: closeness.isclose, np.allclose: closeness.allclose, np.copyto: copying.copyto,
    **convolution.FUNCTIONS, np.searchsorted: searching.searchsorted,
    np.interp: searching.interp, np.meshgrid: grids.meshgrid, np.triu: triangular.triu,
    np.tril: triangular.tril, np.einsum: einsum.einsum, np.cross: vectors.cross,
    **polynomial.FUNCTIONS, np.bincount: histograms.bincount,
    np.histogram: histograms.histogram,
    np.nonzero: selection.nonzero, np.flatnonzero: selection.flatnonzero,
    np.argwhere: selection.argwhere, np.compress: selection.compress,
    np.extract: selection.extract, np.trim_zeros: selection.trim_zeros,
    np.sort: sorting.sort, np.argsort: sorting.argsort, np.partition: sorting.partition,
    np.argpartition: sorting.argpartition,
    np.unique: unique.unique, np.median: quantiles.median, np.percentile: quantiles.percentile,
    np.quantile: quantiles.quantile,
    np.column_stack: joining.column_stack, np.dstack: joining.dstack,
    np.atleast_3d: joining.atleast_3d, **_ROW_STACK,
    **complexes.FUNCTIONS, **splitting.FUNCTIONS, **linalg_solve.FUNCTIONS,
    **indices.FUNCTIONS, **diagonals.FUNCTIONS, **gradient.FUNCTIONS, **membership.FUNCTIONS,
    **padding.FUNCTIONS, **special.FUNCTIONS, **choosing.FUNCTIONS, **nanfunctions.FUNCTIONS,
    **composites.FUNCTIONS, **editing.FUNCTIONS, **linalg_qr.FUNCTIONS, **linalg_svd.FUNCTIONS,
    **linalg_eigh.FUNCTIONS, **fft.FUNCTIONS,
    **placing.FUNCTIONS, **histogram2d.FUNCTIONS, **nanquantiles.FUNCTIONS,
    **arrangements.FUNCTIONS, **sets.FUNCTIONS, **calculus.FUNCTIONS,
}
#: Data-dependent shapes: a located error that says what to write instead.
DATA_DEPENDENT: dict[Callable[..., Any], str] = {}


def _items_of_one_array(func: Callable[..., Any]) -> Callable[..., Any]:
    """A call-time stand-in for ``np.concatenate``/``stack``/``vstack``/``hstack``: of
    one array (a list of arrays the kernel grew, laid out), whose items they join,
    :func:`array_function` as for a list (NumPy's own dispatch would iterate the
    array); of anything else, NumPy's dispatch."""
    def join(arrays: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(arrays, Tracer):
            return array_function(func, (arrays, *args), kwargs)
        return func(arrays, *args, **kwargs)
    join.__name__ = func.__name__
    return join


#: Every NumPy callable a kernel may call by any name, with no array argument needed.
CREATION: dict[Callable[..., Any], Callable[..., Any]] = {
    **{getattr(np, name): fn for name, fn in creation.CREATION.items()},
    np.array: joining.array, np.asarray: joining.asarray, **indices.CREATION, **composites.CREATION,
    np.ascontiguousarray: joining.asarray, np.asanyarray: joining.asarray,
    **complexes.SCALAR_TYPES, **fft.CREATION, **placing.CREATION,
    **polynomial.NOT_COMPILED, **windows.WINDOWS, **random.RANDOM,
    **random_more.RANDOM_MORE, **{func: _items_of_one_array(func) for func in (
        np.concatenate, np.stack, np.vstack, np.hstack)},
}
#: Ufuncs written as compositions (here too, those that are other operations).
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {**DECOMPOSITIONS, np.matmul: linalg.matmul,
                                              **linalg.VECTOR_UFUNCS}


def supported_names() -> list[str]:
    names = {f.__name__ for f in FUNCTIONS} | {u.__name__ for u in PRIM_OF_UFUNC}
    names |= {f.__name__ for f in CREATION}
    return sorted(names | {u.__name__ for u in UFUNCS})


#: Unsupported functions and the supported ones that do the same job, named before the
#: closest spellings (``np.correlate`` suggests ``np.convolve``, not ``np.clip``).
RELATED: dict[str, tuple[str, ...]] = {
    "fftconvolve": ("convolve", "fft"),
    "sort_complex": ("sort", "argsort"),
    "histogramdd": ("histogram", "bincount"), "histogram_bin_edges": ("histogram", "linspace"),
    "poly1d": ("polyval",),
    "array_equal": ("all", "equal"), "allequal": ("all", "equal"),
    "mgrid": ("meshgrid", "arange"), "ogrid": ("meshgrid", "arange"),
    "indices": ("meshgrid", "arange"),
}


def closest_supported(name: str) -> str:
    supported = supported_names()
    close = [r for r in RELATED.get(name, ()) if r in supported]
    close = close or difflib.get_close_matches(name, supported, n=3, cutoff=0.5)
    listing = ", ".join(f"np.{c}" for c in close)
    suffix = f"closest supported: {listing}; " if close else ""
    return suffix + "see the supported API table in the README"


def array_function(func: Callable[..., Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    impl = FUNCTIONS.get(func) or CREATION.get(func)  # np.linspace(traced, ...) dispatches
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
    out = kwargs.pop("out", None)
    kwargs = in_out_dtype(impl, out, kwargs)
    try:
        result = impl(*args, **kwargs)
    except TypeError as err:
        if isinstance(err, Exception) and type(err).__module__.startswith("aotc"):
            raise
        raise current().error(f"np.{func.__name__}: {err}") from None
    return result if out is None else written_out(func.__name__, out, result)


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    """``Tracer.__array_ufunc__``: calls, ``reduce``, ``accumulate`` and ``outer`` of the
    ufuncs we know."""
    if method in ufunc_methods.METHODS and (ufunc in PRIM_OF_UFUNC or ufunc in UFUNCS):
        return ufunc_methods.METHODS[method](ufunc, *inputs, **kwargs)
    if method != "__call__":
        raise current().error(f"np.{ufunc.__name__}.{method} is not supported")
    if ufunc not in PRIM_OF_UFUNC and ufunc not in UFUNCS:
        raise current().error(f"np.{ufunc.__name__} is not supported",
                              hint=closest_supported(ufunc.__name__))
    dtype = kwargs.pop("dtype", None)
    out, where = kwargs.pop("out", None), kwargs.pop("where", True)
    casting = kwargs.pop("casting", "same_kind")
    if kwargs:
        raise current().error(f"np.{ufunc.__name__}: the argument(s) {', '.join(kwargs)} "
                              "are not supported")
    refuse_where_without_out(ufunc.__name__, where, out)
    if dtype is not None:  # the loop runs in ``dtype``
        inputs = tuple(lax.convert(as_tracer(i), np.dtype(dtype)) for i in inputs)
    result = UFUNCS[ufunc](*inputs) if ufunc in UFUNCS else apply_ufunc(ufunc, *inputs)
    if out is None:
        return result
    return written_out(ufunc.__name__, out, result, where, casting)
