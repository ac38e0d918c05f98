"""Bounds on integers the kernel computes while it runs, for the sizes they give.

Buffers are planned before the kernel runs. A size computed inside it has no value then,
but often has a bound: ``np.arange(i + 1)`` in ``for i in range(n)`` has at most ``n``
elements, ``np.empty(count)`` after ``count += 1`` in a loop over ``x`` at most
``len(x)``, ``np.linspace(a, b, n + 1)`` after ``if n % 2: n += 1`` at most ``n + 2``.
Interval arithmetic over the traced equations finds such bounds; the size then becomes a
symbol bound while the kernel runs (:func:`aotc.tracing.tracer.bind_dim`) in a buffer planned
from the bound: the run-time allocation of Numba, at the price of the largest size.

Only int64 arithmetic is followed (sizes are int64; narrower integers may wrap, so they
are bounded by their dtype); floats are not. Loop-carried counts are bounded from their
change per iteration and the trip count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir import Var
from ..ops.elementwise import PRIM_OF_UFUNC
from ..ops.index import raise_if_p
from ..shapes import DimExpr, relu
from ..tracing.tracer import TraceContext, Tracer, bind_dim, current, dim_value
from .intervals import UNKNOWN, Interval, Scope
from .loops import counter_interval, exact_interval

I64 = np.dtype(np.int64)
ADD = PRIM_OF_UFUNC[np.add]


def scope_of(ctx: TraceContext) -> Scope:
    """The intervals of values in the trace ``ctx`` (a body reads captured values from
    the trace around it)."""
    outer: Callable[[Var], Interval] | None = None
    if ctx.parent is not None:
        parent = scope_of(ctx.parent)
        captured = {inner: outer_var for outer_var, inner in ctx.captures.items()}

        def outer(var: Var) -> Interval:
            found = captured.get(var)
            return parent.of(found) if isinstance(found, Var) else UNKNOWN
    return Scope(ctx.eqns, ctx.known, outer)


def interval_of(value: Tracer) -> Interval:
    return scope_of(current()).of(value.atom)


def bounded_size(value: Tracer) -> DimExpr | None:
    """``value`` (an integer scalar the kernel computes) as a size bound while the kernel
    runs, within the bounds :func:`interval_of` finds; None without an upper bound."""
    try:
        low, high = interval_of(value)
    except RecursionError:  # a chain too deep to follow gives no bound
        return None
    if high is None:
        return None
    ctx = current()
    v: Any = value if value.dtype == I64 else value.astype(I64)
    if low is None:
        negative = np.less(v, 0)
        ctx.emit(raise_if_p, [negative.atom], error="ValueError",
                 message="negative dimensions are not allowed")
        low = DimExpr.const(0)
    span = relu(high - low)
    offset = np.minimum(np.maximum(np.subtract(v, dim_value(low)), 0), dim_value(span))
    return bind_dim(offset, span) + low


def constant_gap(start: Tracer, stop: Tracer) -> DimExpr | None:
    """``stop - start`` when ``stop`` is ``start`` plus a value known exactly (``x[i:i +
    w]``: a window of at most ``w``), else None."""
    scope = scope_of(current())
    made = scope.made.get(stop.atom)  # type: ignore[arg-type]
    if made is None or made[0].prim is not ADD or start.atom not in made[0].inputs:
        return None
    a, b = made[0].inputs
    low, high = scope.of(b if a == start.atom else a)
    return low if low is not None and low == high else None


def loop_index_interval(ctx: TraceContext, low: Tracer, high: Tracer) -> Interval:
    """The index of ``fori_loop(low, high, ...)`` traced in ``ctx``."""
    scope = scope_of(ctx)
    return counter_interval(scope.of(low.atom), scope.of(high.atom), 1)


__all__ = ["bounded_size", "constant_gap", "exact_interval", "interval_of", "loop_index_interval"]
