"""Views: which array a tracer looks into, and where (the basis of NumPy's aliasing).

Values in the IR are immutable, so a write produces a new version of the written
array's *base* (``update_slice``, see :mod:`.writes`), as in a functional array
language; buffer planning later turns the versions back into in-place stores. A view
remembers its base and a :class:`Window` (where its elements sit in the base); reading
a view after its base changed re-derives it (:func:`refresh`), and writing through it
updates the base, so ``u = U[1:-1]; u += 1; return U`` means what it means in NumPy.

Views whose aliasing NumPy decides from memory layout at run time (``reshape``,
``ravel``, ``broadcast_to``) are tracked without a window: writing through them, or
reading them after their base changed, is a build error asking for ``.copy()``.

``z.real`` and ``z.imag`` of a complex array are views of one part of each element (a
float view at byte offset 0 or itemsize/2, in NumPy). Their window names that ``part``:
reading takes the part (the ``real``/``imag`` primitives, which fuse like any
elementwise op), writing puts the new part together with the other, unchanged one of
the base (``complex(v, imag(old))``), so ``z.imag += 1`` and ``z.real[0] = 0`` change ``z``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import lax
from ..ops.elementwise import complex_p, imag_p, real_p
from ..ops.index import PYTHON_NUMBER_BITS, c_contiguous_p, raise_if_p
from ..ops.shape import update_slice_p
from ..shapes import DimExpr, Shape, Step, size
from ..tracing.bind import select
from ..tracing.tracer import (
    DETACHED,
    CarriedApart,
    Tracer,
    as_tracer,
    current,
    encloses,
    tracing,
    user_loc,
)

ONE = DimExpr.const(1)


@dataclass(frozen=True)
class Window:
    """Base axis ``r`` holds view axis ``axis_of[r]`` at ``start[r] + step[r] * i``, or is
    fixed at ``start[r]`` when ``axis_of[r]`` is None. View axes that no base axis holds
    are inserted unit axes."""

    start: tuple[DimExpr, ...]
    step: tuple[Step, ...]
    axis_of: tuple[int | None, ...]
    view_shape: Shape
    #: The part of each complex element the view holds: 0 real, 1 imaginary, or None
    #: for the whole element.
    part: int | None = None

    @staticmethod
    def identity(shape: Shape) -> Window:
        n = len(shape)
        return Window((DimExpr.const(0),) * n, (1,) * n, tuple(range(n)), tuple(shape))

    def sliced(self, starts: tuple[DimExpr, ...], steps: tuple[Step, ...],
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
        x = lax.reshape(x, self.view_shape)
        if self.part is not None:
            x = lax.bind1((real_p, imag_p)[self.part], x.atom)
        return x

    def write(self, base: Tracer, value: Tracer) -> Tracer:
        axes = [a for a in self.axis_of if a is not None]  # the view axis of each mapped one
        view_axes = sorted(axes)
        v = lax.reshape(value, tuple(self.view_shape[a] for a in view_axes))
        position = {a: k for k, a in enumerate(view_axes)}
        v = lax.transpose(v, tuple(position[a] for a in axes))
        v = lax.reshape(v, self._sizes())
        if self.part is not None:  # the new part, with the other part of the old elements
            old = lax.slice_(base, self.start, self.step, self._sizes())
            other = lax.bind1((imag_p, real_p)[self.part], old.atom)
            re, im = (v, other) if self.part == 0 else (other, v)
            v = lax.bind1(complex_p, re.atom, im.atom)
        return lax.bind1(update_slice_p, base.atom, v.atom, start=self.start, step=self.step)


# -- view tracking on tracers ---------------------------------------------------------------



def refuse_detached(view: Tracer) -> None:
    if view.carried_apart:
        raise CarriedApart(
            "the loop writes into (or reads after a write) a view of an array that it also "
            "rebinds to another view (a, b = b, a of two views of one array, or of an array "
            "and its transpose), in a while loop or in a pattern that does not repeat every "
            "two trips: Python's write reaches the array, which the loop carries apart from "
            "the view", loc=user_loc(),
            kernel=current().kernel,
            hint="write through the array with an index the loop carries (buf[k] = ..., "
                 "k = 1 - k), or take a .copy() if the view should not change with it")
    raise current().error(
        "this array is a view that a runtime branch or loop chose (v = y[1:] if c else "
        "..., cur = y[i] in a loop), of arrays or windows that differ by path: which "
        "elements a write into it, or into the array it views, reaches is decided while "
        "the kernel runs",
        hint="write into the array itself (y[...] = ...), or take a .copy() if the view "
             "should not change with it")


def make_view(source: Tracer, result: Tracer, window_op: Callable[[Window], Window | None]
              ) -> Tracer:
    """Mark ``result`` (just computed from ``source``) as a view of ``source``'s base."""
    base = source.base if source.base is not None else source
    window = source.window if source.base is not None else Window.identity(source.aval.shape)
    return result.view_of(base, window_op(window) if isinstance(window, Window) else window)


def layout_view(source: Tracer, result: Tracer) -> Tracer:
    """A view whose aliasing depends on memory layout (reshape, ravel, broadcast_to)."""
    return make_view(source, result, lambda w: None)


def reshaped(x: Tracer, shape: Shape) -> Tracer:
    """``x`` in ``shape``, of the same size (checked where the kernel reshaped it, where
    the two sizes may be written apart: ``2 * (n // 2)`` is ``n`` there)."""
    flat = lax.refine_shape(lax.reshape(x, (size(x.aval.shape),)), (size(shape),))
    return lax.reshape(flat, tuple(shape))


def refresh(view: Tracer) -> None:
    """Re-derive a view whose base was written since the view was read.

    The view is re-derived where its base's value lives (``base.context``): a view of an
    outer array first read inside a loop body or branch is the outer array's view, so
    its slice belongs to the enclosing program. Derived in the body, the view would keep
    a value of the body's, which the code after the body cannot use.
    """
    base = view.base
    assert base is not None
    if view.window is DETACHED:
        refuse_detached(view)
    if view.window is None and view.whole_reshape and base.context is current():
        shape = view._atom.type.shape  # (not .aval: reading it would refresh again)
        view.seen_version = base.version
        whole = reshaped(base, shape)  # contiguous: a view
        if view.contiguous_arg is not None:  # of an argument: a view where it is C-contiguous
            flag = contiguous(base, view.contiguous_arg)
            if not view.copies_otherwise:
                refuse_unless_contiguous(flag)
            whole = select(flag, whole.atom, view._atom)
        view.set_atom(whole.atom)
        return
    if view.window is None:
        raise current().error(
            "this array came from reshape/ravel/broadcast_to of an array that was written "
            "afterwards; whether it sees the write depends on memory layout in NumPy",
            hint="call .copy() on it before the write, or reshape after writing",
        )
    here = current()
    owner = base.context if base.context is not None and encloses(base.context, here) \
        else here
    with tracing(owner):
        view.set_atom(view.window.read(base).atom)
    view.seen_version = base.version


def refuse_unless_contiguous(flag: Tracer) -> None:
    """NumPy's reshape of an argument that is not C-contiguous may be a view or a copy,
    depending on its strides: a write through it (or a read of it after a write into the
    argument) is a ValueError there, raised where it runs."""
    missing: Any = np.logical_not(flag)
    lax.bind(raise_if_p, missing.atom, error="ValueError",
             message="writing through a reshape of an argument that is not C-contiguous "
                     "(NumPy makes it a view or a copy depending on the strides); pass "
                     "np.ascontiguousarray(x), or write into a .copy() of the reshape")


def contiguous(argument: Tracer, index: int) -> Tracer:
    """Whether ``argument`` (parameter ``index``) is C-contiguous, as the call says (false
    past the 64 arguments it says it for). Asked of its value now, which is live here
    anyway: of the value it came in as, the question would keep that alive, and the
    writes into the argument could no longer be done in place."""
    if index >= PYTHON_NUMBER_BITS:
        return as_tracer(np.False_)
    return lax.bind1(c_contiguous_p, argument.atom, argument=index)
