"""Sizes computed from scalar arguments: ``np.linspace(a, b, int(n))`` with a float ``n``,
``np.zeros(int(t / dt) + 1)``.

Buffers are planned before the kernel runs, from its size symbols. An integer that the
kernel computes at its top level from scalar arguments alone (arithmetic, conversions,
rounding, other sizes) and whole reductions of array arguments (``int(x.max()) + 1``:
``np.bincount``'s length) is known then too: its equations are copied into a small program
(a :class:`~aotc.ir.DimSource` with a ``program``) that both entry points evaluate next
to the other size symbols, and the integer becomes a size symbol of its own.

When nothing else gives a size (``bind.size_value``'s last resort, a ``while`` loop's
appends), the program may also hold top-level loops, branches and array equations at
sizes known at entry: ``total += c`` over ``cnts`` then ``np.zeros(total)``, or a DP
table (``prev``) a ``while`` loop then walks. The entry points run that copy before the
kernel, its arrays in a scratch buffer of their own, once the kernel's checks on the
sizes known so far hold; an error the copy meets (an index out of range) is raised by
``P_shapes`` as a check (:func:`_reported`). A size computed inside a loop or branch
stays an error: its value is not known before the kernel runs.
"""

from __future__ import annotations

import itertools

from ..ir import Check, DimSource, Eqn, Program, Var, is_stateful, nested_programs, runtime_errors
from ..ops.core import EFFECT, ELEMENTWISE
from ..ops.index import python_number_p
from ..ops.reduce import REDUCTIONS
from ..ops.shape import dim_value_p
from ..shapes import DimExpr, bound_symbols
from .tracer import TraceContext, Tracer, current

#: Derived size symbols are named ``$0``, ``$1``...
PREFIX = "$"
_COUNT = itertools.count()


def _root(ctx: TraceContext) -> TraceContext:
    while ctx.parent is not None:
        ctx = ctx.parent
    return ctx


def _scalar(eqn: Eqn, inputs: tuple[Var, ...], loops: bool) -> bool:
    """An equation the entry points can evaluate before the kernel: on scalars, or a
    whole reduction of an input array (``x.max()``); with ``loops``, also loops,
    branches and array equations (``total += c`` over ``cnts``, a DP table a ``while``
    loop then reads)."""
    if eqn.prim in _WHOLE and len(eqn.inputs) == 1 and eqn.inputs[0] in inputs:
        return eqn.outs[0].type.ndim == 0
    if loops and (nested_programs(eqn) or any(v.type.ndim for v in (*eqn.inputs, *eqn.outs))):
        # a loop, a branch, or an array the entry points compute in a buffer of their own:
        # no random draws, sizes known at entry (errors inside bodies are reported)
        return not is_stateful(eqn) and not eqn.prim.has(EFFECT) and not _runtime_sized(eqn)
    return (eqn.prim.has(ELEMENTWISE) or eqn.prim in (dim_value_p, python_number_p)) \
        and not eqn.prim.has(EFFECT) and not nested_programs(eqn) \
        and all(a.type.ndim == 0 for a in (*eqn.inputs, *eqn.outs))


def _runtime_sized(eqn: Eqn) -> bool:
    """Sizes or offsets bound while the kernel runs (their checks are not copied)."""
    dims = [d for v in eqn.outs for d in v.type.shape]
    dims += [d for _, value in eqn.params for d in (value if isinstance(value, tuple)
                                                     else (value,))
             if isinstance(d, DimExpr)]
    return any(bound_symbols(d) for d in dims)


_WHOLE = frozenset(REDUCTIONS.values())


def _reported(root: TraceContext, program: Program) -> tuple[int, ...]:
    """The checks (1-based) the entry points report ``program``'s errors as, when it
    meets them computing the size: ``IndexError`` in ``total += cnts[i]`` is the
    kernel's own, raised before the kernel runs. Each is a check that always holds
    itself (``0 == 0``), with the error's message; ``P_shapes`` fails with it."""
    found = []
    for error, message in runtime_errors(program):
        check = Check("==", DimExpr.const(0), DimExpr.const(0), error, message)
        if check not in root.checks:
            root.checks.append(check)
        found.append(root.checks.index(check) + 1)
    return tuple(found)


def derived_size(value: Tracer, loops: bool = False) -> DimExpr | None:
    """``value`` (an integer scalar) as a size symbol computed from scalar arguments,
    or None when it depends on anything else (``loops``: on loops over the arguments
    too, which the entry points then run)."""
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
        if eqn is None or not _scalar(eqn, root.kernel_inputs, loops):
            return None
        if id(eqn) not in chosen:
            chosen.add(id(eqn))
            pending += [a for a in eqn.inputs if isinstance(a, Var)]
    symbol = f"{PREFIX}{next(_COUNT)}"
    program = Program(tuple(root.kernel_inputs), tuple(e for e in root.eqns if id(e) in chosen),
                      (value.atom,), name=symbol)
    root.derived.append(DimSource(symbol, -1, None, program, _reported(root, program)))
    dim = DimExpr.sym(symbol, signed=True)
    root.derived_for[value.atom] = dim
    return dim
