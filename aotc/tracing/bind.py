"""Primitive binders on tracers: each function binds one primitive in the current trace.

The layer just above the tracer core: :mod:`aotc.tracing.control` traces loop bodies with these,
and NumPy's decompositions (:mod:`aotc.numpy_api`) are written in terms of them through
:mod:`aotc.lax`, which re-exports them beside structured control flow, as ``jax.lax``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Atom
from ..ops.core import Primitive
from ..ops.elementwise import convert_p, select_p
from ..ops.shape import broadcast_in_dim_p, refine_shape_p, reshape_p, slice_p, transpose_p
from ..shapes import DimExpr, Shape, Step, within_limit
from ..value_bounds import bounded_size
from .derived import derived_size
from .tracer import Tracer, current, dim_value


def bind(prim: Primitive, *inputs: Atom, **params: Any) -> list[Tracer]:
    return [Tracer(v) for v in current().emit(prim, list(inputs), **params)]


def bind1(prim: Primitive, *inputs: Atom, **params: Any) -> Tracer:
    return bind(prim, *inputs, **params)[0]


def fresh(x: Tracer) -> Tracer:
    """A new array with ``x``'s current value: NumPy returns a copy, never an alias."""
    return Tracer(x.atom, x.dim, x.weak)


def convert(x: Tracer, dtype: np.dtype) -> Tracer:
    dtype = np.dtype(dtype)
    return x if x.dtype == dtype else bind1(convert_p, x.atom, dtype=dtype)


def broadcast_in_dim(x: Tracer, shape: Shape, broadcast_dimensions: tuple[int, ...]) -> Tracer:
    if tuple(shape) == x.aval.shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return bind1(broadcast_in_dim_p, x.atom, shape=tuple(shape),
                 broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast_to(x: Tracer, shape: Shape) -> Tracer:
    """Broadcast by NumPy's rule: align trailing axes."""
    lead = len(shape) - x.ndim
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def reshape(x: Tracer, new_sizes: Shape) -> Tracer:
    if tuple(new_sizes) == x.aval.shape:
        return x
    return bind1(reshape_p, x.atom, new_sizes=tuple(new_sizes))


def transpose(x: Tracer, permutation: tuple[int, ...]) -> Tracer:
    if tuple(permutation) == tuple(range(x.ndim)):
        return x
    return bind1(transpose_p, x.atom, permutation=tuple(permutation))


def slice_(x: Tracer, start: tuple[DimExpr, ...], step: tuple[Step, ...], shape: Shape
           ) -> Tracer:
    if all(s.is_const and s.value == 0 for s in start) and all(k == 1 for k in step) \
            and tuple(shape) == x.aval.shape:
        return x
    return bind1(slice_p, x.atom, start=tuple(start), step=tuple(step), shape=tuple(shape))


def refine_shape(x: Tracer, shape: Shape) -> Tracer:
    """Retype ``x`` with sizes a runtime check has made equal to its own."""
    if tuple(shape) == x.aval.shape:
        return x
    return bind1(refine_shape_p, x.atom, shape=tuple(shape))


def select(cond: Tracer, a: Atom, b: Atom) -> Tracer:
    return bind1(select_p, cond.atom, a, b)


def reduce(prim: Primitive, x: Tracer, axes: tuple[int, ...]) -> Tracer:
    return bind1(prim, x.atom, axes=tuple(sorted(axes))) if axes else fresh(x)


def size_value(value: Any, what: str = "size") -> DimExpr:
    """A user-given integer (an int, or a traced size such as ``x.shape[0] + 1`` or an
    integer argument) as a size expression, which may be negative."""
    if isinstance(value, Tracer):
        dim = value.dim if value.ndim == 0 else None
        if dim is None:
            dim = derived_size(value)
        if dim is None and value.ndim == 0 and value.dtype.kind in "iub":
            dim = bounded_size(value)  # (bound in the kernel: no loop run twice)
        if dim is None:
            dim = derived_size(value, loops=True)
        if dim is None:
            raise current().error(f"{what} has no bound known before the kernel runs",
                                  hint="aotc plans memory before the kernel runs: a size "
                                       "computed inside it needs a bound from shapes and "
                                       "integer arguments (a loop index, a count kept in "
                                       "a loop, np.minimum(k, n))")
        return dim
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        # (clamped as integer arguments are: too big either way, and no int64 overflow)
        return DimExpr.const(within_limit(int(value)))
    raise current().error(f"{what} {value!r} must be an integer")


def as_dim(value: Any, what: str = "size") -> DimExpr:
    """A user-given size: negative is NumPy's ``ValueError`` (at build time when known)."""
    dim = size_value(value, what)
    if dim.is_const and dim.value < 0:
        raise current().error(f"negative {what} {dim.value}")
    current().check(">=", dim, DimExpr.const(0), "ValueError",
                    "negative dimensions are not allowed (got {lhs})")
    return dim


__all__ = ["as_dim", "bind", "bind1", "broadcast_in_dim", "broadcast_to", "convert",
           "dim_value", "fresh", "reduce", "refine_shape", "reshape", "select", "size_value",
           "slice_", "transpose"]
