"""Array methods and properties of tracers (``x.sum()``, ``x.T``, ``x.astype``)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer, current
from . import (
    arrangements,
    complexes,
    diagonals,
    joining,
    linalg,
    pylists,
    reductions,
    rounding,
    searching,
    selection,
    shaping,
    sorting,
    statistics,
)
from .fancy import getitem_any
from .outputs import in_out_dtype, written_out
from .shaping import ravel
from .writes import write


def _fill(self: Tracer, value: Any) -> None:
    write(self, Ellipsis, value)


def _item(self: Tracer, *args: Any) -> Tracer:
    """The one element of a size-1 array (or the element at ``args``), as a scalar."""
    if args:
        index = args[0] if len(args) == 1 else args
        return cast(Tracer, getitem_any(ravel(self), index) if not isinstance(index, tuple)
                    else getitem_any(self, index))
    one = DimExpr.const(1)
    current().check("==", size(self.aval.shape), one, "ValueError",
                    "can only convert an array of size 1 to a Python scalar")
    return lax.reshape(lax.refine_shape(self, (one,) * self.ndim), ())


def _view(self: Tracer, dtype: Any = None, type: Any = None) -> Tracer:
    """``x.view()``: the same elements, a write through either reaching the other (the
    tracer itself). Another dtype reinterprets the bytes, which no kernel can yet."""
    if type is not None or (dtype is not None and np.dtype(dtype) != self.dtype):
        raise current().error(
            f"x.view({dtype!r}) reinterprets the array's bytes as another type, which "
            "compiled kernels do not do", hint="for the values in another dtype, use "
            "x.astype(dtype); for bit patterns, use integer arithmetic on an integer array")
    return self


_METHODS: dict[str, Callable[..., Any]] = {
    "sum": reductions.sum_, "prod": reductions.prod, "max": reductions.max_,
    "min": reductions.min_, "any": reductions.any_, "all": reductions.all_,
    "mean": reductions.mean, "reshape": shaping.reshape, "transpose": shaping.transpose,
    "ravel": shaping.ravel, "flatten": shaping.flatten, "squeeze": shaping.squeeze,
    "nonzero": selection.nonzero, "compress": lambda a, condition, axis=None, out=None:
    selection.compress(condition, a, axis, out),
    "astype": shaping.astype, "var": statistics.var, "std": statistics.std,
    "argmax": statistics.argmax, "argmin": statistics.argmin, "clip": statistics.clip,
    "cumsum": joining.cumsum, "cumprod": joining.cumprod, "repeat": arrangements.repeat,
    "take": joining.take, "copy": joining.copy, "swapaxes": joining.swapaxes,
    "dot": linalg.dot, "trace": linalg.trace, "round": rounding.round_,
    "sort": sorting.sort_method, "argsort": sorting.argsort,
    "partition": sorting.partition_method, "argpartition": sorting.argpartition,
    "searchsorted": searching.searchsorted, "conj": complexes.conj,
    "conjugate": complexes.conj, "diagonal": diagonals.diagonal, "fill": _fill, "item": _item,
    "view": _view,
}


def _transpose_method(self: Tracer, *axes: Any) -> Tracer:
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return shaping.transpose(self, axes or None)


_PROPERTIES: dict[str, Callable[[Tracer], Any]] = {
    "T": lambda self: shaping.transpose(self),
    "mT": lambda self: shaping.transpose(self, tuple(range(self.ndim - 2))
                                         + (self.ndim - 1, self.ndim - 2)),
    "real": complexes.real, "imag": complexes.imag,
    "flat": shaping.flat,
}


def get_method(self: Tracer, name: str) -> Any:
    if name in _PROPERTIES:
        return _PROPERTIES[name](self)
    if name == "transpose":
        return lambda *axes: _transpose_method(self, *axes)
    method = _METHODS.get(name)
    if self.list_like and name in pylists.LIST_METHODS:
        method = pylists.LIST_METHODS[name]
    if method is None:
        close = difflib.get_close_matches(name, [*_METHODS, *_PROPERTIES, "transpose"], n=1)
        raise current().error(f"array method or attribute .{name} is not supported",
                              hint=f"did you mean .{close[0]}?" if close else None)
    def bound(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        result = method(self, *args, **in_out_dtype(method, out, kwargs))
        return result if out is None else written_out(name, out, result)

    return bound

