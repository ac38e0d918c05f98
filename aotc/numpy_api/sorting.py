"""``np.sort``, ``np.argsort``, ``np.partition``, ``np.argpartition`` and the methods
``.sort()`` (in place), ``.argsort()``, ``.partition()``, ``.argpartition()``.

Every sort here is the ``sort``/``argsort`` primitive (:mod:`aotc.ops.sorting`): stable,
whatever ``kind`` says. That is NumPy's ``kind='stable'`` answer bit for bit (NaNs last
with their payloads, ``-0.0`` and ``0.0`` in their input order), and a valid answer for
the unstable kinds, whose order of equal elements NumPy leaves unspecified.

A partition is a full sort: NumPy allows any arrangement with the k-th element in place,
smaller-or-equal ones before it and greater-or-equal ones after, and a sorted row is one.
A radix sort is linear in the row length, as introselect is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.core import Primitive
from ..ops.index import raise_if_p
from ..ops.sorting import argsort_p, sort_p
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer, as_tracer, current
from .arrangements import take_along_axis
from .functions_base import where
from .reductions import max_, min_
from .shaping import normalize_axes, ravel
from .ufuncs import apply_ufunc
from .writes import write

KINDS = ("quicksort", "mergesort", "heapsort", "stable")


def sortable(a: Any, name: str, complex_ok: bool = False) -> Tracer:
    """``a`` as a tracer NumPy can order: complex values are refused here, by name,
    unless the caller orders them (``complex_ok``: :func:`_order`)."""
    x = as_tracer(a)
    if x.dtype.kind == "c" and not complex_ok:
        raise current().error(f"{name} of complex values is not supported",
                              hint="np.sort and np.argsort order complex values as NumPy "
                                   "does: work on the sorted array")
    if x.dtype.kind not in "biufc":
        raise current().error(f"{name}: values of dtype {x.dtype} cannot be sorted")
    return x


def check_kind(name: str, kind: Any = None, order: Any = None, stable: Any = None) -> None:
    """NumPy's checks of ``kind``/``stable``/``order`` (every kind is our stable sort)."""
    ctx = current()
    if order is not None:
        raise ctx.error(f"{name}: order= applies to structured arrays, which kernels do not "
                        "take")
    if kind is not None and stable is not None:
        raise ctx.error("`kind` and `stable` parameters can't be provided at the same time. "
                        "Use only one of them.")
    if kind is not None and (not isinstance(kind, str) or not kind
                             or kind[0].lower() not in "qhms"):
        raise ctx.error(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def _axis(x: Tracer, axis: Any) -> tuple[Tracer, int]:
    """The array to sort and the axis: ``axis=None`` sorts the flattened array."""
    if axis is None:
        return ravel(x), 0
    if x.ndim == 0:
        raise current().error(f"axis {axis} is out of bounds for array of dimension 0")
    (ax,) = normalize_axes(axis, x.ndim)
    return x, ax


def _order(x: Tracer, ax: int) -> Tracer:
    """The stable order of ``x`` along ``ax``. Complex values in NumPy's order: by real
    part, then imaginary, those with a NaN part after, in the classes R + Rj, R + nanj,
    nan + Rj, nan + nanj (NumPy's ``CLT``): stable argsorts by the imaginary part, the
    real part and the class, least significant first."""
    if x.dtype.kind != "c":
        return lax.bind1(argsort_p, x.atom, axis=ax)
    re, im = np.real(x), np.imag(x)
    order = lax.bind1(argsort_p, as_tracer(im).atom, axis=ax)
    for key in (re, np.isnan(re) * 2 + np.isnan(im)):
        ranked = take_along_axis(key, order, axis=ax)
        order = take_along_axis(order, lax.bind1(argsort_p, ranked.atom, axis=ax), axis=ax)
    return order


def _sorted(x: Tracer, ax: int) -> Tracer:
    if x.dtype.kind != "c":
        return lax.bind1(sort_p, x.atom, axis=ax)
    return take_along_axis(x, _order(x, ax), axis=ax)


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> Tracer:
    check_kind("np.sort", kind, order, stable)
    x, ax = _axis(sortable(a, "np.sort", complex_ok=True), axis)
    return _sorted(x, ax)


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None) -> Tracer:
    check_kind("np.argsort", kind, order, stable)
    x, ax = _axis(sortable(a, "np.argsort", complex_ok=True), axis)
    return _order(x, ax)


def sort_method(self: Tracer, axis: Any = -1, kind: Any = None, order: Any = None, *,
                stable: Any = None) -> None:
    """``a.sort()``: sorts in place (a write into ``a``, seen by the caller when ``a``
    is an argument or a view of one)."""
    check_kind("ndarray.sort", kind, order, stable)
    x = sortable(self, "ndarray.sort", complex_ok=True)
    if axis is None:
        raise current().error("ndarray.sort: axis=None is not allowed (NumPy sorts in place "
                              "along one axis)", hint="use np.sort(a, axis=None)")
    _, ax = _axis(x, axis)
    write(self, Ellipsis, _sorted(x, ax))


def list_order(items: Tracer, keys: Tracer | None = None, reverse: bool = False
               ) -> Tracer:
    """The order Python's stable ``sorted`` puts a laid-out list's items in: by ``keys``
    (one number per item) when given; else by value, a list of tuples (rows) field by
    field. ``reverse`` keeps equal items in their order, as Python's does (so it is not
    the ascending order flipped)."""
    def ascending(x: Tracer) -> Tracer:
        if x.ndim == 1:
            return as_tracer(np.argsort(x, kind="stable"))
        fields = x.aval.shape[1]
        if x.ndim != 2 or not fields.is_const:
            raise current().error("sorting a list whose items are not numbers or tuples of "
                                  "numbers")
        return as_tracer(np.lexsort(tuple(x[:, k] for k in reversed(range(fields.value)))))

    by = items if keys is None else keys
    if not reverse:
        return ascending(by)
    n = by.shape[0]
    return as_tracer((n - 1 - ascending(by[::-1]))[::-1])


def _kth(kth: Any, length: DimExpr, total: DimExpr) -> None:
    """NumPy's check that every ``kth`` is an index of the axis (negative ones count
    from the end), made only when the array (of ``total`` elements) is not empty. A sort
    puts every element in place, so only the check depends on ``kth``: at build time
    when everything is known, else while the kernel runs."""
    ctx = current()
    values = list(kth) if isinstance(kth, (list, tuple)) else \
        list(kth.ravel()) if isinstance(kth, np.ndarray) else [kth]
    may_be_empty = not (total - 1).is_nonneg()
    for k in values:
        if isinstance(k, Tracer) or (may_be_empty and isinstance(k, (int, np.integer)) \
                and not isinstance(k, (bool, np.bool_))):
            _traced_kth(as_tracer(k), length, total)
            continue
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise ctx.error(f"kth must be integers (got {k!r})")
        k = int(k)
        if k >= 0:  # NumPy's message names the kth and the axis length
            ctx.check("<", DimExpr.const(k), length, "ValueError",
                      f"kth(={k}) out of bounds ({{rhs}})")
        else:  # counted from the end: NumPy names kth + length, when that is known here
            shown = k + length.value if length.is_const else k
            ctx.check("<=", DimExpr.const(-k), length, "ValueError",
                      f"kth(={shown}) out of bounds ({{rhs}})")


def _traced_kth(kth: Tracer, length: DimExpr, total: DimExpr) -> None:
    """The bounds check of ``kth`` known only while the kernel runs (any shape: the
    message names the largest one past the end, else the smallest before the start)."""
    if kth.dtype.kind not in "iu":
        raise current().error("kth must be integers")
    n = lax.dim_value(length)
    k = lax.convert(kth, np.dtype(np.int64))
    shown = where(apply_ufunc(np.less, k, 0), apply_ufunc(np.add, k, n), k)
    if shown.ndim:
        high, low = max_(shown), min_(shown)
        shown = where(apply_ufunc(np.greater_equal, high, n), high, low)
    bad = apply_ufunc(np.logical_or, apply_ufunc(np.less, shown, 0),
                      apply_ufunc(np.greater_equal, shown, n))
    bad = apply_ufunc(np.logical_and, bad, apply_ufunc(np.greater, lax.dim_value(total), 0))
    lax.bind(raise_if_p, bad.atom, shown.atom, n.atom, error="ValueError",
             message="kth(={lhs}) out of bounds ({rhs})")


def _partitioned(prim: Primitive, name: str) -> Callable[..., Tracer]:
    """``np.partition``/``np.argpartition``: a sorted copy (or its order), one valid
    partition for every ``kth`` at once."""
    def partitioned(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                    order: Any = None) -> Tracer:
        _partition_kind(kind, order)
        x, ax = _axis(sortable(a, name), axis)
        _kth(kth, x.aval.shape[ax], size(x.aval.shape))
        return lax.bind1(prim, x.atom, axis=ax)
    return partitioned


partition = _partitioned(sort_p, "np.partition")
argpartition = _partitioned(argsort_p, "np.argpartition")


def partition_method(self: Tracer, kth: Any, axis: Any = -1, kind: str = "introselect",
                     order: Any = None) -> None:
    _partition_kind(kind, order)
    x, ax = _axis(sortable(self, "ndarray.partition"), axis)
    _kth(kth, x.aval.shape[ax], size(x.aval.shape))
    write(self, Ellipsis, lax.bind1(sort_p, x.atom, axis=ax))


def _partition_kind(kind: Any, order: Any) -> None:
    if order is not None:
        raise current().error("partition: order= applies to structured arrays, which "
                              "kernels do not take")
    if kind != "introselect":
        raise current().error(f"select kind must be 'introselect' (got {kind!r})")
