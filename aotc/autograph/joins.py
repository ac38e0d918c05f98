"""Branches that give arrays of different sizes: ``if n == len(x): return x`` before
``return out`` (``out`` of another symbolic size).

Python returns whichever array the path made; a conditional in the IR has one type per
output. So each branch lays its array out flat at the front of a buffer with room for
either (:class:`Joined`: the buffer and the array's sizes), and after the conditional
the sizes become size symbols bound at run time and the array is the buffer's front,
reshaped (:meth:`Joined.laid_out`); an axis every branch gives the same size keeps it.
The array's rank and dtype must agree; its sizes must be bounded by the arguments' (as
every array's here). Any array among the values can be joined so, a tuple's too.
"""

from __future__ import annotations

import weakref
from typing import Any, cast

import numpy as np

from .. import lax
from ..ir import Atom
from ..numpy_api.creation import full_from_dims
from ..shapes import DimExpr, bound_symbols, relu, size, upper_bound
from ..tracing.aliases import outer_array
from ..tracing.avals import AType
from ..tracing.control import BranchTypes
from ..tracing.tracer import Tracer, bind_dim, current


class Joined:
    """An array of sizes ``dims`` at the front of ``buffer``."""

    def __init__(self, buffer: Tracer, dims: list[Tracer]) -> None:
        self.buffer, self.dims = buffer, dims



    def tree_flatten(self) -> tuple[list[Any], None]:
        return [self.buffer, *self.dims], None

    @classmethod
    def tree_unflatten(cls, meta: None, leaves: list[Any]) -> Joined:
        return cls(leaves[0], leaves[1:])

    def laid_out(self, join: Join) -> Tracer:
        sizes = tuple(common if common is not None else bind_dim(d, u)
                      for d, u, common in zip(self.dims, join.uppers, join.common,
                                              strict=True))
        total = DimExpr.const(1)
        for s in sizes:
            total = total * s
        front = self.buffer[:lax.dim_value(total)]
        return cast(Tracer, front.reshape(tuple(lax.dim_value(s) for s in sizes)))


class Join:
    """How one state slot's arrays of different sizes are joined: per-axis upper bounds
    and the buffer's length."""

    #: An array passed through in its own buffer (:meth:`passing`).
    through: Tracer | None = None

    def __init__(self, types: list[AType], inner: dict[str, DimExpr]) -> None:
        known = {**current().uppers(), **inner}
        first = types[0]
        #: Per axis, the size every branch gives it (when its symbols are known after
        #: the branches): kept as it is rather than bound anew, so ``(n, 2)`` joined with
        #: ``(n - 1, 2)`` is ``(@k, 2)``.
        self.common = tuple(
            first.shape[axis] if all(t.shape[axis] == first.shape[axis] for t in types)
            and not first.shape[axis].symbols() & set(inner) else None
            for axis in range(first.ndim))
        axes: list[DimExpr] = []
        for axis in range(first.ndim):
            highs = [upper_bound(t.shape[axis], known) for t in types]
            if any(h is None or bound_symbols(h) for h in highs):
                raise ValueError("unbounded")
            top = highs[0]
            for h in highs[1:]:
                assert top is not None and h is not None
                top = top + relu(h - top)  # max(top, h)
            assert top is not None
            axes.append(top)
        self.room(tuple(axes), first.dtype)

    def room(self, uppers: tuple[DimExpr, ...], dtype: np.dtype) -> None:
        """Per axis the room ``uppers``; the buffer's length and the Joined's width."""
        self.uppers = uppers
        self.length = size(uppers)
        self.dtype = dtype
        self.width = 1 + len(uppers)  # leaves of its Joined: the buffer, each size

    def pad(self, value: Any, into: Tracer | None = None) -> Joined:
        """An array at the front of a buffer of :attr:`length`: a new one, or ``into``
        (a buffer of that length whose front is overwritten). The array :attr:`through`
        is laid out in its own buffer as it is: nothing is written."""
        dims = [lax.dim_value(d) for d in value.aval.shape]
        if into is None and self.through is not None:
            into = self.through.base  # a new version of it (its old one is a value)
            assert into is not None
            if value is self.through:
                return Joined(Tracer(into.atom), dims)
        buffer = full_from_dims((self.length,), 0, self.dtype) if into is None \
            else Tracer(into.atom)
        flat = value.reshape(-1)
        buffer[:flat.shape[0]] = flat
        return Joined(buffer, dims)

    def passing(self, front: Tracer) -> None:
        """Lay the branches' arrays out in the buffer ``front`` is the front of (a
        resized array a loop carries): a branch that passes it through copies nothing,
        the others write a new version of that buffer rather than fill a new one. The
        loop's room bounds every size the array takes."""
        base = front.base
        assert base is not None
        self.room(base.aval.shape, self.dtype)
        self.through = front


#: Arrays a conditional laid out (:meth:`Joined.laid_out`), by id while they live, with
#: their value then and its Joined: a loop carrying one takes its buffer as it is.
_LAID_OUT: dict[int, tuple[weakref.ref[Tracer], Atom, Joined]] = {}


def remember_layout(value: Tracer, joined: Joined) -> None:
    _LAID_OUT[id(value)] = (weakref.ref(value), value.atom, joined)
    weakref.finalize(value, _LAID_OUT.pop, id(value), None)


def layout(value: Any) -> Joined | None:
    """The Joined ``value`` was laid out from, if it still holds that value."""
    ref, atom, joined = _LAID_OUT.get(id(value), (lambda: None, None, None))
    held = ref()
    return joined if held is not None and held is value and held.atom is atom else None


def operand_pairs(inner: list[list[Any]], outer: list[list[Any]]) -> list[tuple[Any, Any]]:
    """Each branch operand's leaves inside the branch with the values they stand for
    outside, variable by variable (a list the branch was handed laid out anew has no
    leaf-for-leaf counterpart, and its items are new values)."""
    return [pair for i, o in zip(inner, outer, strict=True) if len(i) == len(o)
            for pair in zip(i, o, strict=True)]


def outside(leaf: Any, pairs: list[tuple[Any, Any]]) -> Any:
    """The array from outside a branch that a leaf of its values is (an operand: see
    :func:`operand_pairs`, or an array it read), or None: a write into the joined array
    reaches that one on the branch's path (``aliases.path_aliased``)."""
    operand = next((before for inside, before in pairs if leaf is inside), None)
    return outer_array(leaf, operand, current().parent)


def joinable(mismatch: BranchTypes) -> Join | None:
    """A :class:`Join` when the branches' arrays differ only in sizes (and are bounded)."""
    types = mismatch.types
    first = types[0]
    if first.ndim == 0 or any(t.dtype != first.dtype or t.ndim != first.ndim
                              for t in types):
        return None
    try:
        return Join(types, mismatch.uppers)
    except ValueError:
        return None
