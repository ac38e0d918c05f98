"""Boolean-mask selections ``x[mask]``: sizes that depend on the data.

A selection is kept lazy, as the full array and its mask: it may be combined with
scalars and written back under the same mask (``x[mask] -= 1``, ``x[m] = y[m] * 2``),
which is one whole-array ``where``; anything that needs its elements laid out is a
build error saying what to write instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..ir import Lit
from ..trace import Tracer, as_tracer, current
from .functions_base import where
from .ufuncs import BINARY_OPERATORS, apply_ufunc, broadcast_all


class MaskedValue:
    """``x[mask]``: its size depends on the data, so it may only be combined with scalars
    and written back under the same mask (``x[mask] -= 1``, ``x[m] = y[m] * 2``)."""

    def __init__(self, full: Tracer, mask: Tracer) -> None:
        self.full, self.mask = full, mask

    def _combine(self, ufunc: np.ufunc, other: Any, reflected: bool = False) -> MaskedValue:
        if isinstance(other, MaskedValue):
            if not same_value(other.mask, self.mask):
                raise current().error("combining x[mask1] with y[mask2]: only the same mask "
                                      "lines elements up")
            other = other.full
        elif isinstance(other, Tracer) and other.ndim:
            raise current().error("combining a boolean-mask selection with an array: its "
                                  "size depends on the data",
                                  hint="use np.where(mask, x op y, x) on whole arrays")
        args = (other, self.full) if reflected else (self.full, other)
        return MaskedValue(apply_ufunc(ufunc, *args), self.mask)

    def __neg__(self) -> MaskedValue:
        return self._combine(np.multiply, -1)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
                        ) -> Any:
        """``np.abs(x[m])``, ``np.maximum(x[m], y[m])``: the ufunc on the whole arrays,
        selected by the same mask (elements outside it are computed and never read)."""
        if method != "__call__" or kwargs or ufunc.nout != 1:
            return NotImplemented
        if ufunc.nin == 1:
            return MaskedValue(apply_ufunc(ufunc, self.full), self.mask)
        first, other = inputs
        return first._combine(ufunc, other) if first is self else self._combine(ufunc, first,
                                                                                True)

    def __getattr__(self, name: str) -> Any:
        self.data_dependent()

    def data_dependent(self) -> Any:
        raise current().error(
            "a boolean-mask selection x[mask] has a size that depends on the data",
            hint="use np.where(mask, x, fill), np.sum(np.where(mask, x, 0)) or "
                 "np.count_nonzero(mask)",
        )



def _masked_operators() -> None:
    for name, ufunc in BINARY_OPERATORS.items():
        setattr(MaskedValue, f"__{name}__", lambda s, o, u=ufunc: s._combine(u, o))
        setattr(MaskedValue, f"__r{name}__", lambda s, o, u=ufunc: s._combine(u, o, True))
        setattr(MaskedValue, f"__i{name}__", lambda s, o, u=ufunc: s._combine(u, o))


_masked_operators()


def same_value(a: Tracer, b: Tracer) -> bool:
    """``a`` and ``b`` are the same value: one variable, or the same equation of the same
    inputs (``x[x > 0] = x[x > 0] - 1`` builds its mask twice)."""
    if a.atom is b.atom:
        return True
    made = {out: eqn for eqn in current().eqns for out in eqn.outs}

    def same(u: Any, v: Any, depth: int) -> bool:
        if u is v:
            return True
        if isinstance(u, Lit) or isinstance(v, Lit):
            return isinstance(u, Lit) and isinstance(v, Lit) and u.dtype == v.dtype \
                and bool(np.array_equal(u.value, v.value, equal_nan=True))
        e, f = made.get(u), made.get(v)
        return depth > 0 and e is not None and f is not None and e.prim is f.prim \
            and e.params == f.params and len(e.inputs) == len(f.inputs) \
            and e.outs.index(u) == f.outs.index(v) \
            and all(same(x, y, depth - 1) for x, y in zip(e.inputs, f.inputs, strict=True))
    return same(a.atom, b.atom, 16)


def read_masked(x: Tracer, mask: Tracer) -> MaskedValue:
    return MaskedValue(x, _mask_for(x, mask))


def _mask_for(x: Tracer, mask: Any) -> Tracer:
    m = as_tracer(mask)
    if m.dtype != np.bool_:
        raise current().error("only boolean arrays can be used as masks here")
    if m.ndim > x.ndim:
        raise current().error("the mask has more dimensions than the array")
    m, _ = broadcast_all([m, x])
    return m


def write_masked(target: Tracer, mask: Any, value: Any) -> None:
    """``target[mask] = value`` as one whole-array write of ``where(mask, value, target)``."""
    if isinstance(value, MaskedValue):
        if value.mask is not mask and not same_value(value.mask, _mask_for(target, mask)):
            raise current().error("x[mask] = y[other_mask]: the masks must be the same array")
        value = value.full
    elif isinstance(value, Tracer) and value.ndim:
        raise current().error(
            "x[mask] = array assigns the array's elements to the selected places in order, "
            "which depends on the data",
            hint="use x[mask] = scalar, or x[mask] = y[mask] with the same mask",
        )
    m = mask.mask if isinstance(mask, MaskedValue) else _mask_for(target, mask)
    target[...] = where(m, lax.convert(as_tracer(value, target.dtype), target.dtype), target)
