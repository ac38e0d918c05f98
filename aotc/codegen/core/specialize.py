"""A second copy of the kernel for C-contiguous arguments, where strides are constants.

Caller strides are runtime values, and LLVM cannot prove a byte stride equals the
element size: it versions loops on "stride == 1 byte", which never holds. Loop nests
over Views handle that themselves (:func:`~.loops.strided_nest`), but a traced loop
(``for_loop``, ``while_loop``, ``scan``) indexing a caller array is out of their reach:
``y[i] = a*x[i] + b*y[i-1]`` kept reloading ``y[i-1]`` from memory. Almost every call
passes C-contiguous arrays, so for kernels with traced loops the entry point tests that
once (:func:`contiguous`) and runs a copy of the kernel body in which every argument
View has the C strides of its dims: constants, so every loop, however deeply nested in
control flow, sees unit strides. The generic copy serves every other layout. Kernels
without traced loops get no second copy (it would cost compile time for nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir

from .builder import KernelBuilder
from .dtypes import I1, i64
from .values import Scalar, Value, View, c_strides


def contiguous(b: KernelBuilder, values: Sequence[Value]) -> ir.Value | None:
    """i1: every array is C-contiguous (an axis of size <= 1 may have any stride);
    None when no array has runtime strides (nothing to specialize)."""
    views = [v for v in values if isinstance(v, View) and v.ndim]
    if not views:
        return None
    ok: ir.Value = ir.Constant(I1, 1)
    for view in views:
        for d, stride, want in zip(view.dims, view.strides,
                                   c_strides(b, view.dims, view.dtype.itemsize), strict=True):
            ok = b.and_(ok, b.or_(b.icmp_signed("<=", d, i64(1)),
                                  b.icmp_signed("==", stride, want)))
    return ok


def as_contiguous(b: KernelBuilder, value: Value) -> Value:
    """``value`` with the C strides of its dims (valid where :func:`contiguous` holds)."""
    if isinstance(value, Scalar) or not value.ndim:
        return value
    return View(value.data, value.dims, c_strides(b, value.dims, value.dtype.itemsize),
                value.dtype, value.align)
