"""Shape primitives: new index maps over existing data, and sizes as values.

``broadcast_in_dim``, ``transpose`` and ``slice`` are views: codegen reads the input
through a different index map and never copies. ``reshape`` is a view when the input is
contiguous and a copy otherwise. ``dim_value`` turns a size expression into an i64
scalar (``x.shape[0]`` used in arithmetic); ``bind_dim`` goes the other way, making a
runtime integer a size symbol (a slice bound that is a loop index).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..shapes import DimExpr, Shape, Step, size
from ..tracing.avals import AType
from .core import EFFECT, VIEW, impl_rules, primitive, type_rules

broadcast_in_dim_p = primitive("broadcast_in_dim", VIEW)
reshape_p = primitive("reshape", VIEW)
transpose_p = primitive("transpose", VIEW)
slice_p = primitive("slice", VIEW)
dim_value_p = primitive("dim_value")
#: ``bind_dim[symbol, upper] v``: from here on (in this program and the programs nested in
#: it) size symbol ``symbol`` is ``v`` clamped into ``[0, upper]``; the result is that
#: value. An effect so it is never removed or moved: sizes name it, not data edges.
#: ``proven=True`` (set by loop versioning) says ``v`` is in range already: no clamp.
bind_dim_p = primitive("bind_dim", EFFECT)
#: The same data with sizes that a runtime check has proven equal to the input's.
refine_shape_p = primitive("refine_shape", VIEW)

I64 = np.dtype(np.int64)


def _atype(dtype: np.dtype, shape: Shape) -> AType:
    return AType(dtype, tuple(shape))


def _broadcast_in_dim_type(x: Any, *, shape: Shape, broadcast_dimensions: tuple[int, ...]
                           ) -> tuple[AType]:
    """Operand axis i becomes output axis ``broadcast_dimensions[i]``.

    The operand size must be 1 (stretched) or the output size. Two sizes that differ in
    form are accepted when one is symbolic: tracing then records a runtime check that
    they are equal, so a runtime size of 1 is never silently stretched.
    """
    if len(broadcast_dimensions) != x.ndim:
        raise ValueError("broadcast_in_dim: one output axis per operand axis")
    for i, axis in enumerate(broadcast_dimensions):
        d = x.shape[i]
        if d != shape[axis] and (d.is_const and shape[axis].is_const) and d.value != 1:
            raise ValueError(f"broadcast_in_dim: operand size {d} cannot become {shape[axis]}")
    return (_atype(x.dtype, shape),)


def _broadcast_in_dim_impl(x: np.ndarray, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...]) -> tuple[np.ndarray]:
    expanded = np.expand_dims(x, tuple(i for i in range(len(shape))
                                       if i not in broadcast_dimensions))
    return (np.broadcast_to(expanded, shape),)


def _reshape_type(x: Any, *, new_sizes: Shape) -> tuple[AType]:
    if size(x.shape) != size(tuple(new_sizes)):
        raise ValueError(f"cannot reshape size {size(x.shape)} into {new_sizes}")
    return (_atype(x.dtype, new_sizes),)


def _transpose_type(x: Any, *, permutation: tuple[int, ...]) -> tuple[AType]:
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"transpose: {permutation} is not a permutation of {x.ndim} axes")
    return (_atype(x.dtype, tuple(x.shape[p] for p in permutation)),)


def _slice_type(x: Any, *, start: tuple[DimExpr, ...], step: tuple[Step, ...],
                shape: Shape) -> tuple[AType]:
    """``out[i, …] = x[start[0] + i*step[0], …]``; bounds were clamped by tracing."""
    if not (len(start) == len(step) == len(shape) == x.ndim) or 0 in step:
        raise ValueError("slice: one start, nonzero step and size per axis")
    return (_atype(x.dtype, shape),)


def _slice_impl(x: np.ndarray, *, start: tuple[int, ...], step: tuple[int, ...],
                shape: tuple[int, ...]) -> tuple[np.ndarray]:
    index = tuple(np.arange(n) * s + b for b, s, n in zip(start, step, shape, strict=True))
    return (x[np.ix_(*index)] if index else x,)


def _refine_shape_type(x: Any, *, shape: Shape) -> tuple[AType]:
    if len(shape) != x.ndim or any(a != b and a.is_const and b.is_const
                                   for a, b in zip(x.shape, shape, strict=True)):
        raise ValueError(f"refine_shape: {shape} cannot refine {x.shape}")
    return (_atype(x.dtype, shape),)


def _dim_value_type(*, expr: DimExpr) -> tuple[AType]:
    return (_atype(I64, ()),)


def _bind_dim_type(value: Any, *, symbol: str, upper: DimExpr,
                   proven: bool = False) -> tuple[AType]:
    if value.shape != () or value.dtype != I64:
        raise ValueError("bind_dim binds an int64 scalar")
    return (_atype(I64, ()),)


def bind_dim_impl(value: np.ndarray, *, symbol: str, upper: int,
                  proven: bool = False) -> tuple[np.ndarray]:
    """The bound value; the interpreter also records it in its size environment."""
    if proven:
        assert 0 <= int(value) <= upper, "loop versioning proved a size out of range"
    return (np.asarray(max(min(int(value), upper), 0), I64),)


type_rules.update({
    broadcast_in_dim_p: _broadcast_in_dim_type,
    reshape_p: _reshape_type,
    transpose_p: _transpose_type,
    slice_p: _slice_type,
    dim_value_p: _dim_value_type,
    bind_dim_p: _bind_dim_type,
    refine_shape_p: _refine_shape_type,
})
impl_rules.update({
    broadcast_in_dim_p: _broadcast_in_dim_impl,
    reshape_p: lambda x, *, new_sizes: (np.reshape(x, new_sizes),),
    transpose_p: lambda x, *, permutation: (np.transpose(x, permutation),),
    slice_p: _slice_impl,
    dim_value_p: lambda *, expr: (np.asarray(expr, I64),),
    bind_dim_p: bind_dim_impl,
    refine_shape_p: lambda x, *, shape: (x,),
})


# -- creation and joining ----------------------------------------------------------------

iota_p = primitive("iota")
concatenate_p = primitive("concatenate")


def _iota_type(*, dtype: np.dtype, shape: Shape, dimension: int) -> tuple[AType]:
    """Each element's index along ``dimension``, as ``dtype`` (``arange`` and ``eye``)."""
    if not 0 <= dimension < len(shape):
        raise ValueError("iota: dimension out of range")
    return (_atype(np.dtype(dtype), shape),)


def _iota_impl(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int
               ) -> tuple[np.ndarray]:
    index = np.arange(shape[dimension], dtype=np.int64)
    index = index.reshape([-1 if i == dimension else 1 for i in range(len(shape))])
    return (np.broadcast_to(index, shape).astype(dtype),)


def _concatenate_type(*xs: Any, axis: int) -> tuple[AType]:
    first = xs[0]
    if not 0 <= axis < first.ndim:
        raise ValueError(f"concatenate: axis {axis} out of range for rank {first.ndim}")
    for x in xs[1:]:
        if x.dtype != first.dtype or x.ndim != first.ndim:
            raise ValueError("concatenate: inputs must share dtype and rank")
        for i, (a, b) in enumerate(zip(x.shape, first.shape, strict=True)):
            if i != axis and a != b and a.is_const and b.is_const:
                raise ValueError(f"concatenate: sizes differ on axis {i}: {a} and {b}")
    total = xs[0].shape[axis]
    for x in xs[1:]:
        total = total + x.shape[axis]
    shape = tuple(total if i == axis else d for i, d in enumerate(first.shape))
    return (_atype(first.dtype, shape),)


update_slice_p = primitive("update_slice")


def _update_slice_type(base: Any, update: Any, *, start: tuple[DimExpr, ...],
                       step: tuple[Step, ...]) -> tuple[AType]:
    """A new version of ``base`` with ``base[start + i*step] = update[i]``: a write into a
    view, represented functionally (buffer planning makes it an in-place store)."""
    if update.dtype != base.dtype or update.ndim != base.ndim:
        raise ValueError("update_slice: the update must have the base's dtype and rank")
    if not (len(start) == len(step) == base.ndim) or 0 in step:
        raise ValueError("update_slice: one start and nonzero step per axis")
    return (_atype(base.dtype, base.shape),)


def _update_slice_impl(base: np.ndarray, update: np.ndarray, *, start: tuple[int, ...],
                       step: tuple[int, ...]) -> tuple[np.ndarray]:
    out = np.array(base, copy=True)
    index = tuple(np.arange(n) * s + b for b, s, n in zip(start, step, update.shape, strict=True))
    if all(len(i) for i in index):
        out[np.ix_(*index)] = update
    return (out,)


type_rules.update({iota_p: _iota_type, concatenate_p: _concatenate_type,
                   update_slice_p: _update_slice_type})
impl_rules[update_slice_p] = _update_slice_impl
impl_rules.update({
    iota_p: _iota_impl,
    concatenate_p: lambda *xs, axis: (np.concatenate(xs, axis=axis),),
})
