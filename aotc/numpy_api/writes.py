"""Writes: ``x[...] = v``, ``x[i] = v`` with runtime ``i``, ``x[mask] = v``, ``x += v``.

A write makes a new version of the written array's base (see :mod:`.views`): a whole
new value, or an ``update_slice`` of the view's window in it (runtime indices are sizes
bound while the kernel runs, see :mod:`.indexing`). Values are cast as NumPy's
assignment casts them (unsafely), in-place operators with the 'same_kind' rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..shapes import DimExpr
from ..tracing.bind import refine_shape
from ..tracing.bodies import UNREPEATED, OuterWrite, unrepeated
from ..tracing.tracer import DETACHED, Tracer, as_tracer, current, encloses
from .creation import iota
from .functions_base import warn_complex_cast
from .indexing import getitem, is_mask_key
from .masks import write_masked
from .ufuncs import apply_ufunc, broadcast_into, dtype_arg
from .views import Window, contiguous, refuse_detached, refuse_unless_contiguous, reshaped

ONE = DimExpr.const(1)


#: NumPy's messages for a value that does not broadcast into the written region: of an
#: assignment, and of an in-place operator (``x += v``, whose result is the larger);
#: ``{lhs}`` is the value's size, ``{rhs}`` the region's.
ASSIGNED = ("could not broadcast input array from shape ({lhs},) into shape ({rhs},)",
            "could not broadcast input array into the region: size {lhs} against size {rhs}")
OPERATED = ("non-broadcastable output operand with shape ({rhs},) doesn't match the "
            "broadcast shape ({lhs},)", "non-broadcastable output operand: size {rhs} "
            "against the broadcast size {lhs}")


def write(target: Tracer, key: Any, value: Any,
          mismatch: tuple[str, str] = ASSIGNED) -> None:
    """``target[key] = value`` with NumPy's casting and broadcasting (``mismatch``: the
    messages for a value that does not fit, for a region of one axis and of more)."""
    ctx = current()
    if target.whole_reshape and target.base is not None:
        return _through_whole_reshape(target, key, value, mismatch)
    if is_mask_key(key):
        return write_masked(target, key, value)
    _widen_list(target, value)
    if target.window is DETACHED:
        refuse_detached(target)
    region = getitem(target, key, as_view=True) if key is not Ellipsis else target
    if region.window is None and region.base is not None:
        raise ctx.error("writing through a reshape/ravel/broadcast_to view: NumPy decides "
                        "from memory layout whether the original changes",
                        hint="write into the original array with an index instead")
    new = as_tracer(value, None if isinstance(value, Tracer) else region.dtype)
    if isinstance(value, Tracer) and value.base is not None and value.base is region.base \
            and value.window == region.window and value.seen_version == region.base.version:
        return None  # ``U[k] += v`` already wrote through the view U[k]
    warn_complex_cast(new.dtype, region.dtype)
    new = lax.convert(new, region.dtype)  # assignment casts unsafely, as NumPy's does
    new = broadcast_into(new, region.aval.shape, mismatch[region.ndim != 1])
    base = region.base if region.base is not None else region
    if region is target and target.base is None and key is Ellipsis \
            and base.context is ctx:  # a whole new value for a base: no update_slice
        base.set_atom(new.atom)
        base.version += 1
        return _through_path_aliases(base, None, new)
    if base.context is not ctx:
        raise OuterWrite(base)  # the enclosing construct carries it (aotc.tracing.bodies)
    window = region.window if region.base is not None else Window.identity(base.aval.shape)
    base.set_atom(window.write(base, new).atom)
    base.version += 1
    if ctx.at_top and id(base) in ctx.argument_ids:
        ctx.guards.written(ctx.eqns, ctx.checks)
    return _through_path_aliases(base, window, new)


def _through_whole_reshape(target: Tracer, key: Any, value: Any,
                           mismatch: tuple[str, str]) -> None:
    """A write into a reshape of all of an array the kernel made: NumPy's reshape of a
    C-contiguous array is a view, so the write reaches that array too (the written
    values, reshaped back, are its new value)."""
    base = target.base
    assert base is not None
    if base.context is not current():
        raise OuterWrite(base)  # the enclosing construct carries it (aotc.tracing.bodies)
    top = current()
    while top.parent is not None:
        top = top.parent
    if id(base) in top.argument_ids:  # of an argument: ``x.flat[k] = v``, a reshape's write
        shape = target.aval.shape
        if target.contiguous_arg is None:  # (.flat: whatever the layout)
            _written_flat(base, shape, key, value)
            target.set_atom(reshaped(base, shape).atom)
        else:  # a view where the argument is C-contiguous, as the call says
            own = Tracer(target.atom)
            own[key] = value
            flag = contiguous(base, target.contiguous_arg)
            if not target.copies_otherwise:
                refuse_unless_contiguous(flag)
            _written_flat(base, shape, key, value, only_if=flag)
            target.set_atom(own.atom)
        target.seen_version = base.version
        return
    own = Tracer(target.atom)  # the view's values, written as an array of their own
    own[key] = value  # (any key: fancy.setitem_any)
    whole = reshaped(own, base.aval.shape)
    base.set_atom(whole.atom)
    base.version += 1
    target.set_atom(own.atom)
    target.seen_version = base.version
    _through_path_aliases(base, None, whole)


def _written_flat(base: Tracer, shape: tuple[DimExpr, ...], key: Any, value: Any,
                  only_if: Tracer | None = None) -> None:
    """``x.flat[key] = value`` of an argument ``x`` (or ``x.reshape(shape)[key] = ...``):
    the flat positions ``key`` picks, unravelled into ``x``'s axes, written in place (a
    whole new value would reach the caller only as the kernel ends, after a ``raise``
    that may come first); with ``only_if``, where that holds (else the same positions
    get their own values back: still in place, where a ``cond`` would copy)."""
    axes = base.aval.shape
    mask = isinstance(key, Tracer) and is_mask_key(key) and key.ndim == len(shape)
    if mask and only_if is None:
        base[reshaped(key, axes)] = value  # in ``x``'s shape: C order is flat order
        return
    total = DimExpr.const(1)
    for d in axes:
        total = total * d
    positions: Any = np.flatnonzero(key) if mask else \
        reshaped(iota(np.dtype(np.int64), (total,), 0), shape)[key]  # (any key: a Tracer's)
    coords: list[Any] = []
    stride = DimExpr.const(1)
    for d in reversed(axes):
        step = np.maximum(lax.dim_value(stride), 1)
        coords.append(np.remainder(np.floor_divide(positions, step),
                                   np.maximum(lax.dim_value(d), 1)))
        stride = stride * d
    where = tuple(reversed(coords))
    if only_if is not None:
        value = np.where(only_if, value, base[where])
    base[where] = value  # (a fancy write: fancy.setitem_any)


def _through_path_aliases(base: Tracer, window: Window | None, new: Tracer) -> None:
    """Repeat a write into ``base`` (of ``new`` at ``window``; None: all of it) into
    each array it is on some paths (``aliases.path_aliased``), on those paths. There
    the two have the same sizes, whatever their symbols."""
    here = current()
    todo = [(other, on_path) for other, on_path in base.path_aliases
            if not any(other is t for t in UNREPEATED) and encloses(other.context, here)]
    if not todo:  # (an alias made in a branch that has ended: only its results remain)
        return
    # Each alias gets the write here: the writes repeated into them do not repeat it
    # into one another again (each into each, through every order: exponential).
    with unrepeated([base, *(other for other, _ in todo)]):
        for other, on_path in todo:
            def repeat(other: Tracer = other) -> None:
                if window is None:
                    whole = new
                else:
                    whole = window.write(refine_shape(other, base.aval.shape), new)
                write(other, Ellipsis, refine_shape(whole, other.aval.shape))
            lax.cond(on_path, repeat, lambda: None)


_KINDS = "biufc"


def _widen_list(target: Tracer, value: Any) -> None:
    """Writing a float into a Python list of ints makes the list hold floats (its other
    items keep their values): the list's array takes the wider dtype first."""
    base = target.base if target.base is not None else target
    if not base.list_like:
        return
    kind = value.dtype if isinstance(value, Tracer) else np.asarray(value).dtype
    if _KINDS.index(kind.kind) <= _KINDS.index(base.dtype.kind):
        return
    widened = lax.convert(base, np.result_type(base.dtype, kind))
    if base.context is not current():
        raise OuterWrite(base)  # the enclosing construct carries it, then widens it here
    base.set_atom(widened.atom)
    base.version += 1


def _same_kind_refused(value: Tracer, dtype: np.dtype) -> np.dtype | None:
    """The dtype of ``value`` when NumPy refuses to cast it into ``dtype`` by
    'same_kind'; None when it casts."""
    kind = dtype_arg(value)
    if isinstance(kind, type):  # weak: NumPy checks the value fits, we keep the kind rule
        kind = np.dtype(kind)
        if (kind.kind in "iub" and dtype.kind in "iub") or kind.kind == "b":
            return None
    return None if np.can_cast(kind, dtype, "same_kind") else np.dtype(kind)


def check_same_kind(value: Tracer, dtype: np.dtype, what: str) -> None:
    kind = _same_kind_refused(value, dtype)
    if kind is not None:
        raise current().error(f"cannot {what} {kind} values into a {dtype} array with "
                              "casting rule 'same_kind'",
                              hint=f"convert explicitly with .astype(np.{dtype})")


def inplace(ufunc: np.ufunc) -> Callable[[Tracer, Any], Tracer]:
    """``x op= v`` for a ufunc ``op``."""
    return inplace_with(lambda a, b: apply_ufunc(ufunc, a, b), f"np.{ufunc.__name__}")


def inplace_with(fn: Callable[[Tracer, Any], Tracer], name: str = "np.matmul"
                 ) -> Callable[[Tracer, Any], Tracer]:
    """``x op= v``: compute, cast back with 'same_kind', write into ``x`` itself. A
    result 'same_kind' refuses (``ints += 1.5``) is NumPy's TypeError where the statement
    runs, not a build error: a kernel exported for int and float arrays (Pythran's
    ``float[] or int[]``) raises for ints as Python does, and builds."""
    def op(self: Tracer, other: Any) -> Tracer:
        result = fn(self, other)
        if self.ndim == 0 and self.base is None:
            return result  # a scalar is immutable (a Python or NumPy number): += rebinds
        kind = _same_kind_refused(result, self.dtype)
        if kind is not None:  # NumPy's UFuncTypeError where the statement runs
            ufunc = name.removeprefix("np.")
            lax.bind(raise_if_p, as_tracer(True).atom, error="TypeError", message=(
                f"Cannot cast ufunc '{ufunc}' output from dtype('{kind}') to "
                f"dtype('{self.dtype}') with casting rule 'same_kind'"))
            return self
        write(self, Ellipsis, result, OPERATED)
        return self
    return op
