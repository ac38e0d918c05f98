"""The two kinds of runtime value in a kernel: a Scalar in a register, or a strided View.

Rank-0 results and literals are :class:`Scalar` s (an SSA value; no memory at all).
Everything of rank >= 1 is a :class:`View`: a data pointer, i64 dims and i64 byte
strides, NumPy's own representation, so transposes, slices and broadcasts are new
Views over the same bytes, never loops. Element ``idx`` lives at
``data + sum(idx[k] * strides[k])``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ...shapes import DimExpr
from .builder import KernelBuilder
from .dtypes import BOOL, I1, I8, i64, mem_type


@dataclass(frozen=True)
class Scalar:
    """A rank-0 value held in a register (register type of ``dtype``)."""

    value: ir.Value
    dtype: np.dtype


@dataclass(frozen=True)
class View:
    """A strided array: ``data`` (ptr), ``dims`` and byte ``strides`` (i64 values).

    ``align`` is the alignment every element address is known to have: the natural
    alignment for buffers we allocate, 1 for caller arrays (NumPy allows unaligned ones).
    """

    data: ir.Value
    dims: tuple[ir.Value, ...]
    strides: tuple[ir.Value, ...]
    dtype: np.dtype
    align: int = 1

    @property
    def ndim(self) -> int:
        return len(self.dims)


Value = Scalar | View


def _parts(b: KernelBuilder, ptr: ir.Value, dtype: np.dtype, align: int
           ) -> list[tuple[ir.Value, int]]:
    """The addresses and alignments of a complex element's real and imaginary parts."""
    half = dtype.itemsize // 2
    return [(ptr, min(align, half)),
            (b.gep(ptr, [i64(half)], source_etype=I8, inbounds=True), math.gcd(align, half))]


def load_memory(b: KernelBuilder, ptr: ir.Value, dtype: np.dtype, align: int) -> ir.Value:
    """Load one element as its register value (bool: any nonzero byte is True; complex:
    two float loads, which the vectorizer groups with the neighbours' as interleaved)."""
    if dtype.kind == "c":
        ty = mem_type(dtype)
        value: ir.Value = ir.Constant(ty, None)
        for k, (at, part_align) in enumerate(_parts(b, ptr, dtype, align)):
            part = b.load(at, typ=ty.elements[k], align=part_align)
            value = b.insert_value(value, part, k)
        return value
    raw = b.load(ptr, typ=mem_type(dtype), align=align)
    if dtype == BOOL:
        return b.icmp_unsigned("!=", raw, ir.Constant(I8, 0))
    return raw


def store_memory(b: KernelBuilder, value: ir.Value, ptr: ir.Value, dtype: np.dtype,
                 align: int) -> None:
    """Store a register value (bool is written as the byte 0 or 1; complex part by part)."""
    if dtype.kind == "c":
        for k, (at, part_align) in enumerate(_parts(b, ptr, dtype, align)):
            b.store(b.extract_value(value, k), at, align=part_align)
        return
    if dtype == BOOL and value.type == I1:
        value = b.zext(value, I8)
    b.store(value, ptr, align=align)


def element_ptr(b: KernelBuilder, view: View, idx: Sequence[ir.Value]) -> ir.Value:
    """The address of ``view[idx]``: ``data + sum(idx[k] * strides[k])`` in bytes."""
    if not view.ndim:
        return view.data  # a rank-0 View (of a Scalar) is its one element at any index
    offset: ir.Value | None = None
    for i, stride in zip(idx, view.strides, strict=True):
        term = b.mul(i, stride)
        offset = term if offset is None else b.add(offset, term)
    if offset is None:
        return view.data
    return b.gep(view.data, [offset], source_etype=I8)


def load(b: KernelBuilder, value: Value, idx: Sequence[ir.Value]) -> ir.Value:
    """Read ``value`` at ``idx``; a Scalar is the same at every index (broadcast)."""
    if isinstance(value, Scalar):
        return value.value
    return load_memory(b, element_ptr(b, value, idx), value.dtype, value.align)


def store(b: KernelBuilder, view: View, idx: Sequence[ir.Value], value: ir.Value) -> None:
    store_memory(b, value, element_ptr(b, view, idx), view.dtype, view.align)


def part_view(b: KernelBuilder, view: View, k: int) -> View:
    """The real (``k = 0``) or imaginary (``k = 1``) parts of a complex View: a float View
    with the same dims and strides, ``k`` half-elements in (NumPy's ``z.real``)."""
    half = view.dtype.itemsize // 2
    data = view.data if k == 0 else b.gep(view.data, [i64(half)], source_etype=I8)
    return View(data, view.dims, view.strides, np.dtype(f"f{half}"), math.gcd(view.align, half))


def c_strides(b: KernelBuilder, dims: Sequence[ir.Value], itemsize: int) -> tuple[ir.Value, ...]:
    """Byte strides of a C-contiguous array with these dims."""
    strides: list[ir.Value] = []
    step: ir.Value = i64(itemsize)
    for d in reversed(dims):
        strides.append(step)
        step = b.mul(step, d)
    return tuple(reversed(strides))


def contiguous_view(b: KernelBuilder, data: ir.Value, dims: Sequence[ir.Value],
                    dtype: np.dtype) -> View:
    """A C-contiguous, naturally aligned View over a buffer we allocated."""
    return View(data, tuple(dims), c_strides(b, dims, dtype.itemsize), dtype,
                align=dtype.itemsize)


def step_value(dims: Callable[[DimExpr], ir.Value], step: int | DimExpr) -> int | ir.Value:
    """A slice step of the IR for codegen: an int, or the value of a step bound while the
    kernel runs (:func:`aotc.numpy_api.indexing.slice_bounds`)."""
    if isinstance(step, int):
        return step
    return step.value if step.is_const else dims(step)


def sub_view(b: KernelBuilder, base: View, starts: Sequence[ir.Value],
             steps: Sequence[int | ir.Value], dims: Sequence[ir.Value]) -> View:
    """``base[start_k + i*step_k, ...]`` for ``i < dims[k]``, as a View."""
    offset: ir.Value = i64(0)
    for start, stride in zip(starts, base.strides, strict=True):
        offset = b.add(offset, b.mul(start, stride))
    strides = tuple(scaled(b, stride, step)
                    for stride, step in zip(base.strides, steps, strict=True))
    return View(b.gep(base.data, [offset], source_etype=I8), tuple(dims), strides,
                base.dtype, base.align)


def unit_axes_changed(v: View, old: Sequence[DimExpr], new: Sequence[DimExpr],
                      dims: Sequence[ir.Value]) -> View:
    """``v`` (of symbolic shape ``old``) seen with shape ``new``, which differs from it
    only in size-1 axes added or dropped: the other axes keep their strides in order."""
    kept = [s for s, d in zip(v.strides, old, strict=True) if not _is_unit(d)]
    strides = [i64(0) if _is_unit(d) else kept.pop(0) for d in new]
    return View(v.data, tuple(dims), tuple(strides), v.dtype, v.align)


def only_unit_axes_differ(old: Sequence[DimExpr | int], new: Sequence[DimExpr | int]
                          ) -> bool:
    return [d for d in old if not _is_unit(d)] == [d for d in new if not _is_unit(d)]


def _is_unit(d: DimExpr | int) -> bool:
    return d == 1 if isinstance(d, int) else d.is_const and d.value == 1


def scaled(b: ir.IRBuilder, x: ir.Value, k: int | ir.Value) -> ir.Value:
    """``x * k``, folded for a constant ``x`` or ``k == 1`` (so unit strides stay
    recognizable)."""
    if isinstance(k, ir.Value):
        return b.mul(x, k)
    if k == 1:
        return x
    if isinstance(x, ir.Constant):
        return i64(x.constant * k)
    return b.mul(x, i64(k))
