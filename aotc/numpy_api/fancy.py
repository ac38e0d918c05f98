"""Integer-array ("fancy") indexing: ``x[idx]``, ``x[:, idx]``, ``x[rows, cols]``, and
writes through them (``x[idx] = v``, ``hist[bins] += 1``).

NumPy's rules: the index arrays (and integers beside them) broadcast together to one
shape ``B``, which replaces the indexed axes where they stand when they are adjacent
and goes first otherwise; the result is a copy. A read is one ``take`` (several index
arrays are first combined into one index over the indexed axes, checked per axis). A
write is a loop over the ``B`` positions, each a plain element write (so with repeated
indices the last write wins, as NumPy's does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p, take_p
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer, as_tracer, current
from . import selection
from .creation import iota
from .indexing import getitem, is_mask_key
from .joining import array
from .masks import MaskedValue, mask_for, same_value
from .shaping import transpose
from .ufuncs import broadcast_all
from .writes import write

I64 = np.dtype(np.int64)


def _is_index_array(item: Any) -> bool:
    if isinstance(item, Tracer):
        return item.ndim > 0 and item.dtype.kind in "iu"
    if isinstance(item, np.ndarray):
        return item.dtype.kind in "iu"
    # A list of indices (a list of bools is a mask: see ``getitem_any``).
    return isinstance(item, list) and not _bool_list(item)


def _bool_list(item: Any) -> bool:
    return isinstance(item, list) and bool(item) and all(
        isinstance(v, (bool, np.bool_)) for v in item)


def is_fancy_key(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return any(_is_index_array(item) for item in items)


class _Plan:
    """How a fancy key splits: a basic view ``view`` of the array (the indexed axes kept
    whole), the axes of ``view`` the index arrays ``indices`` (broadcast, int64) select
    along, and where the broadcast shape goes in the result."""

    def __init__(self, x: Tracer, key: Any) -> None:
        ctx = current()
        items = list(key) if isinstance(key, tuple) else [key]
        if sum(1 for k in items if k is Ellipsis) > 1:
            raise ctx.error("an index can only have a single ellipsis ('...')")
        used = sum(1 for k in items if k is not None and k is not Ellipsis)
        if used > x.ndim:
            raise ctx.error(f"too many indices: the array has rank {x.ndim}")
        at = next((i for i, k in enumerate(items) if k is Ellipsis), None)
        if at is not None:
            items[at:at + 1] = [slice(None)] * (x.ndim - used)
        else:
            items += [slice(None)] * (x.ndim - used)
        basic: list[Any] = []
        axes: list[int] = []
        arrays: list[Any] = []
        for item in items:
            if _is_index_array(item) or _is_integer(item):
                axes.append(len(basic))
                arrays.append(item)
                basic.append(slice(None))
            else:
                if isinstance(item, (Tracer, np.ndarray, bool)):
                    raise ctx.error("indexing with a boolean mask together with other "
                                    "indices is not supported yet",
                                    hint="index with the mask alone: x[mask]")
                basic.append(item)
        self.view: Tracer = getitem(x, tuple(basic), as_view=True)
        self.axes = axes
        indices = broadcast_all([_index_array(a) for a in arrays], "IndexError",
                                "shape mismatch: indexing arrays")
        self.shape = max((i.aval.shape for i in indices), key=len)
        self.indices = [lax.broadcast_to(i, self.shape) if i.aval.shape != self.shape else i
                        for i in indices]
        #: Adjacent indexed axes keep their place; otherwise the broadcast axes go first.
        self.in_place = axes == list(range(axes[0], axes[0] + len(axes)))

    def rest(self) -> list[int]:
        return [a for a in range(self.view.ndim) if a not in self.axes]

    def result_shape(self) -> tuple[DimExpr, ...]:
        dims = self.view.aval.shape
        rest = [dims[a] for a in self.rest()]
        at = self.axes[0] if self.in_place else 0
        before = [d for a, d in enumerate(dims) if a < at and a not in self.axes]
        return (*before, *self.shape, *rest[len(before):])


def _is_integer(item: Any) -> bool:
    if isinstance(item, Tracer):
        return item.ndim == 0 and item.dtype.kind in "iu"
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _index_array(item: Any) -> Tracer:
    if isinstance(item, list):
        item = array(item)
    index = as_tracer(item)
    if index.dtype.kind not in "iu":
        raise current().error(f"arrays used as indices must be of integer type, not "
                              f"{index.dtype}")
    return lax.convert(index, I64)


def _linear_index(plan: _Plan) -> tuple[Tracer, Tracer]:
    """The indexed axes of ``plan.view`` moved first and merged into one, and the one
    index into it: each index checked against its own axis (IndexError) and wrapped."""
    dims = plan.view.aval.shape
    merged = transpose(plan.view, (*plan.axes, *plan.rest()))
    count = DimExpr.const(1)
    for a in plan.axes:
        count = count * dims[a]
    merged = lax.reshape(merged, (count, *(dims[a] for a in plan.rest())))
    linear: Tracer | None = None
    for a, index in zip(plan.axes, plan.indices, strict=True):
        # Picking from 0..n-1 checks the index against its own axis and wraps negatives.
        wrapped = lax.bind1(take_p, iota(I64, (dims[a],), 0).atom, index.atom, axis=0)
        linear = wrapped if linear is None else linear * lax.dim_value(dims[a]) + wrapped
    assert linear is not None
    return merged, linear


def read(x: Tracer, key: Any) -> Tracer:
    """``x[key]`` with index arrays: a copy, shaped as NumPy shapes it."""
    plan = _Plan(x, key)
    if len(plan.axes) == 1:
        (axis,), (index,) = plan.axes, plan.indices
        picked = lax.bind1(take_p, plan.view.atom, index.atom, axis=axis)
        if plan.in_place:
            return picked
        k = len(plan.shape)
        order = (*range(axis, axis + k), *range(axis), *range(axis + k, picked.ndim))
        return transpose(picked, order)
    merged, linear = _linear_index(plan)
    picked = lax.bind1(take_p, merged.atom, linear.atom, axis=0)  # B + rest
    if not plan.in_place or plan.axes[0] == 0:
        return picked
    k, at = len(plan.shape), plan.axes[0]
    order = (*range(k, k + at), *range(k), *range(k + at, picked.ndim))
    return transpose(picked, order)


def assign(x: Tracer, key: Any, value: Any,
           combine: Callable[[Tracer, Tracer], Tracer] | None = None) -> None:
    """``x[key] = value`` with index arrays: one element (or row) write per index, in
    order, through a loop. With ``combine``, each place gets ``combine(old, item)``
    instead (``np.add.at``: unbuffered, so a repeated index sees the earlier updates),
    and ``value`` keeps its own dtype."""
    plan = _Plan(x, key)
    target = plan.result_shape()
    v = as_tracer(value, None if isinstance(value, Tracer) or combine else x.dtype)
    v = v if combine else lax.convert(v, x.dtype)
    v = lax.broadcast_to(v, target) if v.aval.shape != target else v
    k = len(plan.shape)
    if plan.in_place and plan.axes[0]:  # the broadcast axes first, then the others
        at = plan.axes[0]
        v = transpose(v, (*range(at, at + k), *range(at), *range(at + k, v.ndim)))
    count = size(plan.shape)
    rows = lax.reshape(v, (count, *v.aval.shape[k:]))
    flat = [lax.reshape(index, (count,)) for index in plan.indices]
    view = plan.view

    def body(j: Tracer, carry: Any) -> Any:
        key_j: list[Any] = [slice(None)] * view.ndim
        for axis, index in zip(plan.axes, flat, strict=True):
            key_j[axis] = getitem(index, j)
        item = getitem(rows, j)
        write(view, tuple(key_j), combine(getitem(view, tuple(key_j)), item) if combine
              else item)
        return carry

    lax.fori_loop(0, lax.dim_value(count), body, 0)


def _masks_among_indices(x: Tracer, key: Any) -> Any:
    """A boolean array among other indices (``A[labels == i, j]``) as NumPy reads it:
    its ``nonzero()`` positions, one index array per axis it covers (which must have
    its sizes: NumPy's IndexError)."""
    if not isinstance(key, tuple) or len(key) < 2:
        return key
    items: list[Any] = []
    for at, item in enumerate(key):
        if not _is_mask_like(item):
            items.append(item)
            continue
        mask = as_tracer(np.asarray(item) if isinstance(item, list) else item)
        axis = _axis_of(x, key, at)
        for d, n in enumerate(mask.aval.shape):
            current().check("==", n, x.aval.shape[axis + d], "IndexError",
                            "boolean index did not match indexed array along axis "
                            f"{axis + d}; size of axis is {{rhs}} but size of corresponding "
                            "boolean axis is {lhs}")
        items += selection.nonzero(mask)
    return tuple(items)


def _axis_of(x: Tracer, key: tuple[Any, ...], at: int) -> int:
    """The first axis of ``x`` item ``at`` of ``key`` indexes."""
    def width(item: Any) -> int:
        return 0 if item is None else int(np.ndim(item)) if _is_mask_like(item) else 1
    if any(k is Ellipsis for k in key[:at]):  # (the items after it end at the last axis)
        return x.ndim - sum(width(k) for k in key[at:])
    return sum(width(k) for k in key[:at])


def _is_mask_like(item: Any) -> bool:
    """A boolean array (or list of bools) among a key's items."""
    return _bool_list(item) or (is_mask_key(item) and not isinstance(item, MaskedValue)
                                and item.ndim > 0)


def getitem_any(x: Tracer, key: Any) -> Any:
    """``x[key]``: basic indexing, or fancy indexing when the key holds index arrays."""
    if isinstance(key, Tracer) and key.tuple_like:
        raise current().error("indexing with a tuple of runtime length (tuple(a) of an "
                              "array whose size is known only at run time)",
                              hint="index with the items (x[a[0], a[1]]), or give the "
                                   "array a fixed size (i8[2])")
    key = np.asarray(key) if _bool_list(key) else _masks_among_indices(x, key)  # [True, False]
    return read(x, key) if is_fancy_key(key) else getitem(x, key)


def setitem_any(x: Tracer, key: Any, value: Any) -> None:
    if x.whole_reshape and x.base is not None:  # (it writes through, with any key)
        return write(x, key, value)
    key = np.asarray(key) if _bool_list(key) else _masks_among_indices(x, key)
    if is_fancy_key(key):
        return assign(x, key, value)
    if is_mask_key(key) and _items_in_order(key, value):
        return _assign_selected(x, key, value)
    return write(x, key, value)


def _items_in_order(mask: Any, value: Any) -> bool:
    """``x[mask] = value`` gives the selected places ``value`` 's items in order (not one
    scalar, nor the same selection of another array, which are whole-array writes)."""
    if isinstance(value, MaskedValue):
        return not isinstance(mask, MaskedValue) and not (
            isinstance(mask, Tracer) and same_value(value.mask, mask))
    return (isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) > 0) or (
        isinstance(value, Tracer) and value.ndim > 0)


def _assign_selected(x: Tracer, mask: Any, value: Any) -> None:
    """``x[mask] = y``: y's items into the true places, in order (NumPy's ValueError when
    y has neither that many items nor one)."""
    m = mask_for(x, mask)
    places = selection.nonzero(m)
    items = as_tracer(value.values() if isinstance(value, MaskedValue) else value)
    items = lax.reshape(items, (size(items.aval.shape),)) if items.ndim != 1 else items
    count, given = places[0].aval.shape[0], items.aval.shape[0]
    if given != count and not (given.is_const and given.value == 1):
        n, k = lax.dim_value(given), lax.dim_value(count)
        bad: Any = np.logical_and(np.not_equal(n, k), np.not_equal(n, 1))
        lax.bind(raise_if_p, bad.atom, n.atom, k.atom, error="ValueError",
                 message="NumPy boolean array indexing assignment cannot assign {lhs} input "
                         "values to the {rhs} output values where the mask is true")
        # One item broadcasts to every place, as in NumPy; otherwise item j goes to place j.
        source: Any = np.minimum(iota(I64, (count,), 0), np.subtract(n, 1))
        items = lax.bind1(take_p, items.atom, source.atom, axis=0)
    assign(x, tuple(places), items)
