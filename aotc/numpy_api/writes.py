"""Views and writes: ``x[...] = v``, ``x += v`` and writes seen through views.

Values in the IR are immutable, so a write produces a new version of the written
array's *base* (``update_slice``), as in a functional array language; buffer planning
later turns the versions back into in-place stores. A view remembers its base and a
:class:`Window` (where its elements sit in the base); reading a view after its base
changed re-derives it, and writing through it updates the base, so
``u = U[1:-1]; u += 1; return U`` means what it means in NumPy.

Views whose aliasing NumPy decides from memory layout at run time (``reshape``,
``ravel``, ``broadcast_to``) are tracked without a window: writing through them, or
reading them after their base changed, is a build error asking for ``.copy()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import lax
from ..ops.shape import update_slice_p
from ..shapes import DimExpr, Shape
from ..trace import Tracer, current

ONE = DimExpr.const(1)


@dataclass(frozen=True)
class Window:
    """Base axis ``r`` holds view axis ``axis_of[r]`` at ``start[r] + step[r] * i``, or is
    fixed at ``start[r]`` when ``axis_of[r]`` is None. View axes that no base axis holds
    are inserted unit axes."""

    start: tuple[DimExpr, ...]
    step: tuple[int, ...]
    axis_of: tuple[int | None, ...]
    view_shape: Shape

    @staticmethod
    def identity(shape: Shape) -> Window:
        n = len(shape)
        return Window((DimExpr.const(0),) * n, (1,) * n, tuple(range(n)), tuple(shape))

    def sliced(self, starts: tuple[DimExpr, ...], steps: tuple[int, ...],
               sizes: Shape) -> Window:
        start, step = list(self.start), list(self.step)
        for r, a in enumerate(self.axis_of):
            if a is not None:
                start[r] = start[r] + starts[a] * step[r]
                step[r] = step[r] * steps[a]
        return replace(self, start=tuple(start), step=tuple(step), view_shape=tuple(sizes))

    def transposed(self, perm: tuple[int, ...]) -> Window:
        inverse = {old: new for new, old in enumerate(perm)}
        return replace(self, axis_of=tuple(None if a is None else inverse[a]
                                           for a in self.axis_of),
                       view_shape=tuple(self.view_shape[p] for p in perm))

    def reshaped(self, new_shape: Shape) -> Window | None:
        """Only insertions and removals of unit axes keep a window."""
        old_real = [i for i, d in enumerate(self.view_shape) if d != ONE]
        new_real = [i for i, d in enumerate(new_shape) if d != ONE]
        if [self.view_shape[i] for i in old_real] != [new_shape[i] for i in new_real]:
            return None
        moved = dict(zip(old_real, new_real, strict=True))
        return replace(self, axis_of=tuple(moved.get(a) if a is not None else None
                                           for a in self.axis_of),
                       view_shape=tuple(new_shape))

    # -- moving values between the view's layout and the base window's layout ---------
    def _mapped(self) -> list[int]:
        return [r for r, a in enumerate(self.axis_of) if a is not None]

    def _sizes(self) -> Shape:
        return tuple(ONE if a is None else self.view_shape[a] for a in self.axis_of)

    def read(self, base: Tracer) -> Tracer:
        mapped = self._mapped()
        axes = [a for a in self.axis_of if a is not None]  # the view axis of each mapped one
        x = lax.slice_(base, self.start, self.step, self._sizes())
        x = lax.reshape(x, tuple(x.aval.shape[r] for r in mapped))
        order = sorted(range(len(mapped)), key=lambda k: axes[k])
        x = lax.transpose(x, tuple(order))
        return lax.reshape(x, self.view_shape)

    def write(self, base: Tracer, value: Tracer) -> Tracer:
        axes = [a for a in self.axis_of if a is not None]  # the view axis of each mapped one
        view_axes = sorted(axes)
        v = lax.reshape(value, tuple(self.view_shape[a] for a in view_axes))
        position = {a: k for k, a in enumerate(view_axes)}
        v = lax.transpose(v, tuple(position[a] for a in axes))
        v = lax.reshape(v, self._sizes())
        return lax.bind1(update_slice_p, base.atom, v.atom, start=self.start, step=self.step)


# -- view tracking on tracers ---------------------------------------------------------------

def make_view(source: Tracer, result: Tracer, window_op: Callable[[Window], Window | None]
              ) -> Tracer:
    """Mark ``result`` (just computed from ``source``) as a view of ``source``'s base."""
    base = source.base if source.base is not None else source
    window = source.window if source.base is not None else Window.identity(source.aval.shape)
    result.base = base
    result.window = window_op(window) if window is not None else None
    result.seen_version = base.version
    return result


def layout_view(source: Tracer, result: Tracer) -> Tracer:
    """A view whose aliasing depends on memory layout (reshape, ravel, broadcast_to)."""
    return make_view(source, result, lambda w: None)


def refresh(view: Tracer) -> None:
    """Re-derive a view whose base was written since the view was read."""
    base = view.base
    assert base is not None
    if view.window is None:
        raise current().error(
            "this array came from reshape/ravel/broadcast_to of an array that was written "
            "afterwards; whether it sees the write depends on memory layout in NumPy",
            hint="call .copy() on it before the write, or reshape after writing",
        )
    view.set_atom(view.window.read(base).atom)
    view.seen_version = base.version


def write(target: Tracer, key: Any, value: Any) -> None:
    """``target[key] = value`` with NumPy's casting and broadcasting."""
    from .indexing import getitem, is_mask_key
    from .ufuncs import as_tracer, broadcast_all

    ctx = current()
    if is_mask_key(key):
        return write_masked(target, key, value)
    keys = key if isinstance(key, tuple) else (key,)
    if any(_runtime(k) for k in keys):
        return _write_runtime(target, key, value)
    region = getitem(target, key) if key is not Ellipsis else target
    if region.window is None and region.base is not None:
        raise ctx.error("writing through a reshape/ravel/broadcast_to view: NumPy decides "
                        "from memory layout whether the original changes",
                        hint="write into the original array with an index instead")
    new = as_tracer(value, None if isinstance(value, Tracer) else region.dtype)
    if isinstance(value, Tracer) and value.base is not None and value.base is region.base \
            and value.window == region.window and value.seen_version == region.base.version:
        return None  # ``U[k] += v`` already wrote through the view U[k]
    new = lax.convert(new, region.dtype)  # assignment casts unsafely, as NumPy's does
    _, new = broadcast_all([region, new]) if new.ndim else (region, new)
    if new.ndim == 0:
        new = lax.broadcast_to(new, region.aval.shape)
    if new.aval.shape != region.aval.shape:
        raise ctx.error(f"could not broadcast a value of shape {new.aval.shape} into "
                        f"a region of shape {region.aval.shape}")
    base = region.base if region.base is not None else region
    if region is target and target.base is None and key is Ellipsis \
            and base.context is ctx:  # a whole new value for a base: no update_slice
        base.set_atom(new.atom)
        base.version += 1
        return None
    if base.context is not ctx:
        raise ctx.error("writing into an array from outside this loop body or branch",
                        hint="pass the array through the loop state (the carry) and "
                             "return the updated version")
    window = region.window if region.base is not None else Window.identity(base.aval.shape)
    base.set_atom(window.write(base, new).atom)
    base.version += 1
    return None


def _runtime(item: Any) -> bool:
    from .indexing import _is_runtime_index

    return _is_runtime_index(item)


def _write_runtime(target: Tracer, key: Any, value: Any) -> None:
    """``y[i] = v`` with a runtime ``i``: a ``dynamic_update_slice`` of the region."""
    from ..ops.index import dynamic_update_slice_p
    from .indexing import getitem, runtime_starts, split_runtime_indices
    from .ufuncs import as_tracer

    static, runtime = split_runtime_indices(target, key)
    region = getitem(target, tuple(static))
    starts = runtime_starts(region, runtime)
    block_shape = tuple(d for a, d in enumerate(region.aval.shape) if a not in runtime)
    new = lax.convert(as_tracer(value, None if isinstance(value, Tracer) else region.dtype),
                      region.dtype)
    if new.aval.shape != block_shape:
        new = lax.broadcast_to(new, block_shape) if new.ndim <= len(block_shape) else new
    if new.aval.shape != block_shape:
        raise current().error(f"could not broadcast a value of shape {new.aval.shape} into "
                              f"a region of shape {block_shape}")
    sizes = tuple(ONE if a in runtime else d for a, d in enumerate(region.aval.shape))
    block = lax.reshape(new, sizes)
    updated = lax.bind1(dynamic_update_slice_p, region.atom, block.atom,
                        *(s.atom for s in starts))
    if region is target and target.base is None:
        if target.context is not current():
            raise current().error("writing into an array from outside this loop body or "
                                  "branch", hint="pass the array through the loop state "
                                                 "(the carry) and return the updated version")
        target.set_atom(updated.atom)
        target.version += 1
        return
    write(region, Ellipsis, updated)


def _check_same_kind(value: Tracer, dtype: np.dtype, what: str) -> None:
    from .ufuncs import dtype_arg

    kind = dtype_arg(value)
    if isinstance(kind, type):  # weak: NumPy checks the value fits, we keep the kind rule
        kind = np.dtype(kind)
        if kind.kind in "iub" and dtype.kind in "iub" or kind.kind == "b":
            return
    if not np.can_cast(kind, dtype, "same_kind"):
        raise current().error(f"cannot {what} {kind} values into a {dtype} array with "
                              "casting rule 'same_kind'",
                              hint=f"convert explicitly with .astype(np.{dtype})")


def inplace(ufunc: np.ufunc) -> Callable[[Tracer, Any], Tracer]:
    """``x op= v``: compute, cast back with 'same_kind', write into ``x`` itself."""
    def op(self: Tracer, other: Any) -> Tracer:
        from .ufuncs import apply_ufunc

        result = apply_ufunc(ufunc, self, other)
        _check_same_kind(result, self.dtype, f"write np.{ufunc.__name__} of")
        write(self, Ellipsis, result)
        return self
    return op


# -- masked assignment -----------------------------------------------------------------------

class MaskedValue:
    """``x[mask]``: its size depends on the data, so it may only be combined with scalars
    and written back under the same mask (``x[mask] -= 1``, ``x[m] = y[m] * 2``)."""

    def __init__(self, full: Tracer, mask: Tracer) -> None:
        self.full, self.mask = full, mask

    def _combine(self, ufunc: np.ufunc, other: Any, reflected: bool = False) -> MaskedValue:
        from .ufuncs import apply_ufunc

        if isinstance(other, MaskedValue):
            if other.mask is not self.mask:
                raise current().error("combining x[mask1] with y[mask2]: only the same mask "
                                      "object lines elements up")
            other = other.full
        elif isinstance(other, Tracer) and other.ndim:
            raise current().error("combining a boolean-mask selection with an array: its "
                                  "size depends on the data",
                                  hint="use np.where(mask, x op y, x) on whole arrays")
        args = (other, self.full) if reflected else (self.full, other)
        return MaskedValue(apply_ufunc(ufunc, *args), self.mask)

    def __neg__(self) -> MaskedValue:
        return self._combine(np.multiply, -1)

    def __getattr__(self, name: str) -> Any:
        self.data_dependent()

    def data_dependent(self) -> Any:
        raise current().error(
            "a boolean-mask selection x[mask] has a size that depends on the data",
            hint="use np.where(mask, x, fill), np.sum(np.where(mask, x, 0)) or "
                 "np.count_nonzero(mask)",
        )

    __array_ufunc__ = None


def _masked_operators() -> None:
    from .ufuncs import _BINARY_OPERATORS

    for name, ufunc in _BINARY_OPERATORS.items():
        if name == "matmul":
            continue
        setattr(MaskedValue, f"__{name}__", lambda s, o, u=ufunc: s._combine(u, o))
        setattr(MaskedValue, f"__r{name}__", lambda s, o, u=ufunc: s._combine(u, o, True))
        setattr(MaskedValue, f"__i{name}__", lambda s, o, u=ufunc: s._combine(u, o))


_masked_operators()


def read_masked(x: Tracer, mask: Tracer) -> MaskedValue:
    return MaskedValue(x, _mask_for(x, mask))


def _mask_for(x: Tracer, mask: Any) -> Tracer:
    from .ufuncs import as_tracer, broadcast_all

    m = as_tracer(mask)
    if m.dtype != np.bool_:
        raise current().error("only boolean arrays can be used as masks here")
    if m.ndim > x.ndim:
        raise current().error("the mask has more dimensions than the array")
    m, _ = broadcast_all([m, x])
    return m


def write_masked(target: Tracer, mask: Any, value: Any) -> None:
    from .functions_base import where

    if isinstance(value, MaskedValue):
        if value.mask is not mask and value.mask.atom != _mask_for(target, mask).atom:
            raise current().error("x[mask] = y[other_mask]: the masks must be the same array")
        value = value.full
    elif isinstance(value, Tracer) and value.ndim:
        raise current().error(
            "x[mask] = array assigns the array's elements to the selected places in order, "
            "which depends on the data",
            hint="use x[mask] = scalar, or x[mask] = y[mask] with the same mask",
        )
    m = mask.mask if isinstance(mask, MaskedValue) else _mask_for(target, mask)
    from .ufuncs import as_tracer

    write(target, Ellipsis, where(m, lax.convert(as_tracer(value, target.dtype), target.dtype),
                                  target))
