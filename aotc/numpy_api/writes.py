"""Writes: ``x[...] = v``, ``x[i] = v`` with runtime ``i``, ``x[mask] = v``, ``x += v``.

A write makes a new version of the written array's base (see :mod:`.views`): a whole
new value, an ``update_slice`` of the view's window in it, or a
``dynamic_update_slice`` at runtime indices. Values are cast as NumPy's assignment casts
them (unsafely), in-place operators with the 'same_kind' rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import dynamic_update_slice_p
from ..shapes import DimExpr
from ..trace import Tracer, as_tracer, current
from .indexing import getitem, is_mask_key, is_runtime_index, runtime_starts, split_runtime_indices
from .masks import write_masked
from .ufuncs import apply_ufunc, broadcast_all, dtype_arg
from .views import Window

ONE = DimExpr.const(1)


def write(target: Tracer, key: Any, value: Any) -> None:
    """``target[key] = value`` with NumPy's casting and broadcasting."""
    ctx = current()
    if is_mask_key(key):
        return write_masked(target, key, value)
    keys = key if isinstance(key, tuple) else (key,)
    if any(is_runtime_index(k) for k in keys):
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


def _write_runtime(target: Tracer, key: Any, value: Any) -> None:
    """``y[i] = v`` with a runtime ``i``: a ``dynamic_update_slice`` of the region."""
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
    """``x op= v`` for a ufunc ``op``."""
    return inplace_with(lambda a, b: apply_ufunc(ufunc, a, b), f"np.{ufunc.__name__}")


def inplace_with(fn: Callable[[Tracer, Any], Tracer], name: str = "np.matmul"
                 ) -> Callable[[Tracer, Any], Tracer]:
    """``x op= v``: compute, cast back with 'same_kind', write into ``x`` itself."""
    def op(self: Tracer, other: Any) -> Tracer:
        result = fn(self, other)
        _check_same_kind(result, self.dtype, f"write {name} of")
        write(self, Ellipsis, result)
        return self
    return op
