"""Writing into a caller's array in place, only when nobody else can see the difference.

The buffer plan (:mod:`.inplace`) lets an argument's update chain run in the caller's
array itself. That has the functional semantics of the IR only when the array does not
overlap itself (a zero or overlapping stride, as ``np.broadcast_to`` or ``as_strided``
make) and no other argument shares its bytes (``f(a, a)``, a view and its base): then
no read of another value can observe a write early. Strides are runtime values, so the
entry point checks both; when either fails, the argument's updates run on a copy in a
scratch slot instead, copied back into the caller's array at the end (what the kernel
did for every write before in-place planning).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.dtypes import I1, I64, i64
from ..core.values import View

#: Up to this rank every axis order is tried when proving an array non-self-overlapping;
#: above it only C and Fortran order (a wrong "overlaps" only costs the scratch copy).
_ALL_ORDERS_UP_TO = 3


def _abs(b: KernelBuilder, x: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, i64(0)), b.neg(x), x)


def _empty(b: KernelBuilder, view: View) -> ir.Value:
    empty: ir.Value = ir.Constant(I1, 0)
    for d in view.dims:
        empty = b.or_(empty, b.icmp_signed("==", d, i64(0)))
    return empty


def _disjoint_in_order(b: KernelBuilder, view: View, order: Sequence[int]) -> ir.Value:
    """Whether, nesting the axes in ``order`` (innermost first), each axis steps over the
    whole extent of the axes inside it: then no two indices share a byte."""
    extent: ir.Value = i64(view.dtype.itemsize)
    ok: ir.Value = ir.Constant(I1, 1)
    for axis in order:
        n, stride = view.dims[axis], _abs(b, view.strides[axis])
        moves = b.icmp_signed(">", n, i64(1))
        ok = b.and_(ok, b.or_(b.not_(moves), b.icmp_signed(">=", stride, extent)))
        grown = b.add(b.mul(stride, b.sub(n, i64(1))), extent)
        extent = b.select(moves, grown, extent)
    return ok


def self_disjoint(b: KernelBuilder, view: View) -> ir.Value:
    """i1: no two elements of ``view`` share a byte (sufficient test, exact for every
    layout NumPy makes without ``as_strided``)."""
    axes = range(view.ndim)
    orders = (list(permutations(axes)) if view.ndim <= _ALL_ORDERS_UP_TO
              else [tuple(reversed(axes)), tuple(axes)])
    ok: ir.Value = _empty(b, view)
    for order in orders:
        ok = b.or_(ok, _disjoint_in_order(b, view, order))
    return ok


def _byte_range(b: KernelBuilder, view: View) -> tuple[ir.Value, ir.Value]:
    """[lo, hi) of the bytes ``view`` touches, as integers (empty when it has none)."""
    start = b.ptrtoint(view.data, I64)
    lo, hi = start, b.add(start, i64(view.dtype.itemsize))
    for n, stride in zip(view.dims, view.strides, strict=True):
        span = b.mul(stride, b.sub(n, i64(1)))
        negative = b.icmp_signed("<", span, i64(0))
        lo = b.add(lo, b.select(negative, span, i64(0)))
        hi = b.add(hi, b.select(negative, i64(0), span))
    empty = _empty(b, view)
    return b.select(empty, start, lo), b.select(empty, start, hi)


def disjoint(b: KernelBuilder, x: View, y: View) -> ir.Value:
    """i1: the byte ranges of ``x`` and ``y`` do not intersect."""
    xlo, xhi = _byte_range(b, x)
    ylo, yhi = _byte_range(b, y)
    return b.or_(b.icmp_unsigned("<=", xhi, ylo), b.icmp_unsigned("<=", yhi, xlo))


def private_array(b: KernelBuilder, view: View, others: Sequence[View]) -> ir.Value:
    """i1: writing into ``view`` in place cannot change any other element or argument."""
    ok = self_disjoint(b, view)
    for other in others:
        ok = b.and_(ok, disjoint(b, view, other))
    return ok


def choose(b: KernelBuilder, ok: ir.Value, view: View, scratch: View) -> View:
    """``view`` when ``ok`` holds, else ``scratch`` (same dims), as one View."""
    strides = tuple(b.select(ok, s, t) for s, t in zip(view.strides, scratch.strides, strict=True))
    return View(b.select(ok, view.data, scratch.data), view.dims, strides, view.dtype,
                min(view.align, scratch.align))
