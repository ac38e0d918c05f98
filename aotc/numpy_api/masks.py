"""Boolean-mask selections ``x[mask]``: sizes that depend on the data.

A selection stays lazy, as the full array and its mask (the array's leading shape),
for as long as that is cheaper: combined with scalars or with selections under the
same mask, written back under it (``x[m] -= 1``, ``x[m] = y[m] * 2``: one whole-array
``where``), reduced (``np.sum(x[x > 0])``, ``x[m].mean()``: one fused pass, no
intermediate array). Anything that needs its items laid out (returning it, indexing
it, combining it with an array) materializes it: the mask's count is bound as a size
(at most the array's), then one ``compress`` pass fills the items in C order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ir import Lit
from ..ops.index import compress_p, raise_if_p
from ..shapes import DimExpr, size
from ..tracing.bodies import sequence_of
from ..tracing.tracer import Tracer, as_tracer, bind_dim, current, encloses
from .functions_base import where
from .ufuncs import BINARY_OPERATORS, apply_ufunc


def _visible(value: Tracer) -> bool:
    """Whether the trace running now may use ``value``: it was made here or in a trace
    around this one (not in a branch traced before, and finished)."""
    return encloses(value.context, current())


class MaskedValue:
    """``x[mask]``: the items of ``full`` where ``mask`` (``full``'s leading shape) is
    true, kept lazy until they must be laid out (:meth:`values`)."""

    def __init__(self, full: Tracer, mask: Tracer, list_like: bool = False) -> None:
        self.full, self.mask = full, mask
        self._values: Tracer | None = None
        #: A Python list (a filtered comprehension's): true when it has items.
        self.list_like = list_like

    # -- laid out ----------------------------------------------------------------------
    def count(self) -> Any:
        """How many items are kept (a Python int to NumPy: weak)."""
        count: Any = np.count_nonzero(self.mask)
        count.weak = True
        return count

    def values(self) -> Tracer:
        """The kept items as an array of runtime length (computed once per trace: laid
        out inside a branch, they are that branch's)."""
        if self._values is None or (not _visible(self._values) and _visible(self.full)
                                    and _visible(self.mask)):
            self._values = compress(self.full, self.mask, kept_count(self.mask))
        return self._values

    def expanded(self) -> Tracer:
        """The mask broadcast over ``full`` (for whole-array ``where`` s)."""
        extra = self.full.ndim - self.mask.ndim
        m = lax.reshape(self.mask, self.mask.aval.shape + (DimExpr.const(1),) * extra)
        return lax.broadcast_to(m, self.full.aval.shape) if extra else m

    # -- lazy arithmetic -----------------------------------------------------------------
    def _combine(self, ufunc: np.ufunc, other: Any, reflected: bool = False) -> Any:
        if isinstance(other, MaskedValue) and not same_value(other.mask, self.mask):
            other = other.values()  # other items: they line up only once laid out
        if isinstance(other, MaskedValue):
            other = other.full
        elif isinstance(other, Tracer) and other.ndim:  # an array of the items' length
            args = (other, self.values()) if reflected else (self.values(), other)
            return apply_ufunc(ufunc, *args)
        args = (other, self.full) if reflected else (self.full, other)
        return MaskedValue(apply_ufunc(ufunc, *args), self.mask)

    def __neg__(self) -> Any:
        return MaskedValue(apply_ufunc(np.negative, self.full), self.mask)

    def __abs__(self) -> Any:
        return MaskedValue(apply_ufunc(np.absolute, self.full), self.mask)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
                        ) -> Any:
        """``np.abs(x[m])``, ``np.maximum(x[m], y[m])``: the ufunc on the whole arrays,
        selected by the same mask (elements outside it are computed and never read)."""
        if method != "__call__" or kwargs or ufunc.nout != 1:
            return getattr(ufunc, method)(*_laid_out(inputs), **kwargs)
        if ufunc.nin == 1:
            return MaskedValue(apply_ufunc(ufunc, self.full), self.mask)
        first, other = inputs
        return first._combine(ufunc, other) if first is self else self._combine(ufunc, first,
                                                                                True)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: tuple[Any, ...],
                           kwargs: dict[str, Any]) -> Any:
        reduce = LAZY_REDUCTIONS.get(func)
        if reduce is not None and args and args[0] is self and len(args) == 1 \
                and not kwargs:
            return reduce(self)
        return func(*_laid_out(args), **{k: _laid_out(v) for k, v in kwargs.items()})

    # -- anything else: the laid-out items ------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        reduce = LAZY_METHODS.get(name)
        if reduce is not None:
            return lambda *args, **kwargs: reduce(self) if not args and not kwargs \
                else getattr(self.values(), name)(*args, **kwargs)
        if name == "dtype":
            return self.full.dtype
        if name == "size":
            return self.count() if self.full.ndim == self.mask.ndim else self.values().size
        return getattr(self.values(), name)

    def __getitem__(self, key: Any) -> Any:
        return self.values()[key]

    def __iter__(self) -> Any:
        return iter(self.values())


def kept_count(mask: Tracer) -> DimExpr:
    """How many elements of ``mask`` are true, bound as a size (at most its size)."""
    count: Any = np.count_nonzero(mask)
    return bind_dim(lax.convert(count, np.dtype(np.int64)), size(mask.aval.shape))


def compress(full: Tracer, mask: Tracer, kept: DimExpr) -> Tracer:
    """The items of ``full`` where ``mask`` (its leading shape, ``kept`` of them true)."""
    return lax.bind1(compress_p, full.atom, mask.atom, size=kept)


def _laid_out(value: Any) -> Any:
    if isinstance(value, MaskedValue):
        return value.values()
    if isinstance(value, (list, tuple)):
        return sequence_of(type(value), [_laid_out(v) for v in value])
    return value


def _masked_operators() -> None:
    for name, ufunc in BINARY_OPERATORS.items():
        setattr(MaskedValue, f"__{name}__", lambda s, o, u=ufunc: s._combine(u, o))
        setattr(MaskedValue, f"__r{name}__", lambda s, o, u=ufunc: s._combine(u, o, True))
        setattr(MaskedValue, f"__i{name}__", lambda s, o, u=ufunc: s._combine(u, o))
    for name, ufunc in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                        ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
        setattr(MaskedValue, f"__{name}__", lambda s, o, u=ufunc: s._combine(u, o))


_masked_operators()


# -- reductions of a selection: one pass over the whole array ---------------------------

def _filled(selection: MaskedValue, fill: Any) -> Tracer:
    return where(selection.expanded(), selection.full, fill)


def _extreme(reduce: Callable[..., Any], name: str, largest: bool) -> Callable[..., Any]:
    def extreme(selection: MaskedValue) -> Any:
        empty: Any = np.equal(np.count_nonzero(selection.expanded()), 0)
        lax.bind(raise_if_p, empty.atom, error="ValueError",
                 message=f"zero-size array to reduction operation {name} which has no "
                         "identity")
        dtype = selection.full.dtype
        fill: Any = (-np.inf if largest else np.inf) if dtype.kind == "f" else (
            (not largest) if dtype.kind == "b" else
            (np.iinfo(dtype).min if largest else np.iinfo(dtype).max))
        return reduce(_filled(selection, fill))
    return extreme


def _mean(selection: MaskedValue) -> Any:
    total: Any = np.sum(_filled(selection, 0))
    count = np.count_nonzero(selection.expanded())
    dtype = selection.full.dtype
    if dtype.kind == "f":  # NumPy's mean of floats keeps their dtype
        return np.true_divide(total, count).astype(dtype)
    return np.true_divide(total, count)


#: ``np.func(x[m])`` and ``x[m].method()`` computed from the whole array.
LAZY_REDUCTIONS: dict[Callable[..., Any], Callable[[MaskedValue], Any]] = {
    np.sum: lambda s: np.sum(_filled(s, 0)),
    np.prod: lambda s: np.prod(_filled(s, 1)),
    np.mean: _mean,
    np.max: _extreme(np.max, "maximum", True), np.amax: _extreme(np.max, "maximum", True),
    np.min: _extreme(np.min, "minimum", False), np.amin: _extreme(np.min, "minimum", False),
    np.any: lambda s: np.any(np.logical_and(s.expanded(), s.full)),
    np.all: lambda s: np.all(np.logical_or(np.logical_not(s.expanded()), s.full)),
    np.count_nonzero: lambda s: np.count_nonzero(np.logical_and(s.expanded(), s.full)),
}
LAZY_METHODS = {"sum": LAZY_REDUCTIONS[np.sum], "prod": LAZY_REDUCTIONS[np.prod],
                "mean": _mean, "max": LAZY_REDUCTIONS[np.max], "min": LAZY_REDUCTIONS[np.min],
                "any": LAZY_REDUCTIONS[np.any], "all": LAZY_REDUCTIONS[np.all]}


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


def read_masked(x: Tracer, mask: Any) -> MaskedValue:
    return MaskedValue(x, mask_for(x, mask))


def mask_for(x: Tracer, mask: Any) -> Tracer:
    """A boolean index for ``x``: its shape is ``x``'s leading shape (IndexError as
    NumPy when a size differs; checked at run time for sizes known only then)."""
    if isinstance(mask, MaskedValue):
        mask = mask.values()
    m = as_tracer(mask)
    ctx = current()
    if m.dtype != np.bool_:
        raise ctx.error("only boolean arrays can be used as masks here")
    if m.ndim > x.ndim:
        raise ctx.error(f"too many indices for array: array is {x.ndim}-dimensional, but "
                        f"{m.ndim} were indexed")
    want = x.aval.shape[:m.ndim]
    for axis, (have, size_) in enumerate(zip(m.aval.shape, want, strict=True)):
        ctx.check("==", size_, have, "IndexError",
                  f"boolean index did not match indexed array along axis {axis}; size of "
                  "axis is {lhs} but size of corresponding boolean axis is {rhs}")
    return lax.refine_shape(m, want)


def write_masked(target: Tracer, mask: Any, value: Any) -> None:
    """``target[mask] = value`` (a scalar, or the same selection of another array) as one
    whole-array write of ``where(mask, value, target)``."""
    selection = MaskedValue(target, mask_for(target, mask))
    if isinstance(value, MaskedValue):
        if not same_value(value.mask, selection.mask) or value.full.aval.shape != \
                target.aval.shape:
            raise current().error("x[mask] = y[other_mask]: the masks must be the same "
                                  "array", hint="assign y[other_mask] to a variable first")
        value = value.full
    target[...] = where(selection.expanded(),
                        lax.convert(as_tracer(value, target.dtype), target.dtype), target)
