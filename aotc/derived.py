"""Sizes computed from scalar arguments: ``np.linspace(a, b, int(n))`` with a float ``n``,
``np.zeros(int(t / dt) + 1)``.

Buffers are planned before the kernel runs, from its size symbols. An integer that the
kernel computes at its top level from scalar arguments alone (arithmetic, conversions,
rounding, other sizes) and whole reductions of array arguments (``int(x.max()) + 1``:
``np.bincount``'s length) is known then too: its equations are copied into a small program
(a :class:`~aotc.ir.DimSource` with a ``program``) that both entry points evaluate next
to the other size symbols, and the integer becomes a size symbol of its own. One
computed inside a loop or branch, or from array contents, stays an error: its value is
not known before the kernel runs.
"""

from __future__ import annotations

import itertools

from .ir import DimSource, Eqn, Program, Var, nested_programs
from .ops.core import EFFECT, ELEMENTWISE
from .ops.reduce import REDUCTIONS
from .ops.shape import dim_value_p
from .shapes import DimExpr
from .tracer import TraceContext, Tracer, current

#: Derived size symbols are named ``$0``, ``$1``...
PREFIX = "$"
_COUNT = itertools.count()


def _root(ctx: TraceContext) -> TraceContext:
    while ctx.parent is not None:
        ctx = ctx.parent
    return ctx


def _scalar(eqn: Eqn, inputs: tuple[Var, ...]) -> bool:
    """An equation the entry points can evaluate before the kernel: on scalars, or a
    whole reduction of an input array (``x.max()``)."""
    if eqn.prim in _WHOLE and len(eqn.inputs) == 1 and eqn.inputs[0] in inputs:
        return eqn.outs[0].type.ndim == 0
    return (eqn.prim.has(ELEMENTWISE) or eqn.prim is dim_value_p) \
        and not eqn.prim.has(EFFECT) and not nested_programs(eqn) \
        and all(a.type.ndim == 0 for a in (*eqn.inputs, *eqn.outs))


_WHOLE = frozenset(REDUCTIONS.values())


def derived_size(value: Tracer) -> DimExpr | None:
    """``value`` (an integer scalar) as a size symbol computed from scalar arguments,
    or None when it depends on anything else."""
    if value.ndim != 0 or value.dtype.kind not in "iu" or not isinstance(value.atom, Var):
        return None
    root = _root(current())
    known = root.derived_for.get(value.atom)
    if known is not None:
        return known
    made = {out: eqn for eqn in root.eqns for out in eqn.outs}
    chosen: set[int] = set()
    pending = [value.atom]
    while pending:
        var = pending.pop()
        if var in root.kernel_inputs:  # a scalar, or an array a whole reduction reads
            continue
        eqn = made.get(var)
        if eqn is None or not _scalar(eqn, root.kernel_inputs):
            return None
        if id(eqn) not in chosen:
            chosen.add(id(eqn))
            pending += [a for a in eqn.inputs if isinstance(a, Var)]
    symbol = f"{PREFIX}{next(_COUNT)}"
    program = Program(tuple(root.kernel_inputs), tuple(e for e in root.eqns if id(e) in chosen),
                      (value.atom,), name=symbol)
    root.derived.append(DimSource(symbol, -1, None, program))
    dim = DimExpr.sym(symbol, signed=True)
    root.derived_for[value.atom] = dim
    return dim
