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
    for name, ufunc in BINARY_OPERATORS.items():
        setattr(MaskedValue, f"__{name}__", lambda s, o, u=ufunc: s._combine(u, o))
        setattr(MaskedValue, f"__r{name}__", lambda s, o, u=ufunc: s._combine(u, o, True))
        setattr(MaskedValue, f"__i{name}__", lambda s, o, u=ufunc: s._combine(u, o))


_masked_operators()


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
    target[...] = where(m, lax.convert(as_tracer(value, target.dtype), target.dtype), target)
