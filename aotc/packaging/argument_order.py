"""Which arguments a kernel reads after it starts writing another one.

A compiled kernel has value semantics: each argument is read as it was when the call
began, and writes into arguments are applied as the IR says (in place when no other
argument shares the bytes, else on a copy written back at the end). Python running the
same source sees memory instead: after ``f2[i, j] = ...`` a read of ``f1`` sees the
write when ``f1`` and ``f2`` are one array (``one_time_step(r, r)``). The two agree
unless an argument is read after an overlapping one was written, so for those pairs
the wrapper checks at call time that the two share no memory and raises a ValueError
naming them otherwise: never a silently different answer.

Positions are those of the kernel's top-level equations before fusion, one per
statement's operation: a loop or branch that both writes one argument and reads the
other counts; an elementwise ``x += y`` does not (NumPy's ufuncs read overlapping
inputs before writing, and the kernel writes an argument that shares memory on a copy).
Fusion makes several statements one loop, so the pairs are found before it
(:func:`record_orders`, a pass) and kept on the program.
"""

from __future__ import annotations

from ..ir import Program, Var, nested_programs
from ..ops.core import VIEW


def _descendants(program: Program, start: Var, views_only: bool) -> set[Var]:
    """``start`` and the values made from it (only through views, with ``views_only``)."""
    found = {start}
    for eqn in program.eqns:
        if (not views_only or eqn.prim.has(VIEW)) and any(a in found for a in eqn.inputs):
            found.update(eqn.outs)
    return found


def _ancestors(program: Program, atom: object) -> set[Var]:
    found = {atom} if isinstance(atom, Var) else set()
    for eqn in reversed(program.eqns):
        if any(o in found for o in eqn.outs):
            found.update(a for a in eqn.inputs if isinstance(a, Var))
    return found


def _first_write(program: Program, index: int, atom: object) -> int | None:
    """The position of the first equation on the way from argument ``index`` to the
    value written into it (or of the equation making that value, if it replaces the
    argument outright); None when the written value is made before anything else."""
    start = program.inputs[index]
    chain = _ancestors(program, atom)
    made_from_start = _descendants(program, start, views_only=False)
    positions = [p for p, eqn in enumerate(program.eqns)
                 if any(o in chain for o in eqn.outs)
                 and (any(a in made_from_start for a in eqn.inputs) or atom in eqn.outs)]
    return min(positions, default=None)


def record_orders(program: Program) -> Program:
    """``program`` with its :func:`order_conflicts` kept (before fusion)."""
    return program.replace(orders=tuple(order_conflicts(program)))


def order_conflicts(program: Program) -> list[tuple[int, int]]:
    """Pairs ``(written, read)`` of array arguments such that the kernel reads ``read``
    (or a view of it) after it starts writing ``written``."""
    if program.orders is not None:
        return list(program.orders)
    found: list[tuple[int, int]] = []
    for index, atom in program.writebacks:
        first = _first_write(program, index, atom)
        if first is None:
            continue
        for other, var in enumerate(program.inputs):
            if other == index or var.type.ndim == 0:
                continue
            views = _descendants(program, var, views_only=True)
            late = any(any(a in views for a in eqn.inputs)
                       and (p > first or (p == first and nested_programs(eqn)))
                       for p, eqn in enumerate(program.eqns))
            if late or any(a in views for a in program.outputs):
                found.append((index, other))
    return found
